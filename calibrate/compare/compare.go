// Package compare sets real runs beside a model's simulated replications:
// metric by metric (the real mean against the replications' mean, central
// 95 % and min-max) and window by window, and judges the agreement by the
// tolerances below. It is pure.
package compare

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"stormsim/calibrate/measured"
	"stormsim/gateway/storm"
	"stormsim/internal/quantile"
	"stormsim/sim"
)

// Tolerances of the agreement a checked model must reach. A storm that
// ends is judged by its attempts and its time to all reconnected; one
// that a horizon cut (some real run did not converge) by its rates over
// the horizon, since its attempts grow with the horizon and it has no
// time to all reconnected.
const (
	AttemptsTolerance    = 0.10 // |sim mean - real mean| / real mean of total attempts
	ConvergenceTolerance = 0.20 // the same for the time until the last client is back
	RateTolerance        = 0.25 // the same for useful, wasted and all attempts per second over the horizon
)

// Interval quantiles: the simulated "95% interval" of a metric is the
// central 95% of the replications' values, the range a single real run
// should fall in if the model is right (not the confidence interval of the
// mean, which shrinks with the number of replications).
const (
	intervalLo = 0.025
	intervalHi = 0.975
)

// metricDef is one scalar compared between real runs and simulations.
type metricDef struct {
	name, unit string
	tolerance  float64 // agreement check on the relative error; 0 = reported only
	real       func(*measured.Run) (float64, bool)
	sim        func(*sim.Result) (float64, bool)
	when       checkWhen // which storms the tolerance applies to
	// someSim says the metric is compared over the replications that have
	// it, when more than half do (the time to all reconnected of a model
	// whose storm sometimes does not end: the outcome says how often).
	someSim bool
}

// checkWhen says which storms a metric's tolerance applies to.
type checkWhen uint8

const (
	always checkWhen = iota // every storm
	ended                   // storms whose real runs all ended (Converged)
	cut                     // storms a horizon cut in some real run
	paced                   // drains the scenario's drain section paced or hinted (the drain lab)
	never                   // reported only
)

// applies reports whether the tolerance applies to runs.
func (w checkWhen) applies(runs []*measured.Run) bool {
	switch w {
	case ended:
		return Converged(runs)
	case cut:
		return !Converged(runs)
	case paced:
		return PacedDrain(runs)
	case never:
		return false
	}
	return true
}

// PacedDrain reports whether every run's drain was told its pace by the
// scenario's drain section: such a drain is judged as a storm is.
func PacedDrain(runs []*measured.Run) bool {
	for _, r := range runs {
		if r.Drain == nil || r.Drain.Pace == "" {
			return false
		}
	}
	return len(runs) > 0
}

// Deploys reports whether the runs are rolling deploys, compared by the
// deploy's metrics and series instead of the crash storm's.
func Deploys(runs []*measured.Run) bool { return len(runs) > 0 && runs[0].Deploy != nil }

// scalar is a metric every run and every replication has.
func scalar(name, unit string, tolerance float64, real func(*measured.Run) float64, simulated func(*sim.Result) float64) metricDef {
	return metricDef{name: name, unit: unit, tolerance: tolerance,
		real: func(r *measured.Run) (float64, bool) { return real(r), true },
		sim:  func(s *sim.Result) (float64, bool) { return simulated(s), true }}
}

// checkedWhen returns d with its tolerance applied to storms w.
func (d metricDef) checkedWhen(w checkWhen) metricDef {
	d.when = w
	return d
}

// rate is a count per second over the horizon of a storm that has one.
func rate(count func(*measured.Run, *measured.Outcome) float64, simCount func(*sim.Result) float64) (func(*measured.Run) (float64, bool), func(*sim.Result) (float64, bool)) {
	return func(r *measured.Run) (float64, bool) {
			if r.Outcome == nil || r.Outcome.HorizonMs <= 0 {
				return 0, false
			}
			return count(r, r.Outcome) / (r.Outcome.HorizonMs / 1000), true
		}, func(s *sim.Result) (float64, bool) {
			if s.OutcomeResult == nil || s.HorizonMs <= 0 {
				return 0, false
			}
			return simCount(s) / (s.HorizonMs / 1000), true
		}
}

func rateDef(name string, count func(*measured.Run, *measured.Outcome) float64, simCount func(*sim.Result) float64) metricDef {
	real, simulated := rate(count, simCount)
	return metricDef{name: name, unit: "per_s", tolerance: RateTolerance, real: real, sim: simulated, when: cut}
}

