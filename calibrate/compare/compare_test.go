package compare

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"stormsim/calibrate/measured"
	"stormsim/gateway/storm"
	"stormsim/internal/finitejson"
	"stormsim/models"
	"stormsim/sim"
)

func TestWassersteinAndKS(t *testing.T) {
	centres := []float64{125, 375, 625}
	cases := []struct {
		name   string
		a, b   []float64
		w1, ks float64
	}{
		// All mass moves one window: W1 is the window, KS the whole mass.
		{"one window later", []float64{4, 0, 0}, []float64{0, 2, 0}, 250, 1},
		// Half the mass moves two windows: 0.5 * 500.
		{"half two windows later", []float64{1, 0, 1}, []float64{2, 0, 0}, 250, 0.5},
		{"same shape, other scale", []float64{1, 2, 1}, []float64{10, 20, 10}, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := wasserstein(centres, c.a, c.b); math.Abs(got-c.w1) > 1e-9 {
				t.Errorf("W1 = %v, want %v", got, c.w1)
			}
			if got := kolmogorovSmirnov(centres, c.a, c.b); math.Abs(got-c.ks) > 1e-9 {
				t.Errorf("KS = %v, want %v", got, c.ks)
			}
		})
	}
	if !math.IsNaN(wasserstein(centres, []float64{0, 0, 0}, []float64{1, 0, 0})) {
		t.Error("W1 of an empty series is not NaN")
	}
}

func TestIntervalPercentileRelError(t *testing.T) {
	values := make([]float64, 200)
	for i := range values {
		values[i] = float64(i + 1) // 1..200
	}
	// Empirical quantiles: the ceil(q*n)-th smallest: 5th and 195th.
	if lo, hi := Interval(values); lo != 5 || hi != 195 {
		t.Errorf("interval = [%v, %v], want [5, 195]", lo, hi)
	}
	cases := []struct {
		x, want float64
	}{{0, 0}, {1, 0.0025}, {100.5, 0.5}, {201, 1}}
	for _, c := range cases {
		if got := percentileOf(c.x, values); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("percentileOf(%v) = %v, want %v", c.x, got, c.want)
		}
	}
	rel := []struct{ sim, real, want float64 }{{110, 100, 0.1}, {90, 100, -0.1}, {0, 0, 0}}
	for _, c := range rel {
		if got := relError(c.sim, c.real); got == nil || !closeTo(*got, c.want, 1e-12) {
			t.Errorf("relError(%v, %v) = %v, want %v", c.sim, c.real, got, c.want)
		}
	}
	for _, sim := range []float64{5, -5} {
		if got := relError(sim, 0); got != nil {
			t.Errorf("relError(%v, 0) = %v, want none: a relative error against 0 has no value", sim, *got)
		}
	}
}

// closeTo reports whether got is want (infinities exactly) or within tol
// of it; NaN is close to nothing, so a NaN result always fails.
func closeTo(got, want, tol float64) bool {
	if math.IsInf(want, 0) {
		return got == want
	}
	return math.Abs(got-want) <= tol
}

func TestCloseToRejectsNaN(t *testing.T) {
	for _, want := range []float64{0, 0.1, math.Inf(1)} {
		if closeTo(math.NaN(), want, 1e-12) {
			t.Errorf("closeTo(NaN, %v) = true", want)
		}
	}
}

