package results

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestSummarize(t *testing.T) {
	// Hand calculation. [5 1 4 2 3]: mean 3, sample variance 10/4, so std
	// sqrt(2.5); t(0.975, 4) = 2.7764451 (table value), half-width
	// 2.7764451 * sqrt(2.5) / sqrt(5) = 1.9632; nearest-rank p50 is the
	// 3rd smallest, p95 and p99 the 5th.
	s := Summarize("x", []float64{5, 1, 4, 2, 3})
	half := 2.7764451 * math.Sqrt(2.5) / math.Sqrt(5)
	checks := []struct {
		name      string
		got, want float64
	}{
		{"mean", s.Mean, 3}, {"std", s.Std, math.Sqrt(2.5)}, {"ci lo", s.CI95[0], 3 - half}, {"ci hi", s.CI95[1], 3 + half},
		{"p50", s.P50, 3}, {"p95", s.P95, 5}, {"p99", s.P99, 5}, {"min", s.Min, 1}, {"max", s.Max, 5},
	}
	for _, c := range checks {
		if math.Abs(c.got-c.want) > 1e-6 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if !slices.Equal(s.Runs, []float64{5, 1, 4, 2, 3}) {
		t.Errorf("runs %v must keep seed order", s.Runs)
	}
	// Twenty runs 1..20: p50 is the 10th, p95 the 19th, p99 the 20th.
	var twenty []float64
	for i := 20; i >= 1; i-- {
		twenty = append(twenty, float64(i))
	}
	if s := Summarize("y", twenty); s.P50 != 10 || s.P95 != 19 || s.P99 != 20 {
		t.Errorf("p50 %v p95 %v p99 %v, want 10 19 20", s.P50, s.P95, s.P99)
	}
	if one := Summarize("z", []float64{7}); one.Std != 0 || one.CI95[0] != 7 || one.CI95[1] != 7 || one.P95 != 7 {
		t.Errorf("single run: %+v", one)
	}
}

func TestMetricStatsJSONKeepsOrder(t *testing.T) {
	in := MetricStats{Summarize("zeta", []float64{1, 2}), Summarize("alpha", []float64{3, 4})}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte(`{"zeta":{"mean":1.5,`)) {
		t.Errorf("layout %s", data)
	}
	var out MetricStats
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[0].Name != "zeta" || out[1].Name != "alpha" || out[1].Max != 4 {
		t.Errorf("round trip %+v", out)
	}
}

func TestSummaryTable(t *testing.T) {
	doc := &Document{
		Replications: &Replications{Count: 2, Seeds: []uint64{4, 5}},
		Summary: []Summary{{Policy: "full", Metrics: MetricStats{
			{Name: "attempts", Mean: 5100.4, CI95: []float64{5000.4, 5200.4}},
			{Name: "convergence_ms", Mean: 4500, CI95: []float64{4400, 4600}},
		}}},
	}
	var b strings.Builder
	if err := doc.WriteSummaryTable(&b); err != nil {
		t.Fatal(err)
	}
	want := "\nover 2 replications (seeds 4..5): mean ± half-width of the 95% confidence interval\n" +
		"policy     attempts  last connect  connect p99\n" +
		"full    5,100 ± 100  4.5s ± 100ms            -\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	if (&Document{}).WriteSummaryTable(&b); b.Len() != 0 {
		t.Errorf("a single run wrote %q", b.String())
	}
}

// TestStatOfAnEmptyIntervalIsNoData pins that a summary without its
// interval (of no runs, or from a document that lacks it) has no
// ci95_lo or ci95_hi rather than a crash.
func TestStatOfAnEmptyIntervalIsNoData(t *testing.T) {
	for _, s := range []MetricStat{Summarize("x", nil), {Name: "x", CI95: []float64{}}, {Name: "x", CI95: []float64{1}}} {
		for _, stat := range []string{"ci95_lo", "ci95_hi"} {
			if v, ok := s.Stat(stat); ok {
				t.Errorf("%s of %+v = %v, want no data", stat, s, v)
			}
		}
	}
}
