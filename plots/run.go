package plots

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"

	"stormsim/sim"
)

// Run is one storm run (one config and seed) as the charts see it. Times
// are milliseconds since the failure at t = 0.
type Run struct {
	Name  string // config name, shown in the caption
	Seed  uint64 // (first) seed, shown in the caption
	Label string // what an overlay calls this run; "" means Name

	Policies []PolicySeries // one entry per backoff policy, in legend order

	// CapacityPerWindow is the most handshakes admission accepts in one
	// metrics window: per_slot*window/slot for slots, burst+rate*window for
	// a token bucket. +Inf (or 0) means unlimited: no capacity line.
	CapacityPerWindow float64

	// Outage, when set, is shaded on the time charts (for example from the
	// failure until the lease reclaim, or until the first accept).
	Outage *Interval

	// Reclaim, when set, adds the reclaim-time histogram.
	Reclaim *Reclaim

	// DBBudgetRowsPerS is the database read budget in rows per second drawn
	// on the database chart; 0 means none.
	DBBudgetRowsPerS float64

	// ClaimCapacityPerWindow is the most route claims the surviving
	// gateways complete in one metrics window (capacity model), drawn on
	// the goodput chart; 0 means none.
	ClaimCapacityPerWindow float64
}

// PolicySeries is what one backoff policy did in a run: per-window counts
// (entry i covers [i*WindowMs, (i+1)*WindowMs)) and summary times.
type PolicySeries struct {
	Policy   string  // legend name
	Clients  int     // clients that lost their connection
	WindowMs float64 // metrics window length in ms

	AttemptsPerWindow []float64 // handshakes that reached admission
	AcceptsPerWindow  []float64 // handshakes admitted; their running sum over Clients is the connected fraction
	// GoawaysPerWindow, in a rolling deploy, is the goaways sent: every
	// client starts connected, and leaves and comes back again.
	GoawaysPerWindow []float64

	ConnectP99Ms  float64 // 99th percentile connect time, marked on the connected chart; 0: none (a storm that never ended)
	ConvergenceMs float64 // time of the last successful connect; 0 when the storm did not converge
	// HorizonMs is the horizon that cut the storm, ms: its series run to
	// it, and the charts mark it; 0 when the storm ended before it.
	HorizonMs float64

	// StaleRoutesPerWindow is the number of stale routes at the end of each
	// window (lease model), drawn over its window; nil when the model is off.
	StaleRoutesPerWindow []float64
	// StaleRouteSeconds is the exact integral of stale routes over time in
	// route-seconds, for the title; 0 means sum the series times the window.
	StaleRouteSeconds float64
	// DBRowsPerS is the database read rate in rows per second in each
	// window (database model); nil when the model is off.
	DBRowsPerS []float64

	// With an outcome (timeouts, a horizon): route claims done per window
	// that connected a client, those wasted on clients that had given up,
	// and the handshakes waiting at each window's end; nil otherwise.
	GoodputPerWindow []float64
	WastedPerWindow  []float64
	QueuePerWindow   []float64

	// Replicated is the spread over replications for the work-vs-time
	// chart; nil for a single run, which then uses the totals above.
	Replicated *Replicated
}

// Interval is a time span [StartMs, EndMs] in ms since the failure.
type Interval struct {
	StartMs, EndMs float64
	Label          string // legend text; "" means "outage"
}

// Reclaim is the lease reclaim time of each replication and the analytic
// bound [duration - renew_every, duration + sweep_every] it must lie in.
type Reclaim struct {
	TimesMs []float64
	BoundMs [2]float64
}

// Replicated summarises a policy over Runs replications. Lo and Hi of each
// Spread are drawn as error bars and SpreadKind says what they are.
type Replicated struct {
	Runs          int
	Attempts      Spread // total handshake attempts per run
	ConvergenceMs Spread // time of the last connect per run, ms
	SpreadKind    string // for example "mean ± 1 sd" or "min–max"
}

// Spread is a central value with an interval around it, in the unit of
// the quantity it describes.
type Spread struct {
	Mean, Lo, Hi float64
}

// MeanStd summarises samples as mean ± one (sample) standard deviation.
func MeanStd(samples []float64) Spread {
	m, sd := stat.MeanStdDev(samples, nil)
	if len(samples) < 2 {
		sd = 0
	}
	return Spread{Mean: m, Lo: m - sd, Hi: m + sd}
}