// TestCompareMetricsAgainstReplications: real 100 attempts against
// replications of 90, 100, 110, 120: mean 105 (+5%), twin (replication 0,
// the real run's seed) 90, inside [90, 120], which is also the spread.
func TestCompareMetricsAgainstReplications(t *testing.T) {
	real := []*measured.Run{{Seed: 7, Crash: storm.Summary{Attempts: 100, ConvergenceMs: 1000}}}
	var reps []sim.Result
	for _, a := range []int64{90, 100, 110, 120} {
		conv := 1300.0
		reps = append(reps, sim.Result{Attempts: a, ConvergenceMs: &conv})
	}
	got := Metrics(real, reps, 7)
	find := func(name string) MetricComparison {
		for _, m := range got {
			if m.Metric == name {
				return m
			}
		}
		t.Fatalf("no metric %s in %v", name, got)
		return MetricComparison{}
	}
	a := find("attempts")
	if a.Real != 100 || a.SimMean != 105 || a.RelError == nil || math.Abs(*a.RelError-0.05) > 1e-12 || a.SimTwin != 90 ||
		a.SimLo != 90 || a.SimHi != 120 || a.SimMin != 90 || a.SimMax != 120 || !a.Inside || a.Pass == nil || !*a.Pass {
		t.Errorf("attempts = %+v", a)
	}
	if c := find("convergence_ms"); c.Pass == nil || *c.Pass || c.Inside {
		t.Errorf("convergence 1300 vs 1000 (+30%%) passed or is inside: %+v", c)
	}
	for _, m := range got {
		if m.Metric == "reclaim_ms" || m.Metric == "drain.attempts" {
			t.Errorf("%s compared although the replications have no such model", m.Metric)
		}
	}
}

// TestCompareSeriesSpread: 39 replications, 13 each of [10 0], [20 10]
// and [30 20]; the real [25 5] lies inside the min-max spread in both
// windows. With 39 replications one of two windows may be outside by
// chance (p = 2/40: P(X > 1) = 0.25%), both may not.
func TestCompareSeriesSpread(t *testing.T) {
	real := []*measured.Run{{Decisions: measured.Series{Attempts: []int64{25, 5}, Accepts: []int64{5, 5}}, Crash: storm.Summary{Clients: 10}}}
	var reps []sim.Result
	for range 13 {
		reps = append(reps,
			sim.Result{Clients: 10, Series: sim.Series{Attempts: []int64{10}, Accepts: []int64{10}}},
			sim.Result{Clients: 10, Series: sim.Series{Attempts: []int64{20, 10}, Accepts: []int64{5, 5}}},
			sim.Result{Clients: 10, Series: sim.Series{Attempts: []int64{30, 20}, Accepts: []int64{4, 6}}})
	}
	got := Series(real, reps, 250)
	a := got[0]
	if a.Series != "attempts" || a.Windows != 2 || a.WindowsInsideEnvelope != 2 || a.AllowedOutside != 1 || a.Pass == nil || !*a.Pass ||
		a.SimMin[1] != 0 || a.SimMax[0] != 30 || a.SimMean[0] != 20 {
		t.Errorf("attempts = %+v", a)
	}
	c := got[2]
	if c.Series != "connected_fraction" || c.Pass != nil || c.Real[1] != 1 || c.SimMin[1] != 1 {
		t.Errorf("connected fraction = %+v (padded with the last value, no distance)", c)
	}
	cases := []struct {
		real []int64
		pass bool
	}{{[]int64{35, 5}, true}, {[]int64{35, 25}, false}}
	for _, cs := range cases {
		real[0].Decisions.Attempts = cs.real
		if a := Series(real, reps, 250)[0]; *a.Pass != cs.pass {
			t.Errorf("real %v: pass %v, want %v (%d of 2 windows inside)", cs.real, *a.Pass, cs.pass, a.WindowsInsideEnvelope)
		}
	}
}