// outcomeCount is a count of a storm's outcome, absent without one.
func outcomeCount(name string, real func(*measured.Outcome) int64, simulated func(*sim.OutcomeResult) int64) metricDef {
	return metricDef{name: name, unit: "count",
		real: func(r *measured.Run) (float64, bool) {
			if r.Outcome == nil {
				return 0, false
			}
			return float64(real(r.Outcome)), true
		},
		sim: func(s *sim.Result) (float64, bool) {
			if s.OutcomeResult == nil {
				return 0, false
			}
			return float64(simulated(s.OutcomeResult)), true
		}}
}

// Converged reports whether every run ended before its horizon (or had
// none).
func Converged(runs []*measured.Run) bool {
	for _, r := range runs {
		if r.Outcome != nil && !r.Outcome.Converged {
			return false
		}
	}
	return true
}

// decisions is a simulated storm's attempts per window where a real
// run's are counted, at the gateway's admission decisions: its decided
// series, or its attempts when the model decides on arrival.
func decisions(s *sim.Series) []int64 {
	if s.Decided != nil {
		return s.Decided
	}
	return s.Attempts
}

// firstNonZero is v's first value that is not 0, 0 if none.
func firstNonZero(v []int64) int64 {
	for _, x := range v {
		if x != 0 {
			return x
		}
	}
	return 0
}

func sum(v []int64) (n int64) {
	for _, x := range v {
		n += x
	}
	return n
}

var metricDefs = []metricDef{
	scalar("attempts", "count", AttemptsTolerance, func(r *measured.Run) float64 { return float64(r.Crash.Attempts) },
		func(s *sim.Result) float64 { return float64(s.Attempts) }).checkedWhen(ended),
	rateDef("useful_per_s", func(_ *measured.Run, o *measured.Outcome) float64 { return float64(o.Useful) },
		func(s *sim.Result) float64 { return float64(sum(s.Series.Goodput)) }),
	rateDef("wasted_per_s", func(_ *measured.Run, o *measured.Outcome) float64 { return float64(o.Wasted) },
		func(s *sim.Result) float64 { return float64(s.Wasted) }),
	rateDef("attempts_per_s", func(r *measured.Run, _ *measured.Outcome) float64 { return float64(r.Crash.Attempts) },
		func(s *sim.Result) float64 { return float64(s.Attempts) }),
	outcomeCount("connected", func(o *measured.Outcome) int64 { return o.Connected }, func(o *sim.OutcomeResult) int64 { return o.Connected }),
	outcomeCount("timed_out", func(o *measured.Outcome) int64 { return o.TimedOut }, func(o *sim.OutcomeResult) int64 { return o.TimedOut }),
	outcomeCount("skipped", func(o *measured.Outcome) int64 { return o.Skipped }, func(o *sim.OutcomeResult) int64 { return o.Skipped }),
	outcomeCount("shed", func(o *measured.Outcome) int64 { return o.Shed }, func(o *sim.OutcomeResult) int64 { return o.Shed }),
	scalar("rejected", "count", 0, func(r *measured.Run) float64 { return float64(r.Crash.Rejected) },
		func(s *sim.Result) float64 { return float64(s.Rejected) }),
	scalar("first_window_attempts", "count", 0, func(r *measured.Run) float64 { return float64(r.Decisions.FirstWindowAttempts) },
		func(s *sim.Result) float64 { return float64(firstNonZero(decisions(&s.Series))) }),
	scalar("peak_attempts_per_window", "count", 0, func(r *measured.Run) float64 { return float64(r.Decisions.PeakAttemptsPerWindow) },
		func(s *sim.Result) float64 { return float64(slices.Max(append(decisions(&s.Series), 0))) }),
	scalar("peak_accepts_per_window", "count", 0, func(r *measured.Run) float64 { return float64(r.Decisions.PeakAcceptsPerWindow) },
		func(s *sim.Result) float64 { return float64(s.PeakAcceptsPerWindow) }),
	scalar("connect_ms.p50", "ms", 0, func(r *measured.Run) float64 { return r.Crash.ConnectMs.P50 },
		func(s *sim.Result) float64 { return s.ConnectMs.P50 }),
	scalar("connect_ms.p90", "ms", 0, func(r *measured.Run) float64 { return r.Crash.ConnectMs.P90 },
		func(s *sim.Result) float64 { return s.ConnectMs.P90 }),
	{name: "convergence_ms", unit: "ms", tolerance: ConvergenceTolerance,
		real: func(r *measured.Run) (float64, bool) {
			return r.Crash.ConvergenceMs, r.Crash.AllReconnected || r.Outcome == nil
		},
		sim: func(s *sim.Result) (float64, bool) { return s.Convergence() }, someSim: true},
	{name: "reclaim_ms", unit: "ms",
		real: func(r *measured.Run) (float64, bool) { return r.ReclaimMs, true },
		sim: func(s *sim.Result) (float64, bool) {
			if s.Reclaim == nil {
				return 0, false
			}
			return s.Reclaim.ReclaimMs, true
		}},
	drainMetric("drain.attempts", "count", func(d *measured.Drain) float64 { return float64(d.Summary.Attempts) },
		func(d *sim.DrainResult) float64 { return float64(d.Attempts) }).judged(AttemptsTolerance, paced),
	drainMetric("drain.convergence_ms", "ms", func(d *measured.Drain) float64 { return d.Summary.ConvergenceMs },
		func(d *sim.DrainResult) float64 { return d.DrainMs }).judged(ConvergenceTolerance, paced),
	drainMetric("drain.rejected", "count", func(d *measured.Drain) float64 { return float64(d.Summary.Rejected) },
		func(d *sim.DrainResult) float64 { return float64(d.Rejected) }),
	drainMetric("drain.leftover_routes", "count", func(d *measured.Drain) float64 { return float64(d.RoutesLeft) },
		func(d *sim.DrainResult) float64 { return float64(d.LeftoverRoutes) }),
}