// MeanMinMax summarises samples as their mean and range.
func MeanMinMax(samples []float64) Spread {
	if len(samples) == 0 {
		return Spread{Mean: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	}
	return Spread{Mean: stat.Mean(samples, nil), Lo: floats.Min(samples), Hi: floats.Max(samples)}
}

// FromResults turns one run's per-policy results into a Run.
// capacityPerWindow is as in Run.CapacityPerWindow: the admission model's
// WindowBound(window), +Inf for unlimited. When the lease model is on, the
// reclaim time of the first result (the lease does not depend on the
// policy) becomes Reclaim and the span until it is shaded as the outage;
// the database model's budget becomes DBBudgetRowsPerS.
func FromResults(name string, seed uint64, results []sim.Result, capacityPerWindow float64) Run {
	r := Run{Name: name, Seed: seed, CapacityPerWindow: capacityPerWindow}
	for _, res := range results {
		p := PolicySeries{
			Policy:            res.Policy,
			Clients:           res.Clients,
			WindowMs:          res.WindowMs,
			AttemptsPerWindow: int64s(res.Series.Attempts),
			AcceptsPerWindow:  int64s(res.Series.Accepts),
			ConnectP99Ms:      res.ConnectMs.P99,
		}
		p.ConvergenceMs, _ = res.Convergence() // 0, drawn nowhere, when it did not converge
		if res.Deploy != nil {
			p.GoawaysPerWindow = int64s(res.Series.Goaways)
			p.ConnectP99Ms = 0 // over every reconnect of the deploy: not 99 % of the clients
		}
		if o := res.OutcomeResult; o != nil && !o.Converged {
			p.ConnectP99Ms = 0 // over the clients that connected: not 99 % of all
			p.HorizonMs = o.HorizonMs
		}
		if res.Series.Goodput != nil {
			p.GoodputPerWindow = int64s(res.Series.Goodput)
			p.WastedPerWindow = int64s(res.Series.Wasted)
			p.QueuePerWindow = int64s(res.Series.Queue)
		}
		if rc := res.Reclaim; rc != nil {
			p.StaleRoutesPerWindow = int64s(rc.StaleRoutes)
			p.StaleRouteSeconds = rc.StaleRouteSeconds
			if r.Reclaim == nil {
				r.Reclaim = &Reclaim{TimesMs: []float64{rc.ReclaimMs}, BoundMs: [2]float64{rc.BoundLoMs, rc.BoundHiMs}}
				r.Outage = &Interval{StartMs: 0, EndMs: rc.ReclaimMs, Label: "until lease reclaim"}
			}
		}
		if db := res.Database; db != nil {
			p.DBRowsPerS = db.RowsPerS
			if r.DBBudgetRowsPerS == 0 {
				r.DBBudgetRowsPerS = db.ReadBudgetPerS
			}
		}
		r.Policies = append(r.Policies, p)
	}
	return r
}

func int64s(v []int64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func (r *Run) label() string {
	if r.Label != "" {
		return r.Label
	}
	return r.Name
}

func (r *Run) hasCapacity() bool {
	c := r.CapacityPerWindow
	return c > 0 && !math.IsInf(c, 0) && !math.IsNaN(c)
}

// Validate reports input the charts cannot draw honestly: a run with no
// policies, a window that is not positive, a negative or non-finite count,
// a reclaim bound that is not an interval. Overlay and Write check it too.
func (r *Run) Validate() error {
	if len(r.Policies) == 0 {
		return fmt.Errorf("run %q: no policies to chart", r.label())
	}
	for i := range r.Policies {
		p := &r.Policies[i]
		where := fmt.Sprintf("run %q policy %q", r.label(), p.Policy)
		if !(p.WindowMs > 0) {
			return fmt.Errorf("%s: window must be > 0 ms (got %v)", where, p.WindowMs)
		}
		if p.HorizonMs < 0 || math.IsNaN(p.HorizonMs) || math.IsInf(p.HorizonMs, 0) {
			return fmt.Errorf("%s: horizon must be finite and >= 0 ms (got %v)", where, p.HorizonMs)
		}
		if len(p.AcceptsPerWindow) > len(p.AttemptsPerWindow) {
			return fmt.Errorf("%s: %d accept windows but only %d attempt windows", where, len(p.AcceptsPerWindow), len(p.AttemptsPerWindow))
		}
		for _, s := range []struct {
			name string
			v    []float64
		}{
			{"attempts", p.AttemptsPerWindow}, {"accepts", p.AcceptsPerWindow},
			{"stale routes", p.StaleRoutesPerWindow}, {"db rows/s", p.DBRowsPerS},
			{"goodput", p.GoodputPerWindow}, {"wasted", p.WastedPerWindow}, {"queue", p.QueuePerWindow},
		} {
			for j, v := range s.v {
				if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
					return fmt.Errorf("%s: %s window %d must be finite and >= 0 (got %v)", where, s.name, j, v)
				}
			}
		}
	}
	if r.Reclaim != nil && !(r.Reclaim.BoundMs[0] <= r.Reclaim.BoundMs[1]) {
		return fmt.Errorf("run %q: reclaim bound [%v, %v] is not an interval", r.label(), r.Reclaim.BoundMs[0], r.Reclaim.BoundMs[1])
	}
	return nil
}