// TestCompareAtTheDecisions: a model that decides apart from arrival
// arrives [30 0] and decides [10 20]; the real run's log counts its
// decisions, [10 20], so the series lies inside in both windows and the
// first window's attempts are 10 and the peak 20. A model deciding on
// arrival (no decided series) is compared by its attempts.
func TestCompareAtTheDecisions(t *testing.T) {
	real := []*measured.Run{{Decisions: measured.Series{Attempts: []int64{10, 20}, Accepts: []int64{10, 20}, FirstWindowAttempts: 10, PeakAttemptsPerWindow: 20},
		Crash: storm.Summary{Clients: 30, Attempts: 30}}}
	conv := 500.0
	rep := sim.Result{Clients: 30, Attempts: 30, FirstWindowAttempts: 30, PeakAttemptsPerWindow: 30, ConvergenceMs: &conv,
		Series: sim.Series{Attempts: []int64{30, 0}, Decided: []int64{10, 20}, Accepts: []int64{10, 20}}}
	reps := []sim.Result{rep, rep, rep}
	a := Series(real, reps, 250)[0]
	if a.Series != "attempts" || a.WindowsInsideEnvelope != 2 || a.SimMean[0] != 10 || a.SimMean[1] != 20 {
		t.Errorf("at the decisions: %+v, want [10 20] inside in both windows", a)
	}
	for _, m := range Metrics(real, reps, 0) {
		if (m.Metric == "first_window_attempts" && m.SimMean != 10) || (m.Metric == "peak_attempts_per_window" && m.SimMean != 20) {
			t.Errorf("%s: simulated %v, want %v", m.Metric, m.SimMean, map[string]float64{"first_window_attempts": 10, "peak_attempts_per_window": 20}[m.Metric])
		}
	}
	for i := range reps {
		reps[i].Series.Decided = nil
	}
	if a := Series(real, reps, 250)[0]; a.SimMean[0] != 30 || a.WindowsInsideEnvelope != 0 {
		t.Errorf("at arrival: %+v, want [30 0], no window inside", a)
	}
}

// TestDrainAtTheDecisions: a drain's attempts are compared where the
// fresh gateway's log counts them, at its decisions: the simulated drain's
// decided series [10 20] against the real [10 20] is inside in both
// windows, where its attempts by arrival, [30 0], would be in neither.
func TestDrainAtTheDecisions(t *testing.T) {
	dec := measured.Series{Attempts: []int64{10, 20}, Accepts: []int64{10, 20}}
	real := []*measured.Run{{Crash: storm.Summary{Clients: 30, Attempts: 30},
		Drain: &measured.Drain{Pace: "spread:over=5s", Decisions: &dec, Summary: storm.Summary{Attempts: 30, ConvergenceMs: 500}}}}
	series := sim.Series{Attempts: []int64{30, 0}, Decided: []int64{10, 20}, Accepts: []int64{10, 20}}
	rep := sim.Result{Clients: 30, Attempts: 30, Series: series}
	rep.Drain = &sim.DrainResult{Attempts: 30, DrainMs: 500, Series: &series}
	reps := []sim.Result{rep, rep, rep}
	drainAttempts := func() SeriesComparison {
		for _, s := range Series(real, reps, 250) {
			if s.Series == "drain.attempts" {
				return s
			}
		}
		t.Fatal("no drain.attempts series")
		return SeriesComparison{}
	}
	if a := drainAttempts(); a.SimMean[0] != 10 || a.SimMean[1] != 20 || a.WindowsInsideEnvelope != 2 {
		t.Errorf("at the decisions: %+v, want [10 20] inside in both windows", a)
	}
	series.Decided = nil
	if a := drainAttempts(); a.SimMean[0] != 30 || a.WindowsInsideEnvelope != 0 {
		t.Errorf("at arrival: %+v, want [30 0], no window inside", a)
	}
}

// TestAllowedOutside: with 200 replications a window falls outside by
// chance with p = 2/201; over 11 windows P(X >= 1) = 10% but P(X >= 2) =
// 0.5%, so one window may be outside. With 3 replications (p = 1/2) over 2
// windows P(X > 1) = 25%: both may be.
func TestAllowedOutside(t *testing.T) {
	cases := []struct{ windows, reps, want int }{{11, 200, 1}, {11, 100, 1}, {2, 3, 2}, {40, 10000, 0}, {0, 200, 0}}
	for _, c := range cases {
		if got := allowedOutside(c.windows, c.reps); got != c.want {
			t.Errorf("allowedOutside(%d, %d) = %d, want %d", c.windows, c.reps, got, c.want)
		}
	}
}

