package check

import (
	"strings"
	"testing"

	"stormsim/config"
	"stormsim/results"
	"stormsim/runner"
)

func TestParse(t *testing.T) {
	tests := []struct {
		text      string
		wantRef   string
		wantOp    string
		wantBound float64
		wantErr   string
	}{
		{"results[full].convergence_ms < 6s", "results[full].convergence_ms", "<", 6000, ""},
		{"results[full].convergence_ms < 1500ms", "results[full].convergence_ms", "<", 1500, ""},
		{"results[full].convergence_ms == 0", "results[full].convergence_ms", "==", 0, ""},
		{"results[full].convergence_ms < 60", "", "", 0, "convergence_ms is a time: 60 needs a unit, such as 60ms or 60s"},
		{"reclaim.stale_route_seconds < 90", "", "", 0, "reclaim.stale_route_seconds is a time: 90 needs a unit, such as 90s or 90ms"},
		{"results[full].convergence_ms < 5%", "", "", 0, `convergence_ms is a time: "5%" is not a duration such as 60s, 1500ms or 1m30s`},
		{"converged_ms < true", "", "", 0, `is not a duration`},
		{"database.peak_rows_per_s < 25k", "database.peak_rows_per_s", "<", 25000, ""},
		{"database.peak_rows_per_s < 25000", "database.peak_rows_per_s", "<", 25000, ""},
		{"database.peak_rows_per_s < 25k/s", "database.peak_rows_per_s", "<", 25000, ""},
		{"results[full].attempts > 1.5M", "results[full].attempts", ">", 1.5e6, ""},
		{"results[full].attempts > 2G", "results[full].attempts", ">", 2e9, ""},
		{"results[full].attempts > 2k/s", "", "", 0, `"2k/s" is not a number (such as 25000 or 25k) or a percentage`},
		{"results[full].attempts<=3", "results[full].attempts", "<=", 3, ""},
		{"results[full].attempts == 1e3", "results[full].attempts", "==", 1000, ""},
		{"results[full].abandoned != 0", "results[full].abandoned", "!=", 0, ""},
		{"results[full].connect_ms.p99 >= 2.5s", "results[full].connect_ms.p99", ">=", 2500, ""},
		{"connect_ms.p99 > 1m30s", "connect_ms.p99", ">", 90000, ""},
		{"p95(results[a].reclaim.reclaim_ms) < 250us", "p95(results[a].reclaim.reclaim_ms)", "<", 0.25, ""},
		{"reclaim.stale_route_seconds < 1500ms", "reclaim.stale_route_seconds", "<", 1.5, ""},
		{"results[full].attempts < 5%", "results[full].attempts", "<", 0.05, ""},
		{"results[full].attempts < 2s", "", "", 0, "attempts is not a time (its name has no _ms or _seconds), so 2s needs a plain number"},
		{"database.peak_rows_per_s < 1s", "", "", 0, "is not a time"},
		{"results[full].attempts 6000", "", "", 0, "want METRIC OP NUMBER"},
		{"results[full].attempts <", "", "", 0, "missing number after the operator"},
		{"results[full].attempts < lots", "", "", 0, `"lots" is not a number (such as 25000 or 25k) or a percentage`},
		{"results[full].attempts < NaN", "", "", 0, `"NaN" must be a finite number`},
		{"results[full].attempts < x%", "", "", 0, `"x%" is not a number`},
		{"median(results[full].attempts) < 3", "", "", 0, `unknown statistic "median"`},
	}
	for _, tt := range tests {
		c, err := Parse(tt.text)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Parse(%q) error %v, want %q", tt.text, err, tt.wantErr)
			}
			continue
		}
		if err != nil || c.Metric.String() != tt.wantRef || c.Op != tt.wantOp || c.Bound != tt.wantBound {
			t.Errorf("Parse(%q) = %s %s %v, %v; want %s %s %v", tt.text, c.Metric, c.Op, c.Bound, err, tt.wantRef, tt.wantOp, tt.wantBound)
		}
	}
}

