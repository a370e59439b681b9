package plots

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkWriteSeedModel draws the three core charts of the seed model
// (62,391 windows for exponential backoff) as PNG and SVG.
func BenchmarkWriteSeedModel(b *testing.B) {
	run := seedModelRun()
	dir := b.TempDir()
	for b.Loop() {
		if _, err := Write(dir, run, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLTTB reduces a 1,000,000-window series to 2,000 points.
func BenchmarkLTTB(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	xs := make([]float64, 1_000_000)
	ys := make([]float64, len(xs))
	for i := range xs {
		xs[i] = float64(i)
		ys[i] = rng.ExpFloat64()
	}
	for b.Loop() {
		LTTB(xs, ys, 2000)
	}
	b.ReportMetric(float64(len(xs))*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mpoints/s")
}
