package plots

import (
	"math"
	"slices"
	"testing"
)

// oneRun wraps policies in a run and returns its drawn lines.
func oneRun(capacity, budget float64, ps ...PolicySeries) []drawn {
	r := Run{Name: "t", CapacityPerWindow: capacity, DBBudgetRowsPerS: budget, Policies: ps}
	return flatten([]Run{r})
}

func TestWorkTitle(t *testing.T) {
	// The seed article's table: exponential 100,500 attempts and 623,900 ms,
	// full jitter 5,257 attempts and 4,580 ms: 623900/4580 = 136.2 and
	// 100500/5257 = 19.1.
	exp := PolicySeries{Policy: "exponential", WindowMs: 10, AttemptsPerWindow: []float64{100000, 500}, ConvergenceMs: 623900}
	full := PolicySeries{Policy: "full", WindowMs: 10, AttemptsPerWindow: []float64{5000, 257}, ConvergenceMs: 4580}
	cases := []struct {
		name string
		ps   []PolicySeries
		want string
	}{
		{"two policies", []PolicySeries{exp, full}, "full converges 136× sooner than exponential with 19× fewer attempts"},
		{"faster costs more", []PolicySeries{
			{Policy: "none", WindowMs: 1, AttemptsPerWindow: []float64{9200}, ConvergenceMs: 1000},
			{Policy: "fixed", WindowMs: 1, AttemptsPerWindow: []float64{4000}, ConvergenceMs: 2500},
		}, "none converges 2.5× sooner than fixed at 2.3× the attempts"},
		{"one policy", []PolicySeries{full}, "full converges in 4.58 s with 5,257 attempts"},
		// A calibration's real runs beside a model a few per cent off: 175
		// against 184.1 attempts is 1.05 times, which a factor printed to
		// one decimal once called "1.1× fewer", and 1.0× at 1.04.
		{"close attempts in per cent", []PolicySeries{
			{Policy: "real", WindowMs: 1, AttemptsPerWindow: []float64{175}, ConvergenceMs: 1628},
			{Policy: "model", WindowMs: 1, AttemptsPerWindow: []float64{182}, ConvergenceMs: 1839},
		}, "real converges 1.1× sooner than model with 4% fewer attempts"},
		{"close times in per cent", []PolicySeries{
			{Policy: "real", WindowMs: 1, AttemptsPerWindow: []float64{200}, ConvergenceMs: 1000},
			{Policy: "model", WindowMs: 1, AttemptsPerWindow: []float64{150}, ConvergenceMs: 1030},
		}, "real converges 3% sooner than model with 33% more attempts"},
		{"equal attempts", []PolicySeries{
			{Policy: "a", WindowMs: 1, AttemptsPerWindow: []float64{1000}, ConvergenceMs: 1000},
			{Policy: "b", WindowMs: 1, AttemptsPerWindow: []float64{1002}, ConvergenceMs: 3000},
		}, "a converges 3.0× sooner than b with as many attempts"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ws []work
			for _, d := range oneRun(5, 0, c.ps...) {
				ws = append(ws, workOf(d))
			}
			if got := workTitle(ws); got != c.want {
				t.Errorf("title = %q\nwant    %q", got, c.want)
			}
		})
	}
}

func TestAttemptsTitle(t *testing.T) {
	// Peaks after the first busy window: 995 and 120 against a capacity of
	// 5 per window: 199× and 24×.
	exp := PolicySeries{Policy: "exponential", WindowMs: 10, AttemptsPerWindow: []float64{0, 1000, 0, 995, 5}}
	full := PolicySeries{Policy: "full", WindowMs: 10, AttemptsPerWindow: []float64{1000, 120, 80}}
	cases := []struct {
		name     string
		capacity float64
		ps       []PolicySeries
		want     string
	}{
		{"against capacity", 5, []PolicySeries{full, exp}, "After the first window, exponential retries peak at 199× capacity, full at 24×"},
		{"unlimited", math.Inf(1), []PolicySeries{full, exp}, "After the first window, exponential retries peak at 995 attempts per window, full at 120 attempts per window"},
		{"one policy", 5, []PolicySeries{full}, "After the first window, full retries peak at 24× capacity"},
		{"nothing", 5, []PolicySeries{{Policy: "x", WindowMs: 1}}, "No handshake attempts"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ds := oneRun(c.capacity, 0, c.ps...)
			if got := attemptsTitle([]Run{*ds[0].run}, ds); got != c.want {
				t.Errorf("title = %q\nwant    %q", got, c.want)
			}
		})
	}
}

