package check

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"stormsim/results"
	"stormsim/sim"
)

func docWith(rs ...sim.Result) *results.Document {
	return &results.Document{SchemaVersion: results.SchemaVersion, Results: rs}
}

func TestCompareDriftsBothWays(t *testing.T) {
	base := docWith(sim.Result{Policy: "full", Attempts: 100, Accepted: 50, ConvergenceMs: msPtr(1000), Abandoned: 0})
	tests := []struct {
		name    string
		current sim.Result
		want    []string // drift lines
	}{
		{"within tolerance", sim.Result{Policy: "full", Attempts: 104, Accepted: 50, ConvergenceMs: msPtr(960)}, nil},
		{"exactly at tolerance", sim.Result{Policy: "full", Attempts: 105, Accepted: 50, ConvergenceMs: msPtr(950)}, nil},
		{"up", sim.Result{Policy: "full", Attempts: 106, Accepted: 50, ConvergenceMs: msPtr(1000)},
			[]string{"results[full].attempts: 100 in the baseline, 106 now (+6.00%)"}},
		{"down", sim.Result{Policy: "full", Attempts: 100, Accepted: 50, ConvergenceMs: msPtr(900)},
			[]string{"results[full].convergence_ms: 1000 in the baseline, 900 now (-10.00%)"}},
		{"from zero", sim.Result{Policy: "full", Attempts: 100, Accepted: 50, ConvergenceMs: msPtr(1000), Abandoned: 1},
			[]string{"results[full].abandoned: 0 in the baseline, 1 now (new non-zero value)"}},
		{"policy gone", sim.Result{Policy: "other", Attempts: 100, Accepted: 50, ConvergenceMs: msPtr(1000)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Compare(base, docWith(tt.current), 0.05)
			var got []string
			for _, d := range c.Drifts {
				got = append(got, d.String())
			}
			if tt.name == "policy gone" {
				if len(c.Drifts) != c.Compared || !c.Drifts[0].Missing || len(c.New) != c.Compared {
					t.Errorf("drifts %v, new %v: want every metric missing and new", got, c.New)
				}
				if want := "results[full].attempts: 100 in the baseline, no data now"; got[1] != want {
					t.Errorf("got %s, want %s", got[1], want)
				}
				return
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("drifts %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCompareToleranceZeroIsExact(t *testing.T) {
	base := docWith(sim.Result{Policy: "p", ConvergenceMs: msPtr(1000)})
	if c := Compare(base, docWith(sim.Result{Policy: "p", ConvergenceMs: msPtr(1000.000001)}), 0); len(c.Drifts) != 1 {
		t.Errorf("tolerance 0 missed a change: %+v", c)
	}
	if c := Compare(base, base, 0); len(c.Drifts) != 0 || len(c.New) != 0 || c.Compared == 0 {
		t.Errorf("a document drifted from itself: %+v", c)
	}
}

// TestCompareSeries pins the value-by-value comparison of series: each
// case's report line written by hand.
func TestCompareSeries(t *testing.T) {
	withSeries := func(attempts ...int64) *results.Document {
		return docWith(sim.Result{Policy: "full", Series: sim.Series{Attempts: attempts, Accepts: []int64{1, 1, 1}}})
	}
	base := withSeries(10, 20, 30)
	tests := []struct {
		name     string
		baseline *results.Document
		current  *results.Document
		compared int      // series of the baseline compared
		want     []string // drift lines
	}{
		{"identical", base, withSeries(10, 20, 30), 6, nil},
		{"within tolerance", base, withSeries(10, 21, 29), 6, nil},
		{"one value", base, withSeries(10, 20, 40), 6,
			[]string{"results[full].series.attempts: 1 of 3 values differ, the first at [2]: 30 in the baseline, 40 now (+33.33%)"}},
		{"two values, the first reported", base, withSeries(9, 20, 20), 6,
			[]string{"results[full].series.attempts: 2 of 3 values differ, the first at [0]: 10 in the baseline, 9 now (-10.00%)"}},
		{"longer now", base, withSeries(10, 20, 30, 5), 6,
			[]string{"results[full].series.attempts: 1 of 4 values differ (3 in the baseline, 4 now), the first at [3]: none in the baseline, 5 now"}},
		{"shorter now", base, withSeries(10, 20), 6,
			[]string{"results[full].series.attempts: 1 of 3 values differ (3 in the baseline, 2 now), the first at [2]: 30 in the baseline, none now"}},
		{"policy gone", base, docWith(sim.Result{Policy: "other"}), 6, []string{
			"results[full].series.attempts: 3 values in the baseline, no series now", "results[full].series.accepts: 3 values in the baseline, no series now",
			"results[full].series.rejects: 0 values in the baseline, no series now", "results[full].series.goodput: 0 values in the baseline, no series now",
			"results[full].series.wasted: 0 values in the baseline, no series now", "results[full].series.queue: 0 values in the baseline, no series now"}},
		{"a baseline without series compares none", docWith(sim.Result{Policy: "full"}), withSeries(10, 20, 30), 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Compare(tt.baseline, tt.current, 0.05)
			var got []string
			for _, d := range c.SeriesDrifts {
				got = append(got, d.String())
			}
			if !slices.Equal(got, tt.want) || c.SeriesCompared != tt.compared || c.Drifted() != (len(tt.want) > 0) {
				t.Errorf("compared %d, drifted %v, drifts\n%q\nwant %d compared and\n%q", c.SeriesCompared, c.Drifted(), got, tt.compared, tt.want)
			}
		})
	}
}

func TestCompareSummaryStatistics(t *testing.T) {
	mk := func(p95 float64) *results.Document {
		d := docWith(sim.Result{Policy: "p"})
		d.Summary = []results.Summary{{Policy: "p", Metrics: results.MetricStats{{Name: "attempts", P95: p95, CI95: []float64{0, 0}}}}}
		return d
	}
	c := Compare(mk(100), mk(120), 0.1)
	if len(c.Drifts) != 1 || c.Drifts[0].Name != "p95(results[p].attempts)" {
		t.Errorf("drifts %+v, want p95(results[p].attempts)", c.Drifts)
	}
}

func TestParseTolerance(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"5%", 0.05, true}, {"0.05", 0.05, true}, {"0", 0, true}, {" 12.5 % ", 0.125, true},
		{"-1%", 0, false}, {"x", 0, false}, {"", 0, false}, {"Inf", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseTolerance(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseTolerance(%q) = %v, %v; want %v ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestDropSeriesKeepsScalars(t *testing.T) {
	doc := build(t, "replications=2")
	before := DocumentMetrics(doc)
	if err := DropSeries(doc); err != nil {
		t.Fatal(err)
	}
	if after := DocumentMetrics(doc); !slices.Equal(before, after) {
		t.Error("dropping series changed a metric")
	}
	data, _ := doc.JSON()
	if !strings.Contains(string(data), `"attempts": []`) || strings.Count(string(data), `"runs": [`) == 0 {
		t.Errorf("series not dropped or runs lost:\n%.2000s", data)
	}
	path := filepath.Join(t.TempDir(), "b.json")
	if err := doc.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	back, err := ReadDocument(path)
	if err != nil {
		t.Fatal(err)
	}
	if c := Compare(back, doc, 0); len(c.Drifts) != 0 || len(c.New) != 0 {
		t.Errorf("a written baseline does not compare equal: %+v", c)
	}
}

func TestReadDocumentErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	v2, _ := json.Marshal(map[string]any{"schema_version": 2})
	for _, tt := range []struct{ path, want string }{
		{write("bad.json", "{"), "not a stormsim result document"},
		{write("v2.json", string(v2)), "schema_version 2, this stormsim reads 1"},
		{filepath.Join(dir, "none.json"), "no such file"},
	} {
		if _, err := ReadDocument(tt.path); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.path, err, tt.want)
		}
	}
}

// msPtr returns a pointer to a time in ms, for a result's convergence.
func msPtr(v float64) *float64 { return &v }