// TestSpreadRatio: window 0, real runs 10 and 30 (sample sd 14.14) against
// replications 18, 20, 22 (sd 2): 7.07; window 1 has no simulated spread
// and is skipped; window 2, real 0 and 4 (sd 2.83) against 1, 3, 5 (sd 2):
// 1.41. The lower middle of {1.41, 7.07} is 1.41. One real run: 0.
func TestSpreadRatio(t *testing.T) {
	real := [][]float64{{10, 5, 0}, {30, 5, 4}}
	sims := [][]float64{{18, 0, 1}, {20, 0, 3}, {22, 0, 5}}
	if got, want := spreadRatio(real, sims), math.Sqrt2; math.Abs(got-want) > 1e-12 {
		t.Errorf("spreadRatio = %v, want %v", got, want)
	}
	if got := spreadRatio(real[:1], sims); got != 0 {
		t.Errorf("one real run: spreadRatio = %v, want 0", got)
	}
	if got := spreadRatio(real, [][]float64{{1, 1, 1}, {1, 1, 1}}); got != 0 {
		t.Errorf("no simulated spread: spreadRatio = %v, want 0", got)
	}
}

// TestTwinsFollowTheSeeds: a real run's twin is the replication with its
// seed, whatever its place among the runs: runs with seeds 9 and 7 (a
// disturbed run 8 replaced) have replications 2 and 0 as twins, 110 and
// 90, mean 100; a run whose seed no replication has has no twin.
func TestTwinsFollowTheSeeds(t *testing.T) {
	var reps []sim.Result
	for _, a := range []int64{90, 100, 110, 120} {
		reps = append(reps, sim.Result{Attempts: a})
	}
	real := []*measured.Run{{Seed: 9, Crash: storm.Summary{Attempts: 100}}, {Seed: 7, Crash: storm.Summary{Attempts: 100}},
		{Seed: 40, Crash: storm.Summary{Attempts: 100}}}
	for _, m := range Metrics(real, reps, 7) {
		if m.Metric == "attempts" && m.SimTwin != 100 {
			t.Errorf("twin mean %v, want 100 (replications 2 and 0)", m.SimTwin)
		}
	}
}