// judged returns d checked against tolerance on storms w.
func (d metricDef) judged(tolerance float64, w checkWhen) metricDef {
	d.tolerance, d.when = tolerance, w
	return d
}

// deployMetricDefs are a rolling deploy's metrics, in place of the crash
// storm's: every handshake of the deploy, the time to everyone back, the
// goaways per client.
var deployMetricDefs = []metricDef{
	deployMetric("deploy.attempts", "count", func(d *storm.DeploySummary) float64 { return float64(d.Attempts) },
		func(d *sim.Result) float64 { return float64(d.Attempts) }).judged(AttemptsTolerance, always),
	deployMetric("deploy.duration_ms", "ms", func(d *storm.DeploySummary) float64 { return d.DurationMs },
		func(d *sim.Result) float64 { return d.Deploy.DurationMs }).judged(ConvergenceTolerance, always),
	deployMetric("deploy.reconnects_per_client", "count", func(d *storm.DeploySummary) float64 { return float64(d.Goaways) / float64(d.Clients) },
		func(d *sim.Result) float64 { return float64(d.Deploy.Goaways) / float64(d.Clients) }).judged(AttemptsTolerance, always),
	deployMetric("deploy.drained_more_than_once", "count", func(d *storm.DeploySummary) float64 { return float64(d.DrainedMoreThanOnce) },
		func(d *sim.Result) float64 { return float64(d.Deploy.DrainedMoreThanOnce) }),
	deployMetric("deploy.reconnects.max", "count", func(d *storm.DeploySummary) float64 { return float64(d.Reconnects.Max) },
		func(d *sim.Result) float64 { return float64(d.Deploy.Reconnects.Max) }),
	deployMetric("deploy.rejected", "count", func(d *storm.DeploySummary) float64 { return float64(d.Rejected) },
		func(d *sim.Result) float64 { return float64(d.Rejected) }),
	deployMetric("deploy.client_seconds_offline", "count", func(d *storm.DeploySummary) float64 { return d.ClientSecondsOffline },
		func(d *sim.Result) float64 { return d.Deploy.ClientSecondsOffline }),
}

// deployMetric is a metric of a rolling deploy, absent when either side
// has none.
func deployMetric(name, unit string, real func(*storm.DeploySummary) float64, simulated func(*sim.Result) float64) metricDef {
	return metricDef{name: name, unit: unit,
		real: func(r *measured.Run) (float64, bool) {
			if r.Deploy == nil {
				return 0, false
			}
			return real(r.Deploy), true
		},
		sim: func(s *sim.Result) (float64, bool) {
			if s.Deploy == nil {
				return 0, false
			}
			return simulated(s), true
		}}
}