func TestConnectedTitle(t *testing.T) {
	// 617,500 / 4,210 = 146.7.
	ds := oneRun(5, 0,
		PolicySeries{Policy: "exponential", ConnectP99Ms: 617500},
		PolicySeries{Policy: "full", ConnectP99Ms: 4210},
	)
	want := "99% of clients connected after 4.21 s with full, 618 s with exponential (147× longer)"
	if got := connectedTitle(ds); got != want {
		t.Errorf("title = %q\nwant    %q", got, want)
	}
	if got := connectedTitle(oneRun(5, 0, PolicySeries{Policy: "x"})); got != "No client connected" {
		t.Errorf("nobody connected: %q", got)
	}
	// 25 of 100 clients connect and no more: the storm stalls.
	stuck := PolicySeries{Policy: "serve", Clients: 100, WindowMs: 1000, AcceptsPerWindow: []float64{25, 0}, GoodputPerWindow: []float64{25, 0}}
	done := PolicySeries{Policy: "skip", Clients: 100, WindowMs: 1000, AcceptsPerWindow: []float64{60, 40}, GoodputPerWindow: []float64{60, 40}, ConnectP99Ms: 2000}
	for _, c := range []struct {
		ps   []PolicySeries
		want string
	}{
		{[]PolicySeries{stuck, done}, "serve stalls at 25% connected; 99% connected after 2 s with skip"},
		{[]PolicySeries{stuck}, "serve stalls at 25% connected"}, // a label keeps its case: "Socketio" was no policy
	} {
		if got := connectedTitle(oneRun(5, 0, c.ps...)); got != c.want {
			t.Errorf("title = %q\nwant    %q", got, c.want)
		}
	}
}

func TestReclaimTitle(t *testing.T) {
	bound := [2]float64{1000, 2000}
	cases := []struct {
		name  string
		times []float64
		want  string
	}{
		{"all inside", []float64{1000, 1500, 1600, 2000}, "All 4 reclaim times lie inside the analytic bound [1 s, 2 s] (median 1.5 s)"},
		{"some outside", []float64{999, 1500, 2001}, "2 of 3 reclaim times fall outside the analytic bound [1 s, 2 s]"},
		{"one run", []float64{1711}, "Routes reclaimed after 1.71 s, inside the analytic bound [1 s, 2 s]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &Run{Reclaim: &Reclaim{TimesMs: c.times, BoundMs: bound}}
			if got := reclaimTitle([]*Run{r}); got != c.want {
				t.Errorf("title = %q\nwant    %q", got, c.want)
			}
		})
	}
}

func TestStaleTitle(t *testing.T) {
	// 250 ms windows: (10 + 5) routes * 0.25 s = 3.75 route-seconds, gone
	// after two windows (500 ms); (4 + 4 + 4) * 0.25 = 3.
	a := PolicySeries{Policy: "a", WindowMs: 250, StaleRoutesPerWindow: []float64{10, 5, 0, 0}}
	b := PolicySeries{Policy: "b", WindowMs: 250, StaleRoutesPerWindow: []float64{4, 4, 4}}
	if got, want := staleTitle(oneRun(0, 0, a)), "Up to 10 stale routes, gone after 500 ms: 3.75 route-seconds with a"; got != want {
		t.Errorf("title = %q\nwant    %q", got, want)
	}
	if got, want := staleTitle(oneRun(0, 0, b, a)), "Stale routes add up to 3.75 route-seconds with a, 3 with b"; got != want {
		t.Errorf("title = %q\nwant    %q", got, want)
	}
	// The model's exact integral wins over the window sum.
	b.StaleRouteSeconds = 4.2
	if got, want := staleTitle(oneRun(0, 0, b, a)), "Stale routes add up to 4.2 route-seconds with b, 3.75 with a"; got != want {
		t.Errorf("title = %q\nwant    %q", got, want)
	}
}

func TestDatabaseTitle(t *testing.T) {
	// Budget 25,000 rows/s; 50,000 in two 250 ms windows is 2× for 500 ms.
	over := PolicySeries{Policy: "none", WindowMs: 250, DBRowsPerS: []float64{50000, 50000, 1000}}
	under := PolicySeries{Policy: "full", WindowMs: 250, DBRowsPerS: []float64{20000, 10000}}
	cases := []struct {
		name   string
		budget float64
		ps     []PolicySeries
		want   string
	}{
		{"over budget", 25000, []PolicySeries{under, over}, "Database reads peak at 2.0× the 25,000 rows/s budget with none, above it for 500 ms"},
		{"within budget", 25000, []PolicySeries{under}, "Database reads stay within the 25,000 rows/s budget: peak 80% of it with full"},
		{"no budget", 0, []PolicySeries{under, over}, "Database reads peak at 50,000 rows/s with none, 20,000 with full"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := databaseTitle(oneRun(0, c.budget, c.ps...)); got != c.want {
				t.Errorf("title = %q\nwant    %q", got, c.want)
			}
		})
	}
}