// TestCompareStormCutAtHorizon: real runs that did not end by a 10 s
// horizon are judged on their rates over it, not on attempts or the time
// to all reconnected. Real: 3 useful and 10,000 wasted claims, 20,000
// attempts: 0.3, 1,000 and 2,000 per second. Replications: 4 useful (via
// the goodput series) and 9,000 wasted claims, 22,000 attempts: +33 %,
// -10 %, +10 %. The wasted series has no simulated events: no distance
// (NaN would not be written).
func TestCompareStormCutAtHorizon(t *testing.T) {
	run := func(outcome string) *measured.Run {
		return &measured.Run{Seed: 1, Crash: storm.Summary{Attempts: 20000, Clients: 10},
			Decisions: measured.Series{Attempts: []int64{20000}, Accepts: []int64{20000}},
			Outcome: &measured.Outcome{Outcome: outcome, Converged: outcome == "converged", HorizonMs: 10000, Useful: 3, Wasted: 10000,
				GoodputSeries: []int64{3}, WastedSeries: []int64{10000}}}
	}
	real := []*measured.Run{run("metastable"), run("metastable")}
	var reps []sim.Result
	for range 3 {
		reps = append(reps, sim.Result{Attempts: 22000, Clients: 10, Series: sim.Series{Attempts: []int64{22000}, Accepts: []int64{22000},
			Goodput: []int64{4}, Wasted: []int64{0}},
			OutcomeResult: &sim.OutcomeResult{Outcome: models.OutcomeMetastable, Metastable: true, HorizonMs: 10000, Wasted: 9000}})
	}
	byName := map[string]MetricComparison{}
	for _, m := range Metrics(real, reps, 1) {
		byName[m.Metric] = m
	}
	checks := []struct {
		name      string
		rel       float64
		pass      bool
		tolerance bool
	}{{"useful_per_s", 1.0 / 3, false, true}, {"wasted_per_s", -0.1, true, true}, {"attempts_per_s", 0.1, true, true}, {"attempts", 0.1, false, false}}
	for _, c := range checks {
		m, ok := byName[c.name]
		switch {
		case !ok:
			t.Errorf("%s: missing", c.name)
		case m.RelError == nil || math.Abs(*m.RelError-c.rel) > 1e-12:
			t.Errorf("%s: relative error %v, want %v", c.name, m.RelError, c.rel)
		case (m.Pass != nil) != c.tolerance || (m.Pass != nil && *m.Pass != c.pass):
			t.Errorf("%s: pass %v, want checked %v pass %v", c.name, m.Pass, c.tolerance, c.pass)
		}
	}
	if _, ok := byName["convergence_ms"]; ok {
		t.Error("convergence_ms compared for storms that did not converge")
	}
	for _, s := range Series(real, reps, 10000) {
		if s.Pass != nil || math.IsNaN(s.W1Ms) || math.IsNaN(s.KS) {
			t.Errorf("series %s: pass %v, W1 %v, KS %v: want unchecked and no NaN", s.Series, s.Pass, s.W1Ms, s.KS)
		}
	}

	o := Outcomes(real, reps)
	if a := o.Agreement("m"); !a.Pass || a.Observed != "real metastable 2; sim metastable 3" {
		t.Errorf("outcome agreement = %+v", a)
	}
	real[1] = run("unfinished")
	if a := Outcomes(real, reps).Agreement("m"); a.Pass {
		t.Errorf("one real run unfinished: %+v, want a failure", a)
	}
	if Outcomes([]*measured.Run{{}}, reps) != nil {
		t.Error("runs without a horizon have an outcome comparison")
	}
}

// TestConvergenceOverTheReplicationsThatEnded: the time to all
// reconnected is compared over the replications whose storm ended, when
// more than half did; the twin is the replication with the real run's
// seed, if it ended.
func TestConvergenceOverTheReplicationsThatEnded(t *testing.T) {
	real := []*measured.Run{{Seed: 2, Crash: storm.Summary{Attempts: 10, ConvergenceMs: 1000, AllReconnected: true}}}
	ended := func(ms float64) sim.Result { return sim.Result{Attempts: 10, ConvergenceMs: &ms} }
	reps := []sim.Result{ended(900), {Attempts: 10}, ended(1100), ended(1300)} // seeds 1..4
	convergence := func(reps []sim.Result) (MetricComparison, bool) {
		for _, m := range Metrics(real, reps, 1) {
			if m.Metric == "convergence_ms" {
				return m, true
			}
		}
		return MetricComparison{}, false
	}
	if c, ok := convergence(reps); !ok || c.SimMean != 1100 || c.SimTwin != 0 || c.Pass == nil || !*c.Pass {
		t.Errorf("3 of 4 ended: %+v (compared %v), want mean 1100 of the three, no twin (seed 2 did not end)", c, ok)
	}
	if c, ok := convergence(reps[:2]); ok {
		t.Errorf("1 of 2 ended: compared anyway: %+v", c)
	}
}