// drainMetric is a metric of the drain phase, absent when either side has
// no drain.
func drainMetric(name, unit string, real func(*measured.Drain) float64, simulated func(*sim.DrainResult) float64) metricDef {
	return metricDef{name: name, unit: unit,
		real: func(r *measured.Run) (float64, bool) {
			if r.Drain == nil {
				return 0, false
			}
			return real(r.Drain), true
		},
		sim: func(s *sim.Result) (float64, bool) {
			if s.Drain == nil {
				return 0, false
			}
			return simulated(s.Drain), true
		}}
}

// MetricComparison is one metric, real against simulated.
type MetricComparison struct {
	Metric   string    `json:"metric"`
	Unit     string    `json:"unit"`      // "count" or "ms"
	Real     float64   `json:"real"`      // mean over the real runs
	RealRuns []float64 `json:"real_runs"` // each real run's value
	SimMean  float64   `json:"sim_mean"`
	SimLo    float64   `json:"sim_lo"`  // 2.5th percentile of the replications
	SimHi    float64   `json:"sim_hi"`  // 97.5th percentile
	SimMin   float64   `json:"sim_min"` // smallest replication value
	SimMax   float64   `json:"sim_max"` // largest
	// SimTwin is the mean of the replications with the real runs' own seeds:
	// the same draws as the real clients made; TwinRelError is (SimTwin -
	// Real) / Real. With latency the twin's storm still diverges from the
	// real one (other clients meet an empty bucket), so for a metric decided
	// by a few clients' draws, such as the last client back, it is a hint,
	// not a check. Both are 0 when no twin has the metric.
	SimTwin      float64  `json:"sim_twin"`
	TwinRelError *float64 `json:"twin_rel_error"` // null when Real is 0 or no twin has the metric
	// RealPercentile is where the real mean falls among the replications
	// (the fraction of them below it, ties counted half).
	RealPercentile float64 `json:"real_percentile"`
	// RelError is (SimMean - Real) / Real; 0 when both are 0, and null
	// when only Real is 0: a relative error against nothing has no value.
	// AbsError, SimMean - Real in the metric's unit, then judges.
	RelError *float64 `json:"rel_error"`
	AbsError float64  `json:"abs_error"`
	Inside   bool     `json:"inside"` // SimLo <= Real <= SimHi
	// Tolerance is the checked |RelError| bound, if any. When Real is 0,
	// the check is |AbsError| <= AbsFloor instead: Tolerance times the
	// storm's own size in the metric's unit (Scale).
	Tolerance float64 `json:"tolerance,omitempty"`
	AbsFloor  float64 `json:"abs_floor,omitempty"`
	Pass      *bool   `json:"pass,omitempty"` // the check held, if checked
}

// Scale is a storm's size in a metric's unit, what an absolute error is
// weighed against when the real figure is 0 and a relative error has no
// value: the clients for a count, the clients per second of horizon for
// a rate, the horizon for a time (0 without one: a time the real runs
// put at 0 then agrees only with 0).
func Scale(unit string, runs []*measured.Run) float64 {
	if len(runs) == 0 {
		return 0
	}
	clients, horizonMs := float64(runs[0].Crash.Clients), 0.0
	if d := runs[0].Deploy; d != nil {
		clients = float64(d.Clients)
	}
	if o := runs[0].Outcome; o != nil {
		horizonMs = o.HorizonMs
	}
	switch unit {
	case "count":
		return clients
	case "per_s":
		if horizonMs > 0 {
			return clients / (horizonMs / 1000)
		}
	case "ms":
		return horizonMs
	}
	return 0
}

