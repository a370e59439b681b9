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
			c := Compare(base, docWith(tt.current), Tolerance{Relative: 0.05})
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
	if c := Compare(base, docWith(sim.Result{Policy: "p", ConvergenceMs: msPtr(1000.000001)}), Tolerance{}); len(c.Drifts) != 1 {
		t.Errorf("tolerance 0 missed a change: %+v", c)
	}
	if c := Compare(base, base, Tolerance{}); len(c.Drifts) != 0 || len(c.New) != 0 || c.Compared == 0 {
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
		{"identical", base, withSeries(10, 20, 30), 8, nil},
		{"within tolerance", base, withSeries(10, 21, 29), 8, nil},
		{"one value", base, withSeries(10, 20, 40), 8,
			[]string{"results[full].series.attempts: 1 of 3 windows differ, the most at [2]: 30 in the baseline, 40 now (+33.33%)"}},
		{"two values, the largest change reported", base, withSeries(9, 20, 20), 8,
			[]string{"results[full].series.attempts: 2 of 3 windows differ from [0] on, the most at [2]: 30 in the baseline, 20 now (-33.33%)"}},
		{"a trailing empty window is none", base, withSeries(10, 20, 30, 0, 0), 8, nil},
		{"trailing empty windows in the baseline too", withSeries(10, 20, 30, 0), withSeries(10, 20, 30), 8, nil},
		{"longer now: the windows both have", base, withSeries(10, 20, 30, 5), 8, nil},
		{"shorter now, and a change", base, withSeries(10, 25), 8,
			[]string{"results[full].series.attempts: 1 of 2 windows differ (the baseline has 3 windows, this run 2), the most at [1]: 20 in the baseline, 25 now (+25.00%)"}},
		{"policy gone", base, docWith(sim.Result{Policy: "other"}), 8, []string{
			"results[full].series.attempts: 3 values in the baseline, no series now", "results[full].series.accepts: 3 values in the baseline, no series now",
		}},
		{"a baseline without series compares none", docWith(sim.Result{Policy: "full"}), withSeries(10, 20, 30), 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Compare(tt.baseline, tt.current, Tolerance{Relative: 0.05})
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

// TestCompareFloors pins the absolute floors: a change no larger than the
// floor of its unit is not drift, whatever its relative size, and each
// unit has its own.
func TestCompareFloors(t *testing.T) {
	base := docWith(sim.Result{Policy: "p", Attempts: 10, ConvergenceMs: msPtr(2), OutcomeResult: &sim.OutcomeResult{TailBusy: 0.5,
		QueueWaitMs: sim.WaitQuantiles{Max: 0.2}}})
	now := docWith(sim.Result{Policy: "p", Attempts: 11, ConvergenceMs: msPtr(2.9), OutcomeResult: &sim.OutcomeResult{TailBusy: 0.6,
		QueueWaitMs: sim.WaitQuantiles{Max: 0.5}}})
	names := func(c Comparison) []string {
		var out []string
		for _, d := range c.Drifts {
			out = append(out, d.Name)
		}
		return out
	}
	for _, tt := range []struct {
		name string
		tol  Tolerance
		want []string
	}{
		{"no floors: every change at 5%", Tolerance{Relative: 0.05},
			[]string{"results[p].attempts", "results[p].convergence_ms", "results[p].queue_wait_ms.max", "results[p].tail_busy"}},
		{"the default floors: 1 count and 1 ms are noise, a fraction is not", Tolerance{Relative: 0.05, Floors: DefaultFloors},
			[]string{"results[p].tail_busy"}},
		{"a fraction's floor", Tolerance{Relative: 0.05, Floors: Floors{Fraction: 0.2}},
			[]string{"results[p].attempts", "results[p].convergence_ms", "results[p].queue_wait_ms.max"}},
		{"floors alone, without a relative tolerance", Tolerance{Floors: Floors{Ms: 0.5, Count: 0.5}},
			[]string{"results[p].attempts", "results[p].convergence_ms", "results[p].tail_busy"}},
	} {
		if got := names(Compare(base, now, tt.tol)); !slices.Equal(got, tt.want) {
			t.Errorf("%s: drifts %q, want %q", tt.name, got, tt.want)
		}
	}
	series := func(v ...int64) *results.Document {
		return docWith(sim.Result{Policy: "p", Series: sim.Series{Attempts: v}})
	}
	if c := Compare(series(3, 100), series(4, 100), Tolerance{Relative: 0.05, Floors: DefaultFloors}); c.Drifted() {
		t.Errorf("a window one count off drifted under the default floors: %+v", c.SeriesDrifts)
	}
}

func TestParseFloors(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Floors
		ok   bool
	}{
		{"0", Floors{}, true},
		{"5ms", Floors{Ms: 5, Count: 1, PerS: 1}, true},
		{"2s, 3, 10/s, 1%", Floors{Ms: 2000, Count: 3, PerS: 10, Fraction: 0.01}, true},
		{"1500us", Floors{Ms: 1.5, Count: 1, PerS: 1}, true},
		{"lots", Floors{}, false}, {"-1", Floors{}, false}, {"1ms,", Floors{}, false}, {"NaN/s", Floors{}, false},
	} {
		got, err := ParseFloors(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseFloors(%q) = %+v, %v; want %+v ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// TestWorstDriftsFirst pins the report's order: metrics before series,
// each by the size of its change (relative to the value, or to the
// series' peak), and the count of those left out.
func TestWorstDriftsFirst(t *testing.T) {
	base := docWith(sim.Result{Policy: "p", Attempts: 100, Accepted: 100, Rejected: 0, Series: sim.Series{Attempts: []int64{0, 1000, 10}, Accepts: []int64{50, 50}}})
	now := docWith(sim.Result{Policy: "p", Attempts: 110, Accepted: 200, Rejected: 5, Series: sim.Series{Attempts: []int64{3, 1000, 10}, Accepts: []int64{50, 75}}})
	c := Compare(base, now, Tolerance{Relative: 0.05})
	lines, metrics, series := c.Worst(4)
	want := []string{
		"results[p].rejected: 0 in the baseline, 5 now (new non-zero value)",
		"results[p].accepted: 100 in the baseline, 200 now (+100.00%)",
		"results[p].attempts: 100 in the baseline, 110 now (+10.00%)",
		"results[p].series.accepts: 1 of 2 windows differ, the most at [1]: 50 in the baseline, 75 now (+50.00%)",
	}
	if !slices.Equal(lines, want) || metrics != 0 || series != 1 {
		t.Errorf("got %q, %d more metrics, %d more series\nwant %q, 0, 1", lines, metrics, series, want)
	}
	if lines, metrics, series := c.Worst(1); len(lines) != 1 || metrics != 2 || series != 2 {
		t.Errorf("Worst(1): %q, %d and %d more; want 1 line, 2 and 2 more", lines, metrics, series)
	}
}

// TestConfigChanges pins the keys a drift report opens with.
func TestConfigChanges(t *testing.T) {
	base := `{"name": "a", "admission": {"kind": "token_bucket", "rate": 130, "burst": 10}, "policies": [{"name": "full", "base": "100ms"}], "lease": {"duration": "10s"}}`
	now := `{"name": "a", "admission": {"kind": "token_bucket", "rate": 125, "burst": 10}, "policies": [{"name": "full", "base": "1s"}], "capacity": {"admit_per_s": 600}}`
	var got []string
	for _, c := range ConfigChanges(json.RawMessage(base), json.RawMessage(now)) {
		got = append(got, c.String())
	}
	want := []string{"admission.rate: 130 -> 125", "policies[0].base: 100ms -> 1s", "lease: {duration: 10s} -> none", "capacity: none -> {admit_per_s: 600}"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if c := ConfigChanges(json.RawMessage(base), json.RawMessage(base)); len(c) != 0 {
		t.Errorf("a config differs from itself: %v", c)
	}
	if c := ConfigChanges(nil, json.RawMessage(base)); c != nil {
		t.Errorf("a baseline without a config: %v", c)
	}
}

func TestCompareSummaryStatistics(t *testing.T) {
	mk := func(p95 float64) *results.Document {
		d := docWith(sim.Result{Policy: "p"})
		d.Summary = []results.Summary{{Policy: "p", Metrics: results.MetricStats{{Name: "attempts", P95: p95, CI95: []float64{0, 0}}}}}
		return d
	}
	c := Compare(mk(100), mk(120), Tolerance{Relative: 0.1})
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
	if c := Compare(back, doc, Tolerance{}); len(c.Drifts) != 0 || len(c.New) != 0 {
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