// TestEveryComparisonIsFinite: whatever the real runs and the
// replications hold (zeros on either side, one run, empty series, storms
// that ended or were cut), every number of every comparison is finite,
// so calibration.json never holds NaN or ±Inf. The cases are drawn at
// random, zeros half of the time.
func TestEveryComparisonIsFinite(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 26))
	count := func() int64 {
		if r.IntN(2) == 0 {
			return 0
		}
		return r.Int64N(5000)
	}
	series := func() []int64 {
		s := make([]int64, r.IntN(5))
		for i := range s {
			s[i] = count()
		}
		return s
	}
	for i := range 2000 {
		var runs []*measured.Run
		for k := range 1 + r.IntN(3) {
			run := &measured.Run{Run: k + 1, Seed: uint64(1 + k),
				Crash:     storm.Summary{Clients: int(1 + r.IntN(3)), Attempts: count(), Rejected: count(), ConvergenceMs: float64(count()), AllReconnected: r.IntN(2) == 0},
				Decisions: measured.Series{Attempts: series(), Accepts: series()}, ReclaimMs: float64(count())}
			if r.IntN(2) == 0 {
				conv := r.IntN(2) == 0
				run.Outcome = &measured.Outcome{Outcome: map[bool]string{true: "converged", false: "metastable"}[conv], Converged: conv,
					HorizonMs: float64(count()), Useful: count(), Wasted: count(), TimedOut: count(), GoodputSeries: series(), WastedSeries: series()}
			}
			runs = append(runs, run)
		}
		var reps []sim.Result
		for range 2 + r.IntN(3) {
			res := sim.Result{Clients: runs[0].Crash.Clients, Attempts: count(), Rejected: count(),
				Series: sim.Series{Attempts: series(), Accepts: series(), Goodput: series(), Wasted: series()}}
			if r.IntN(2) == 0 {
				conv := float64(count())
				res.ConvergenceMs = &conv
			}
			if r.IntN(2) == 0 {
				res.OutcomeResult = &sim.OutcomeResult{Outcome: models.OutcomeMetastable, HorizonMs: float64(count()), Wasted: count()}
			}
			reps = append(reps, res)
		}
		metrics, seriesCmp := Metrics(runs, reps, 1), Series(runs, reps, 250)
		agreements := Agreements("predicted", metrics, seriesCmp)
		for _, v := range []any{metrics, seriesCmp, agreements} {
			if ok, at := finitejson.Finite(v); !ok {
				t.Fatalf("case %d: %s is not finite in %+v", i, at, v)
			}
		}
	}
}

// TestARealZeroIsJudgedOnTheStormsSize: a storm cut at a 10 s horizon
// whose real runs wasted nothing, 1,000 clients: its size in claims per
// second is 100, so the 25 % rate tolerance allows the model 25 wasted
// claims a second. 20/s agrees, 30/s does not; both have no relative
// error and say why.
func TestARealZeroIsJudgedOnTheStormsSize(t *testing.T) {
	real := []*measured.Run{{Seed: 1, Crash: storm.Summary{Attempts: 20000, Clients: 1000},
		Decisions: measured.Series{Attempts: []int64{20000}, Accepts: []int64{900}},
		Outcome:   &measured.Outcome{Outcome: "metastable", HorizonMs: 10000, Useful: 900, GoodputSeries: []int64{900}, WastedSeries: []int64{0}}}}
	for _, c := range []struct {
		wasted int64
		pass   bool
	}{{200, true}, {300, false}} {
		reps := []sim.Result{{Attempts: 20000, Clients: 1000, Series: sim.Series{Attempts: []int64{20000}, Accepts: []int64{900}, Goodput: []int64{900}},
			OutcomeResult: &sim.OutcomeResult{Outcome: models.OutcomeMetastable, HorizonMs: 10000, Wasted: c.wasted}}}
		reps = append(reps, reps[0])
		for _, m := range Metrics(real, reps, 1) {
			if m.Metric != "wasted_per_s" {
				continue
			}
			want := float64(c.wasted) / 10
			if m.RelError != nil || m.AbsError != want || m.AbsFloor != 25 || m.Pass == nil || *m.Pass != c.pass {
				t.Errorf("%d wasted: rel %v abs %v floor %v pass %v; want none, %v, 25, %v", c.wasted, m.RelError, m.AbsError, m.AbsFloor, m.Pass, want, c.pass)
			}
			a := Agreements("predicted", []MetricComparison{m}, nil)[0]
			if !strings.Contains(a.Criterion, "real is 0") || !strings.Contains(a.Observed, "vs real 0") {
				t.Errorf("agreement %+v does not say the real figure is 0", a)
			}
		}
	}
}