// Metrics compares every metric both sides have. Replication i used seed
// firstSeed+i; a real run's twin is the replication with its seed.
func Metrics(runs []*measured.Run, reps []sim.Result, firstSeed uint64) []MetricComparison {
	var out []MetricComparison
	defs := metricDefs
	if Deploys(runs) {
		defs = deployMetricDefs
	}
	for _, d := range defs {
		var realVals, simVals, twins []float64
		ok := true
		for _, r := range runs {
			v, has := d.real(r)
			ok = ok && has
			realVals = append(realVals, v)
		}
		seeds := map[uint64]float64{} // replication seed -> value
		for i := range reps {
			v, has := d.sim(&reps[i])
			if has {
				simVals = append(simVals, v)
				seeds[firstSeed+uint64(i)] = v
			}
		}
		enough := len(simVals) == len(reps) || (d.someSim && 2*len(simVals) > len(reps))
		if !ok || !enough || len(runs) == 0 || len(reps) == 0 {
			continue
		}
		for _, r := range runs {
			if v, has := seeds[r.Seed]; has && r.Seed >= firstSeed {
				twins = append(twins, v)
			}
		}
		c := MetricComparison{Metric: d.name, Unit: d.unit, Real: stat.Mean(realVals, nil), RealRuns: realVals,
			SimMean: stat.Mean(simVals, nil)}
		c.SimLo, c.SimHi = Interval(simVals)
		c.SimMin, c.SimMax = slices.Min(simVals), slices.Max(simVals)
		c.RealPercentile = percentileOf(c.Real, simVals)
		c.RelError, c.AbsError = relError(c.SimMean, c.Real), c.SimMean-c.Real
		if len(twins) > 0 { // none when no twin has the metric
			c.SimTwin = stat.Mean(twins, nil)
			c.TwinRelError = relError(c.SimTwin, c.Real)
		}
		c.Inside = c.SimLo <= c.Real && c.Real <= c.SimHi
		if d.tolerance > 0 && d.when.applies(runs) {
			c.Tolerance = d.tolerance
			var pass bool
			if c.RelError != nil {
				pass = math.Abs(*c.RelError) <= d.tolerance
			} else {
				c.AbsFloor = d.tolerance * Scale(d.unit, runs)
				pass = math.Abs(c.AbsError) <= c.AbsFloor
			}
			c.Pass = &pass
		}
		out = append(out, c)
	}
	return out
}

// Interval is the central 95% of values: the empirical 2.5th and 97.5th
// percentiles.
func Interval(values []float64) (lo, hi float64) {
	v := slices.Sorted(slices.Values(values))
	return quantile.NearestRank(v, intervalLo), quantile.NearestRank(v, intervalHi)
}

// percentileOf is the fraction of values below x, ties counted half: the
// mid-rank of x among the simulated values.
func percentileOf(x float64, values []float64) float64 {
	below, equal := 0, 0
	for _, v := range values {
		switch {
		case v < x:
			below++
		case v == x:
			equal++
		}
	}
	return (float64(below) + float64(equal)/2) / float64(len(values))
}

// relError is (sim - real) / real: 0 when both are 0, nil when only real
// is.
func relError(sim, real float64) *float64 {
	var e float64
	switch {
	case real != 0:
		e = (sim - real) / real
	case sim != 0:
		return nil
	}
	return &e
}

// SeriesComparison compares one per-window series. Window i covers
// [i*WindowMs, (i+1)*WindowMs) from the failure.
type SeriesComparison struct {
	Series   string    `json:"series"` // "attempts", "accepts" or "connected_fraction"
	WindowMs float64   `json:"window_ms"`
	Real     []float64 `json:"real"`     // mean over the real runs
	SimMean  []float64 `json:"sim_mean"` // mean over the replications
	SimLo    []float64 `json:"sim_lo"`   // 2.5th percentile per window
	SimHi    []float64 `json:"sim_hi"`   // 97.5th percentile per window
	SimMin   []float64 `json:"sim_min"`  // smallest replication value per window
	SimMax   []float64 `json:"sim_max"`  // largest
	// WindowsInside counts windows where the real value lies in [SimLo,
	// SimHi], WindowsInsideEnvelope those where it lies in [SimMin, SimMax].
	WindowsInside         int `json:"windows_inside"`
	WindowsInsideEnvelope int `json:"windows_inside_envelope"`
	Windows               int `json:"windows"`
	// For count series, diagnostics of the shape: distances between the
	// distributions over time of the real and the simulated events (window
	// centres weighted by counts, the replications pooled).
	W1Ms float64 `json:"w1_ms,omitempty"` // Wasserstein-1 (earth mover's) distance, ms
	KS   float64 `json:"ks,omitempty"`    // Kolmogorov-Smirnov statistic
	// W1P is the Monte-Carlo p-value of W1Ms: the fraction of simulated
	// stand-ins (the mean of as many replications as there are real runs)
	// at least as far from the pooled simulation. It is small when the real
	// runs vary more than the model's runs do.
	W1P float64 `json:"w1_p,omitempty"`
	// AllowedOutside is how many windows may lie outside the envelope (count
	// series): were the model exact, a real window would fall outside the
	// min-max of R replications with probability 2/(R+1), and this is the
	// smallest k that more than k of the windows exceed with probability
	// below 5% (binomial).
	AllowedOutside int `json:"allowed_outside,omitempty"`
	// SpreadRatio (count series, two real runs or more) is the median, over
	// the windows where the replications vary, of the real runs' standard
	// deviation over the replications': about 1 when the real storm varies
	// from run to run as the model's draws make it vary, well above 1 when
	// something the model leaves out (here, CPU contention on a small lab
	// machine) moves the real runs; the spread criterion then fails for
	// want of spread, not of level. 0 when it cannot be computed.
	SpreadRatio float64 `json:"spread_ratio,omitempty"`
	// Pass (count series): the real series lies inside the simulated
	// spread, all but at most AllowedOutside windows.
	Pass *bool `json:"pass,omitempty"`
}