func TestHolds(t *testing.T) {
	tests := []struct {
		op               string
		below, at, above bool
	}{
		{"<", true, false, false}, {"<=", true, true, false}, {">", false, false, true},
		{">=", false, true, true}, {"==", false, true, false}, {"!=", true, false, true},
	}
	for _, tt := range tests {
		c := Check{Op: tt.op, Bound: 10}
		if c.Holds(9) != tt.below || c.Holds(10) != tt.at || c.Holds(11) != tt.above {
			t.Errorf("%s 10: holds(9,10,11) = %v %v %v, want %v %v %v", tt.op, c.Holds(9), c.Holds(10), c.Holds(11), tt.below, tt.at, tt.above)
		}
	}
}

// TestMargin pins the margin's sign and unit: 60 s is 60,000 in a _ms
// metric, so 45 s observed holds by 15,000 ms and 75 s fails by 15,000.
func TestMargin(t *testing.T) {
	for _, tt := range []struct {
		text     string
		observed float64
		want     float64
		ok       bool
	}{
		{"p95(results[full].convergence_ms) <= 60s", 45000, 15000, true},
		{"p95(results[full].convergence_ms) < 1m", 75000, -15000, true},
		{"mean(results[full].converged) >= 0.75", 0.5, -0.25, true},
		{"results[full].attempts > 10", 12, 2, true},
		{"results[full].attempts == 10", 10, 0, false},
		{"results[full].attempts != 10", 10, 0, false},
	} {
		got, ok := mustParse(t, tt.text).Margin(tt.observed)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s at %v: margin %v, %v; want %v, %v", tt.text, tt.observed, got, ok, tt.want, tt.ok)
		}
	}
}

const twoPolicies = "name: t\nseed: 3\nclients: 20\nadmission: {kind: slots, slot: 10ms, per_slot: 5}\n" +
	"policies:\n  - {name: exponential, base: 100ms, cap: 400ms}\n  - {name: full, base: 100ms, cap: 400ms}\n"

func build(t *testing.T, sets ...string) *results.Document {
	t.Helper()
	s, err := config.Parse("t.yaml", []byte(twoPolicies), sets)
	if err != nil {
		t.Fatal(err)
	}
	doc := results.New(s, config.Hash(s), config.Echo(s))
	if err := runner.Build(doc, s, s.Policies, runner.Options{}); err != nil {
		t.Fatal(err)
	}
	return doc
}