func TestSweepBestTitle(t *testing.T) {
	x := SweepAxis{Name: "lease.duration", Unit: "ms", Values: []float64{500, 1000}, Labels: []string{"500ms", "1s"}}
	where := func(i int) string { return x.at(i) }
	cases := []struct {
		name   string
		m      SweepMetric
		values []float64
		want   string
	}{
		{"lower is better", SweepMetric{Name: "reclaim p99", Unit: "ms"}, []float64{900, 1800},
			"Lowest reclaim p99, 900 ms, at lease.duration = 0.5 s: 2.0× lower than the highest (1.8 s at lease.duration = 1 s)"},
		{"higher is better", SweepMetric{Name: "goodput", Unit: "1/s", HigherIsBetter: true}, []float64{900, 1800},
			"Highest goodput, 1,800 1/s, at lease.duration = 1 s: 2.0× higher than the lowest (900 1/s at lease.duration = 0.5 s)"},
		{"missing skipped", SweepMetric{Name: "n"}, []float64{math.NaN(), 3}, "Lowest n, 3, at lease.duration = 1 s"},
		{"all missing", SweepMetric{Name: "n"}, []float64{math.NaN(), math.NaN()}, "No n data in this sweep"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.m.bestTitle(c.values, where); got != c.want {
				t.Errorf("title = %q\nwant    %q", got, c.want)
			}
		})
	}
	plain := SweepAxis{Name: "admission.rate", Unit: "1/s", Values: []float64{40}}
	if got, want := plain.at(0), "admission.rate = 40 1/s"; got != want {
		t.Errorf("at = %q, want %q", got, want)
	}
}

func TestGoodputTitle(t *testing.T) {
	// 98 wasted of 100 claims is 98%; a storm that wasted nothing says so.
	stuck := PolicySeries{Policy: "serve", WindowMs: 1000, GoodputPerWindow: []float64{2, 0}, WastedPerWindow: []float64{0, 98}}
	clean := PolicySeries{Policy: "bucket", WindowMs: 1000, GoodputPerWindow: []float64{50, 50}, WastedPerWindow: []float64{0, 0}}
	cases := []struct {
		name string
		ps   []PolicySeries
		want string
	}{
		{"the worst share is named", []PolicySeries{clean, stuck}, "98% of serve's route claims were wasted on clients that had given up (98 wasted, 2 useful)"},
		{"nothing wasted", []PolicySeries{clean}, "Every route claim connected a client: no work wasted"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := goodputTitle(oneRun(0, 0, c.ps...)); got != c.want {
				t.Errorf("title = %q\nwant    %q", got, c.want)
			}
		})
	}
}

func TestQueueTitle(t *testing.T) {
	growing := PolicySeries{Policy: "serve", WindowMs: 1000, QueuePerWindow: []float64{10, 500, 900}}
	drained := PolicySeries{Policy: "skip", WindowMs: 1000, QueuePerWindow: []float64{10, 300, 0, 0}}
	cases := []struct {
		name string
		ps   []PolicySeries
		want string
	}{
		{"one never drains", []PolicySeries{drained, growing}, "The queue does not drain with serve: 900 handshakes still waiting at the end (peak 900)"},
		{"drains after two windows", []PolicySeries{drained}, "The queue peaks at 300 handshakes with skip and drains by 2 s"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := queueTitle(oneRun(0, 0, c.ps...)); got != c.want {
				t.Errorf("title = %q\nwant    %q", got, c.want)
			}
		})
	}
}