// seriesOf extracts a per-window series from a real run and a result.
type seriesOf struct {
	name string
	real func(*measured.Run) []float64
	sim  func(*sim.Result) []float64
	// counts says the series counts events (a distance applies); otherwise
	// it is a level such as the connected fraction.
	counts bool
	// checked says the window check decides agreement on a storm that
	// ended; on one a horizon cut, and for the other series, it is shown.
	checked bool
	// when, for a drain's series, is when its window check decides (a
	// paced drain); 0 (always) defers to checked.
	when checkWhen
}

// outcomeSeries is a series of a real run's outcome, nil without one.
func outcomeSeries(v func(*measured.Outcome) []int64) func(*measured.Run) []float64 {
	return func(r *measured.Run) []float64 {
		if r.Outcome == nil {
			return nil
		}
		return int64s(v(r.Outcome))
	}
}

var seriesDefs = []seriesOf{
	{"attempts", func(r *measured.Run) []float64 { return int64s(r.Decisions.Attempts) }, func(s *sim.Result) []float64 { return int64s(decisions(&s.Series)) }, true, true, always},
	{"accepts", func(r *measured.Run) []float64 { return int64s(r.Decisions.Accepts) }, func(s *sim.Result) []float64 { return int64s(s.Series.Accepts) }, true, true, always},
	// Claims done per window: useful ones (the client was still there) and
	// wasted ones, by when they were done; storms with a horizon only.
	{"goodput", outcomeSeries(func(o *measured.Outcome) []int64 { return o.GoodputSeries }),
		func(s *sim.Result) []float64 { return int64s(s.Series.Goodput) }, true, false, always},
	{"wasted", outcomeSeries(func(o *measured.Outcome) []int64 { return o.WastedSeries }),
		func(s *sim.Result) []float64 { return int64s(s.Series.Wasted) }, true, false, always},
	// Both sides from accepts at the admission decision (the real
	// Summary's own connected fraction counts hellos; the simulator has no
	// per-window connects).
	{"connected_fraction", func(r *measured.Run) []float64 {
		return cumulativeFraction(int64s(r.Decisions.Accepts), r.Crash.Clients)
	},
		func(s *sim.Result) []float64 { return cumulativeFraction(int64s(s.Series.Accepts), s.Clients) }, false, false, always},
	// A drain's handshakes per window from its SIGTERM, at the fresh
	// gateway's decisions (the real ones by the midpoint of their sending
	// and their answer when its log has none): judged when the drain
	// section paced it.
	{"drain.attempts", drainSeries(func(s storm.Series) []int64 { return s.Attempts }),
		simDrainSeries(decisions), true, false, paced},
	{"drain.accepts", drainSeries(func(s storm.Series) []int64 { return s.Accepts }),
		simDrainSeries(func(s *sim.Series) []int64 { return s.Accepts }), true, false, paced},
}

// deploySeriesDefs are a rolling deploy's series from its first drain:
// every handshake, and the accepted ones, per window.
var deploySeriesDefs = []seriesOf{
	{"deploy.attempts", deploySeries(func(s storm.Series) []int64 { return s.Attempts }),
		func(s *sim.Result) []float64 { return int64s(decisions(&s.Series)) }, true, true, always},
	{"deploy.accepts", deploySeries(func(s storm.Series) []int64 { return s.Accepts }),
		func(s *sim.Result) []float64 { return int64s(s.Series.Accepts) }, true, true, always},
}

