package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"stormsim/sim"
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

func replicated(t *testing.T, reps int) *sim.Scenario {
	t.Helper()
	s := scenario(t)
	s.Replications = reps
	return s
}

func TestReplicationsIdenticalForAnyWorkerCount(t *testing.T) {
	var first []byte
	for _, workers := range []int{1, 2, 3, 8} {
		doc, err := BuildParallel(replicated(t, 6), nil, workers)
		if err != nil {
			t.Fatal(err)
		}
		got, err := doc.JSON()
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = got
		} else if !bytes.Equal(got, first) {
			t.Errorf("workers=%d gave different bytes than workers=1", workers)
		}
	}
}

// TestReplicationsRunSuccessiveSeeds checks the summary against single
// runs of seeds seed, seed+1, ... built one by one.
func TestReplicationsRunSuccessiveSeeds(t *testing.T) {
	s := replicated(t, 4)
	doc, err := BuildParallel(s, nil, 3)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Replications == nil || !slices.Equal(doc.Replications.Seeds, []uint64{3, 4, 5, 6}) {
		t.Fatalf("replications %+v, want seeds 3..6", doc.Replications)
	}
	for p, spec := range s.Policies {
		var attempts, convergence []float64
		for rep := range 4 {
			r, err := RunOne(s, spec, s.Seed+uint64(rep))
			if err != nil {
				t.Fatal(err)
			}
			if rep == 0 && !equalJSON(t, r, doc.Results[p]) {
				t.Errorf("%s: Results is not the first replication's result", spec.Label)
			}
			attempts = append(attempts, float64(r.Attempts))
			convergence = append(convergence, *r.ConvergenceMs)
		}
		sum := doc.Summary[p]
		a, _ := sum.Metrics.Lookup("attempts")
		c, _ := sum.Metrics.Lookup("convergence_ms")
		if sum.Policy != spec.Label || !slices.Equal(a.Runs, attempts) || !slices.Equal(c.Runs, convergence) {
			t.Errorf("%s: summary runs %v %v, want %v %v", spec.Label, a.Runs, c.Runs, attempts, convergence)
		}
		if _, ok := sum.Metrics.Lookup("connect_ms.p99"); !ok {
			t.Errorf("%s: nested metric connect_ms.p99 missing from summary", spec.Label)
		}
	}
}

func equalJSON(t *testing.T, a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// TestOneReplicationKeepsTheOldDocument pins that replications: 1 writes
// exactly the document of one run per policy, with no new keys.
func TestOneReplicationKeepsTheOldDocument(t *testing.T) {
	s := replicated(t, 1)
	doc, err := BuildParallel(s, nil, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := New(s)
	for _, spec := range s.Policies {
		r, err := RunOne(s, spec, s.Seed)
		if err != nil {
			t.Fatal(err)
		}
		want.Results = append(want.Results, r)
	}
	got, _ := doc.JSON()
	wantJSON, _ := want.JSON()
	if !bytes.Equal(got, wantJSON) {
		t.Error("one replication changed the document")
	}
	if bytes.Contains(got, []byte(`"summary"`)) || bytes.Contains(got, []byte(`"replications": {`)) {
		t.Error("one replication wrote replication keys")
	}
}

func TestForEach(t *testing.T) {
	var calls atomic.Int64
	seen := make([]int, 100)
	if err := ForEach(100, 3, func(i int) error { calls.Add(1); seen[i]++; return nil }); err != nil {
		t.Fatal(err)
	}
	for i, n := range seen {
		if n != 1 {
			t.Fatalf("index %d ran %d times", i, n)
		}
	}
	errAt := func(bad ...int) func(int) error {
		return func(i int) error {
			if slices.Contains(bad, i) {
				return errors.New("bad " + string(rune('0'+i)))
			}
			return nil
		}
	}
	if err := ForEach(10, 1, errAt(3, 7)); err == nil || err.Error() != "bad 3" {
		t.Errorf("error %v, want the lowest failing index's", err)
	}
	err := ForEach(4, 2, func(i int) error {
		if i == 2 {
			panic("boom")
		}
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "run 2 panicked: boom") {
		t.Errorf("panic gave %v", err)
	}
	if err := ForEach(0, 4, errAt(0)); err != nil {
		t.Errorf("no work gave %v", err)
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