func mustParse(t *testing.T, text string) Check {
	t.Helper()
	c, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestEval(t *testing.T) {
	doc := build(t)
	full := doc.Results[1]
	conv := significant(*full.ConvergenceMs/1000, 4) + "s"
	tests := []struct{ check, want string }{
		{"results[full].convergence_ms < 300h", "PASS results[full].convergence_ms < 300h: observed " + significant(*full.ConvergenceMs/3.6e6, 4) + "h"},
		{"results[full].convergence_ms > 1s", "FAIL results[full].convergence_ms > 1s: observed " + conv},
		{"results[full].accepted == 20", "PASS results[full].accepted == 20: observed 20"},
		{"results[full].reclaim.reclaim_ms < 1s", "FAIL results[full].reclaim.reclaim_ms < 1s: no data (is the model that produces it turned on?)"},
		{"results[nobody].attempts < 1", "FAIL results[nobody].attempts < 1: no data (is the model that produces it turned on?)"},
		{"mean(results[full].attempts) > 0", "FAIL mean(results[full].attempts) > 0: no data (is the model that produces it turned on?)"},
	}
	for _, tt := range tests {
		if got := mustParse(t, tt.check).Eval(doc).String(); got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
	}
	if got := mustParse(t, "attempts > 0").ForPolicy("exponential").Eval(doc).String(); !strings.HasPrefix(got, "PASS results[exponential].attempts > 0: observed ") {
		t.Errorf("ForPolicy: %s", got)
	}
}

// TestReportLineInTheWrittenUnit pins the report line: the bound as
// written and the observed value in its unit, to 4 significant digits
// unless that would read as the bound itself.
func TestReportLineInTheWrittenUnit(t *testing.T) {
	for _, tt := range []struct {
		check    string
		observed float64 // in the metric's unit
		want     string
	}{
		{"results[full].convergence_ms < 60s", 76981.492551, "FAIL results[full].convergence_ms < 60s: observed 76.98s"},
		{"results[full].connect_ms.p99 < 1500ms", 1460.603284, "PASS results[full].connect_ms.p99 < 1500ms: observed 1461ms"},
		{"results[full].connect_ms.p99 < 1m30s", 1460.603284, "PASS results[full].connect_ms.p99 < 1m30s: observed 1.461s"},
		{"results[full].connect_ms.p99 < 250us", 0.3, "FAIL results[full].connect_ms.p99 < 250us: observed 300us"},
		{"results[full].reclaim.stale_route_seconds < 2m", 45, "PASS results[full].reclaim.stale_route_seconds < 2m: observed 0.75m"},
		{"results[full].convergence_ms < 3s", 2999.9, "PASS results[full].convergence_ms < 3s: observed 2.9999s"},
		{"results[full].convergence_ms <= 3s", 3000, "PASS results[full].convergence_ms <= 3s: observed 3s"},
		{"results[full].convergence_ms == 0", 12.5, "FAIL results[full].convergence_ms == 0: observed 12.5ms"},
		{"results[full].database.peak_rows_per_s < 25k", 28333, "FAIL results[full].database.peak_rows_per_s < 25k: observed 28.33k"},
		{"results[full].database.peak_rows_per_s < 25000", 28333.3333, "FAIL results[full].database.peak_rows_per_s < 25000: observed 28333"},
		{"results[full].attempts < 100500", 100500, "FAIL results[full].attempts < 100500: observed 100500"},
		{"results[full].attempts < 5%", 0.0321, "PASS results[full].attempts < 5%: observed 3.21%"},
		{"results[full].converged == true", 0, "FAIL results[full].converged == true: observed false"},
		{"mean(results[full].metastable) < 0.05", 0.125, "FAIL mean(results[full].metastable) < 0.05: observed 0.125"},
	} {
		o := Outcome{Check: mustParse(t, tt.check), Observed: tt.observed, HasData: true}
		if got := o.String(); got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
	}
}

func TestEvalStatistics(t *testing.T) {
	doc := build(t, "replications=3")
	var runs []float64
	s, _ := config.Parse("t.yaml", []byte(twoPolicies), nil)
	for seed := uint64(3); seed < 6; seed++ {
		r, err := runner.RunOne(s, s.Policies[1], seed)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, float64(r.Attempts))
	}
	lo, hi := min(runs[0], runs[1], runs[2]), max(runs[0], runs[1], runs[2])
	for _, tt := range []struct {
		stat string
		want float64
	}{{"min", lo}, {"max", hi}, {"mean", (runs[0] + runs[1] + runs[2]) / 3}} {
		o := mustParse(t, tt.stat+"(results[full].attempts) > 0").Eval(doc)
		if !o.HasData || o.Observed != tt.want {
			t.Errorf("%s: observed %v (data %v), want %v", tt.stat, o.Observed, o.HasData, tt.want)
		}
	}
}

func TestDocumentMetricNamesAreValidRefs(t *testing.T) {
	doc := build(t, "replications=2")
	s, _ := config.Parse("t.yaml", []byte(twoPolicies), []string{"replications=2"})
	cat := results.NewCatalog(s, s.Policies)
	ms := DocumentMetrics(doc)
	for _, m := range ms {
		ref, err := results.ParseMetricRef(m.Name)
		if err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		if err := cat.Check(ref); err != nil {
			t.Errorf("%s: %v", m.Name, err)
		}
		if v, ok := Lookup(doc, ref); !ok || v != m.Value {
			t.Errorf("%s: Lookup %v %v, want %v", m.Name, v, ok, m.Value)
		}
	}
	if len(ms) < 2*10*(1+len(results.Stats)) {
		t.Errorf("only %d metrics", len(ms))
	}
}