// drainSeries is a drain's series at the fresh gateway's decisions, where
// the simulator counts it; by the clients' midpoints when the run has
// none.
func drainSeries(v func(storm.Series) []int64) func(*measured.Run) []float64 {
	return func(r *measured.Run) []float64 {
		switch {
		case r.Drain == nil:
			return nil
		case r.Drain.Decisions != nil:
			return int64s(v(storm.Series{Attempts: r.Drain.Decisions.Attempts, Accepts: r.Drain.Decisions.Accepts}))
		}
		return int64s(v(r.Drain.Summary.Series))
	}
}

func simDrainSeries(v func(*sim.Series) []int64) func(*sim.Result) []float64 {
	return func(s *sim.Result) []float64 {
		if s.Drain == nil || s.Drain.Series == nil {
			return nil
		}
		return int64s(v(s.Drain.Series))
	}
}

// deploySeries is a deploy's series at its gateways' decisions, by the
// clients' midpoints when the run has none.
func deploySeries(v func(storm.Series) []int64) func(*measured.Run) []float64 {
	return func(r *measured.Run) []float64 {
		switch {
		case r.Deploy == nil:
			return nil
		case r.DeployDecisions != nil:
			return int64s(v(storm.Series{Attempts: r.DeployDecisions.Attempts, Accepts: r.DeployDecisions.Accepts}))
		}
		return int64s(v(r.Deploy.Series))
	}
}

// Series compares every series, padding all to one length (counts with
// zeros, fractions with their last value).
func Series(runs []*measured.Run, reps []sim.Result, windowMs float64) []SeriesComparison {
	var out []SeriesComparison
	ended := Converged(runs)
	defs := seriesDefs
	if Deploys(runs) {
		defs = deploySeriesDefs
	}
	for _, d := range defs {
		realRuns := make([][]float64, len(runs))
		simRuns := make([][]float64, len(reps))
		n, has := 0, false
		for k, r := range runs {
			realRuns[k] = d.real(r)
			n, has = max(n, len(realRuns[k])), has || realRuns[k] != nil
		}
		for i := range reps {
			simRuns[i] = d.sim(&reps[i])
			n = max(n, len(simRuns[i]))
		}
		if !has || n == 0 {
			continue
		}
		for k := range realRuns {
			realRuns[k] = padSeries(realRuns[k], n, d.counts)
		}
		for i := range simRuns {
			simRuns[i] = padSeries(simRuns[i], n, d.counts)
		}
		c := SeriesComparison{Series: d.name, WindowMs: windowMs, Windows: n,
			Real: meanSeries(realRuns), SimMean: meanSeries(simRuns), SimLo: make([]float64, n), SimHi: make([]float64, n),
			SimMin: make([]float64, n), SimMax: make([]float64, n)}
		column := make([]float64, len(simRuns))
		for w := range n {
			for i := range simRuns {
				column[i] = simRuns[i][w]
			}
			c.SimLo[w], c.SimHi[w] = Interval(column)
			c.SimMin[w], c.SimMax[w] = slices.Min(column), slices.Max(column)
			if c.SimLo[w] <= c.Real[w] && c.Real[w] <= c.SimHi[w] {
				c.WindowsInside++
			}
			if c.SimMin[w] <= c.Real[w] && c.Real[w] <= c.SimMax[w] {
				c.WindowsInsideEnvelope++
			}
		}
		if d.counts {
			c.SpreadRatio = spreadRatio(realRuns, simRuns)
			if floats.Sum(c.Real) > 0 && floats.Sum(c.SimMean) > 0 { // a distance needs events on both sides
				c.W1Ms, c.KS, c.W1P = seriesDistance(c.Real, c.SimMean, simRuns, len(runs), windowMs)
			}
			c.AllowedOutside = allowedOutside(n, len(reps))
			if (d.checked && ended && d.when == always) || (d.when != always && d.when.applies(runs)) {
				pass := c.Windows-c.WindowsInsideEnvelope <= c.AllowedOutside
				c.Pass = &pass
			}
		}
		out = append(out, c)
	}
	return out
}