// TestHeatTitle: a heat map's title says what a planner acts on: how
// many points meet the limits and the best of those; where storms stop
// ending; else how the metric moves along the axes, not the range.
func TestHeatTitle(t *testing.T) {
	clients := SweepAxis{Name: "clients", Values: []float64{1000, 10000, 40000}, Labels: []string{"1000", "10000", "40000"}}
	rate := SweepAxis{Name: "admission.rate", Values: []float64{300, 800, 2400}, Labels: []string{"300", "800", "2400"}}
	conv := SweepMetric{Name: "convergence_ms", Unit: "ms"}
	nan := math.NaN()
	// grid[rate][clients]: slower with more clients, faster with a faster bucket.
	grid := [][]float64{{5000, 48000, 90000}, {2400, 19000, 60000}, {1600, 22000, 55000}}
	fails := [][]bool{{false, false, true}, {false, false, false}, {false, false, false}}
	cases := []struct {
		name string
		s    Sweep
		grid [][]float64
		want string
	}{
		{"limits", Sweep{Metric: conv, Limits: []Limit{{Text: "convergence_ms <= 60s", Bound: 60000, Fails: fails}}}, grid,
			"8 of 9 points meet convergence_ms <= 60s; the lowest convergence_ms among them, 1.6 s, at clients = 1000, admission.rate = 2400"},
		{"no point meets", Sweep{Metric: conv, Limits: []Limit{{Text: "convergence_ms <= 1s", Bound: 1000,
			Fails: [][]bool{{true, true, true}, {true, true, true}, {true, true, true}}}}}, grid,
			"No point of 9 meets convergence_ms <= 1s"},
		{"where storms never end", Sweep{Metric: conv, Notes: [][]string{{"", "", "metastable"}, {"", "metastable", "metastable"}, {"", "metastable", "metastable"}}},
			[][]float64{{5000, 48000, nan}, {2400, nan, nan}, {1600, nan, nan}},
			"Storms never end in 5 of 9 cells: at clients = 10000 with admission.rate ≥ 800; at clients = 40000 at every admission.rate"},
		{"trend along one axis", Sweep{Metric: conv}, grid,
			"convergence_ms rises with clients: from 1.6 s (clients = 1000, admission.rate = 2400) to 90 s (clients = 40000, admission.rate = 300)"},
		{"trend along both", Sweep{Metric: conv}, [][]float64{{1000, 2000, 3000}, {2000, 3000, 4000}, {3000, 4000, 5000}},
			"convergence_ms rises with clients and admission.rate: from 1 s (clients = 1000, admission.rate = 300) to 5 s (clients = 40000, admission.rate = 2400)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := heatTitle(c.s, clients, rate, c.grid); got != c.want {
				t.Errorf("title = %q\nwant    %q", got, c.want)
			}
		})
	}
}

// TestSweepAxisUnits: a duration axis reads in one unit, named on the
// axis, whatever units the sweep file wrote its values in: the backoff
// sweep's cap axis once read "policies[0].cap (ms)" under ticks of 5s,
// 10s and 30s.
func TestSweepAxisUnits(t *testing.T) {
	cases := []struct {
		axis  SweepAxis
		label string
		ticks []string
	}{
		{SweepAxis{Name: "policies[0].cap", Unit: "ms", Values: []float64{1000, 2000, 16000}, Labels: []string{"1s", "2000ms", "16s"}},
			"policies[0].cap (s)", []string{"1", "2", "16"}},
		{SweepAxis{Name: "policies[0].base", Unit: "ms", Values: []float64{25, 100, 800}, Labels: []string{"25ms", "100ms", "800ms"}},
			"policies[0].base (ms)", []string{"25", "100", "800"}},
		{SweepAxis{Name: "clients", Values: []float64{1000, 3000}, Labels: []string{"1000", "3000"}}, "clients", []string{"1000", "3000"}},
		{SweepAxis{Name: "policies[0].name", Values: []float64{0, 1}, Labels: []string{"full", "equal"}}, "policies[0].name", []string{"full", "equal"}},
	}
	for _, c := range cases {
		if got := c.axis.label(); got != c.label {
			t.Errorf("%s: label %q, want %q", c.axis.Name, got, c.label)
		}
		if got := c.axis.tickLabels(); !slices.Equal(got, c.ticks) {
			t.Errorf("%s: ticks %q, want %q", c.axis.Name, got, c.ticks)
		}
	}
	for _, c := range []struct {
		m    SweepMetric
		want string
	}{
		{SweepMetric{Name: "mean(convergence_ms)", Unit: "s"}, "mean(convergence_ms), in s"},
		{SweepMetric{Name: "convergence_ms", Unit: "ms"}, "convergence_ms"},
		{SweepMetric{Name: "database.peak_rows_per_s"}, "database.peak_rows_per_s"},
		{SweepMetric{Name: "goodput", Unit: "1/s"}, "goodput (1/s)"},
	} {
		if got := c.m.label(); got != c.want {
			t.Errorf("metric %s in %s: label %q, want %q", c.m.Name, c.m.Unit, got, c.want)
		}
	}
}

// TestCellDigitsTellValuesFromALimit: a cell label at three digits
// turns 25,040 into "25k", the very bound of a 25,000 budget; with the
// limit, labels keep the digit that says which side of it a cell is on.
func TestCellDigitsTellValuesFromALimit(t *testing.T) {
	grid := [][]float64{{24000, 25040}, {25000, 31200}}
	if d := cellDigits(nil, grid); d != 3 {
		t.Errorf("no limit: %d digits, want 3", d)
	}
	budget := []Limit{{Text: "peak <= 25000", Bound: 25000}}
	d := cellDigits(budget, grid)
	if d != 4 || fmtCell(25040, d) != "25.04k" || fmtCell(25000, d) != "25k" {
		t.Errorf("25,040 against 25,000: %d digits, %q and %q", d, fmtCell(25040, d), fmtCell(25000, d))
	}
	if d := cellDigits([]Limit{{Text: "other statistic", Bound: math.NaN()}}, grid); d != 3 {
		t.Errorf("a limit on another statistic: %d digits, want 3", d)
	}
}