// TestDrainAndDeployJudged: a drain is judged by the tolerances when the
// scenario's drain section paced it, reported only when it is the seed's;
// a rolling deploy is compared by its own metrics and series, not the
// crash storm's.
func TestDrainAndDeployJudged(t *testing.T) {
	reps := make([]sim.Result, 4)
	for i := range reps {
		series := sim.Series{Attempts: []int64{100, 20}, Accepts: []int64{90, 20}, Rejects: []int64{10, 0}}
		reps[i] = sim.Result{Clients: 100, Attempts: 130, Accepted: 100, Series: series}
		reps[i].Drain = &sim.DrainResult{Attempts: 105 + int64(i), DrainMs: 400, Series: &series}
	}
	drainRun := func(pace string) *measured.Run {
		return &measured.Run{Crash: storm.Summary{Clients: 100, Attempts: 130}, Drain: &measured.Drain{Pace: pace,
			Summary: storm.Summary{Attempts: 106, ConvergenceMs: 410, Series: storm.Series{Attempts: []int64{100, 20}, Accepts: []int64{90, 20}}}}}
	}
	for _, c := range []struct {
		pace   string
		judged bool
	}{{"", false}, {"spread:over=5s", true}} {
		runs := []*measured.Run{drainRun(c.pace)}
		for _, m := range Metrics(runs, reps, 1) {
			if strings.HasPrefix(m.Metric, "drain.attempts") || m.Metric == "drain.convergence_ms" {
				if (m.Pass != nil) != c.judged {
					t.Errorf("pace %q: %s judged %v, want %v", c.pace, m.Metric, m.Pass != nil, c.judged)
				}
			}
		}
		judgedSeries := 0
		for _, s := range Series(runs, reps, 250) {
			if strings.HasPrefix(s.Series, "drain.") && s.Pass != nil {
				judgedSeries++
			}
		}
		if want := map[bool]int{true: 2}[c.judged]; judgedSeries != want {
			t.Errorf("pace %q: %d drain series judged, want %d", c.pace, judgedSeries, want)
		}
	}
}

func TestDeployMetrics(t *testing.T) {
	reps := make([]sim.Result, 4)
	for i := range reps {
		reps[i] = sim.Result{Clients: 10, Attempts: 20 + int64(i), Series: sim.Series{Attempts: []int64{10, 10}, Accepts: []int64{8, 7}}}
		reps[i].Deploy = &sim.DeployResult{DurationMs: 3000, Goaways: 15}
	}
	runs := []*measured.Run{{Deploy: &storm.DeploySummary{Summary: storm.Summary{Clients: 10, Attempts: 21, Goaways: 15,
		Series: storm.Series{Attempts: []int64{10, 11}, Accepts: []int64{8, 7}}}, DurationMs: 3100}}}
	got := map[string]MetricComparison{}
	for _, m := range Metrics(runs, reps, 1) {
		got[m.Metric] = m
	}
	if _, crash := got["attempts"]; crash || len(got) == 0 {
		t.Fatalf("metrics %v: want the deploy's, not the crash storm's", got)
	}
	for _, name := range []string{"deploy.attempts", "deploy.duration_ms", "deploy.reconnects_per_client"} {
		if m, ok := got[name]; !ok || m.Pass == nil || !*m.Pass {
			t.Errorf("%s: %+v, want judged and passing", name, m)
		}
	}
	if per := got["deploy.reconnects_per_client"]; per.Real != 1.5 || per.SimMean != 1.5 {
		t.Errorf("reconnects per client real %v sim %v, want 1.5 and 1.5", per.Real, per.SimMean)
	}
	series := Series(runs, reps, 250)
	if len(series) != 2 || series[0].Series != "deploy.attempts" || series[0].Pass == nil {
		t.Errorf("series %+v, want the deploy's attempts and accepts, judged", series)
	}
}