// spreadRatio is SeriesComparison.SpreadRatio for padded series of equal
// length: per window the sample standard deviation of the real runs over
// that of the replications, the median of these (the lower middle one)
// over the windows where the replications' is positive; 0 with fewer than 2 of either or no such
// window.
func spreadRatio(realRuns, simRuns [][]float64) float64 {
	if len(realRuns) < 2 || len(simRuns) < 2 {
		return 0
	}
	var ratios []float64
	realCol, simCol := make([]float64, len(realRuns)), make([]float64, len(simRuns))
	for w := range realRuns[0] {
		for k := range realRuns {
			realCol[k] = realRuns[k][w]
		}
		for i := range simRuns {
			simCol[i] = simRuns[i][w]
		}
		if sd := stat.StdDev(simCol, nil); sd > 0 {
			ratios = append(ratios, stat.StdDev(realCol, nil)/sd)
		}
	}
	return quantile.Median(ratios)
}

// allowedOutside is the smallest k with P(X > k) < 5% for X ~
// Binomial(windows, 2/(reps+1)): the number of windows outside the min-max
// envelope of reps replications that an exact model would exceed rarely.
func allowedOutside(windows, reps int) int {
	if windows == 0 || reps < 1 {
		return 0
	}
	b := distuv.Binomial{N: float64(windows), P: 2 / float64(reps+1)}
	k := 0
	for 1-b.CDF(float64(k)) >= 0.05 {
		k++
	}
	return k
}

// seriesDistance measures how far the real mean series is from the pooled
// simulation (W1 in ms and KS, with events at window centres) and how
// unusual that is: the fraction of stand-ins, each the mean of k
// consecutive replications, whose W1 to the pooled simulation is at least
// the real one's.
func seriesDistance(real, pooled []float64, simRuns [][]float64, k int, windowMs float64) (w1, ks, p float64) {
	centres := make([]float64, len(pooled))
	for i := range centres {
		centres[i] = (float64(i) + 0.5) * windowMs
	}
	w1 = wasserstein(centres, real, pooled)
	ks = kolmogorovSmirnov(centres, real, pooled)
	k = max(k, 1)
	var farther, total int
	for start := 0; start+k <= len(simRuns); start += k {
		standIn := meanSeries(simRuns[start : start+k])
		if wasserstein(centres, standIn, pooled) >= w1 {
			farther++
		}
		total++
	}
	if total > 0 {
		p = float64(farther) / float64(total)
	}
	return w1, ks, p
}

// wasserstein is the W1 distance between two weightings of the same
// support (nonnegative weights); NaN if either is all zero.
func wasserstein(x, a, b []float64) float64 {
	xa, wa := support(x, a)
	xb, wb := support(x, b)
	if xa == nil || xb == nil {
		return math.NaN()
	}
	return stat.WassersteinDistance(xa, xb, wa, wb)
}

func kolmogorovSmirnov(x, a, b []float64) float64 {
	xa, wa := support(x, a)
	xb, wb := support(x, b)
	if xa == nil || xb == nil {
		return math.NaN()
	}
	return stat.KolmogorovSmirnov(xa, wa, xb, wb)
}

// support keeps the points of x with a positive weight in w, weights
// normalised to sum to 1 (gonum's distances want positive weights); nil if
// there are none.
func support(x, w []float64) (xs, ws []float64) {
	sum := 0.0
	for _, v := range w {
		if v > 0 {
			sum += v
		}
	}
	if sum <= 0 {
		return nil, nil
	}
	for i, v := range w {
		if v > 0 {
			xs, ws = append(xs, x[i]), append(ws, v/sum)
		}
	}
	return xs, ws
}

func meanSeries(runs [][]float64) []float64 {
	if len(runs) == 0 {
		return nil
	}
	out := make([]float64, len(runs[0]))
	for _, r := range runs {
		for i, v := range r {
			out[i] += v
		}
	}
	for i := range out {
		out[i] /= float64(len(runs))
	}
	return out
}

// padSeries extends s to n windows: counts with 0, levels with their last
// value.
func padSeries(s []float64, n int, counts bool) []float64 {
	out := make([]float64, n)
	copy(out, s)
	if !counts && len(s) > 0 {
		for i := len(s); i < n; i++ {
			out[i] = s[len(s)-1]
		}
	}
	return out
}

// cumulativeFraction is the running sum of accepts over clients: the
// fraction connected by the end of each window.
func cumulativeFraction(accepts []float64, clients int) []float64 {
	out := make([]float64, len(accepts))
	sum := 0.0
	for i, a := range accepts {
		sum += a
		if clients > 0 {
			out[i] = sum / float64(clients)
		}
	}
	return out
}

func int64s(v []int64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}
