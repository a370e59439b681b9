package sweep

import (
	"testing"
)

// BenchmarkSweep runs the speed target: 100 points x 10 replications x
// 10,000 clients (testdata/sweep-bench.yaml), with its CSV and charts, on
// all CPUs.
//
//	go test ./sweep -run '^$' -bench Sweep -benchtime 1x
func BenchmarkSweep(b *testing.B) {
	p, err := Load("../testdata/sweep-bench.yaml", 0)
	if err != nil {
		b.Fatal(err)
	}
	storms := p.Size * p.Replications * len(p.Labels)
	for i := 0; i < b.N; i++ {
		if _, err := p.Run(Options{Dir: b.TempDir()}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(storms*b.N)/b.Elapsed().Seconds(), "storms/s")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/sweep")
}
