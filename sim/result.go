package sim

import (
	"stormsim/models"
	"time"
)

// Result is what one storm did under one policy. Times are in milliseconds
// since t = 0 (the failure), as float64 with nanosecond precision.
type Result struct {
	Policy                string `json:"policy"`
	Clients               int    `json:"clients"`
	Attempts              int64  `json:"attempts"`                 // handshakes that reached a gateway before the horizon, counted at their arrival
	Accepted              int64  `json:"accepted"`                 // of those, admitted with their answer sent before the horizon
	Rejected              int64  `json:"rejected"`                 // answered without admission before the horizon: 429, 503 from a draining gateway, refused by the dead one
	Abandoned             int64  `json:"abandoned"`                // clients that gave up (max_attempts)
	PeakAttemptsPerWindow int64  `json:"peak_attempts_per_window"` // most attempts in one metrics window
	PeakAcceptsPerWindow  int64  `json:"peak_accepts_per_window"`  // most admissions in one metrics window
	FirstWindowAttempts   int64  `json:"first_window_attempts"`    // attempts in the window of the first attempt
	// ConvergenceMs is the time of the last successful connect, nil (JSON
	// null) when the storm did not converge before its horizon.
	ConvergenceMs *float64 `json:"convergence_ms"`
	*OutcomeResult
	ConnectMs Quantiles `json:"connect_ms"` // connect-time distribution over connected clients
	WindowMs  float64   `json:"window_ms"`  // series bucket length
	Series    Series    `json:"series"`
	modelResults
}

// Quantiles are nearest-rank quantiles (the ceil(q*n)-th smallest value) of
// connect times in milliseconds; all zero when nobody connected.
type Quantiles struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// Series holds per-window counts; entry i covers [i*window, (i+1)*window).
// Attempts count at their arrival, accepts and rejects in the window of
// their decision. The series of a storm the horizon cut run to the
// window the horizon falls in, the last ending at the horizon; those of
// any other storm end with their last non-empty window (all arrays share
// one length).
// Goodput, Wasted and Queue are kept when the run has an outcome
// (OutcomeResult).
type Series struct {
	Attempts []int64 `json:"attempts"`
	Accepts  []int64 `json:"accepts"`
	Rejects  []int64 `json:"rejects"`
	// Decided counts the admission decisions (admitted, also those then
	// dropped unclaimed, or rejected) in the window of their decision,
	// before the horizon: where a gateway's log puts them. It is present
	// when the capacity decides apart from arrival
	// (models.CapacitySpec.DecidesApart), where Attempts, counted at
	// arrival, may lie up to a queue's wait earlier.
	Decided []int64 `json:"decided,omitempty"`
	// Goodput counts the route claims done (their answer leaving the
	// gateway) whose client was still there: useful work. Wasted counts
	// those whose client had gone. Both are counted when the claim's work
	// ends, so goodput + wasted per window is what the gateways completed.
	Goodput []int64 `json:"goodput,omitempty"`
	Wasted  []int64 `json:"wasted,omitempty"`
	Queue   []int64 `json:"queue,omitempty"` // handshakes waiting for their turn at the window's end
	// Goaways counts a deploy's goaways per window: the clients connected
	// at a window's end are all of them, less the goaways, plus the
	// accepts so far.
	Goaways []int64 `json:"goaways,omitempty"`
}

// Convergence returns the time of the last successful connect in
// milliseconds, and false when the storm did not converge.
func (r *Result) Convergence() (float64, bool) {
	if r.ConvergenceMs == nil {
		return 0, false
	}
	return *r.ConvergenceMs, true
}

// OutcomeResult is how a storm ended at its horizon and what its timeouts
// cost. It is present when the scenario has a horizon (set, or implied by
// a timeout), a timeout, shedding or skipping, or when the default horizon
// cut the run.
type OutcomeResult struct {
	Outcome models.Outcome `json:"outcome"` // by models.Judge
	// Converged and Metastable say the same as Outcome, as numbers for
	// checks and sweeps (true is 1): the mean over replications is the
	// fraction of runs that converged, or that were metastable.
	Converged  bool    `json:"converged"`
	Metastable bool    `json:"metastable"`
	HorizonMs  float64 `json:"horizon_ms"` // simulated time at which the run stopped
	Connected  int64   `json:"connected"`  // clients connected by the horizon
	// TimedOut counts attempts whose client gave up waiting at the
	// policy's timeout.
	TimedOut int64 `json:"timed_out"`
	// Wasted counts route claims done before the horizon whose answer
	// reached the client too late: the claim's work and the token were
	// spent for nothing.
	Wasted  int64 `json:"wasted"`
	Shed    int64 `json:"shed"`    // handshakes answered 503 at once because the queue was full (capacity.max_queue)
	Skipped int64 `json:"skipped"` // handshakes dropped at their turn because their client had gone (capacity.abandoned: skip)
	// Waiting counts the handshakes that reached a gateway before the
	// horizon and were still waiting for their turn (or their decision),
	// or in service, at it: they got no answer before the horizon.
	// Attempts = Accepted + Rejected + Shed + Skipped + Waiting.
	Waiting int64 `json:"waiting"`
	// QueueWaitMs is the time from a handshake's arrival to its turn (its
	// claim's turn with decide: arrival), over the handshakes that queued
	// for one; a handshake still waiting at the horizon counts with its
	// wait so far, to the horizon.
	QueueWaitMs WaitQuantiles `json:"queue_wait_ms"`
	// TailBusy is the fraction of the last 10 % of the horizon during which
	// the surviving gateways were serving handshakes, rejections included
	// (0 without a capacity): models.Tail.BusyFraction.
	TailBusy float64 `json:"tail_busy"`
	// TailUseful is the fraction of the route claims completed in the last
	// 10 % of the horizon whose answer reached its client in time (0 when
	// none were): models.Tail.UsefulFraction.
	TailUseful float64 `json:"tail_useful"`
}

// WaitQuantiles are queue waits in milliseconds: p50 and p99 nearest-rank
// to within 2^-11 of their value (a log-linear histogram), max exact.
type WaitQuantiles struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// The failure and load models add these fields; each is absent when its
// model is off.
type modelResults struct {
	Refused     int64            `json:"refused,omitempty"`     // attempts that reached the dead gateway: connection refused
	Unavailable int64            `json:"unavailable,omitempty"` // attempts answered 503 by the draining gateway
	Detection   *DetectionResult `json:"detection,omitempty"`
	Reclaim     *ReclaimResult   `json:"reclaim,omitempty"`
	Drain       *DrainResult     `json:"drain,omitempty"`
	Deploy      *DeployResult    `json:"deploy,omitempty"`
	Database    *DatabaseResult  `json:"database,omitempty"`
	Gateways    []GatewayResult  `json:"gateways,omitempty"`
	Share       *ShareResult     `json:"decision_share,omitempty"` // with capacity.decision_share: how its fixed point was found
}

// DetectionResult is when clients noticed the failure.
type DetectionResult struct {
	FirstNoticeMs float64 `json:"first_notice_ms"`
	LastNoticeMs  float64 `json:"last_notice_ms"`
}

// ReclaimResult is the lease model's view: when the dead gateway's routes
// were swept and how long devices looked online while they were not.
type ReclaimResult struct {
	ReclaimMs          float64 `json:"reclaim_ms"`            // the sweep that deleted the dead gateway's routes
	BoundLoMs          float64 `json:"bound_lo_ms"`           // duration - renew_every
	BoundHiMs          float64 `json:"bound_hi_ms"`           // duration + sweep_every
	StaleRouteSeconds  float64 `json:"stale_route_seconds"`   // integral of stale routes over time, route-seconds
	MaxPresenceErrorMs float64 `json:"max_presence_error_ms"` // longest time one device looked online while offline
	// StaleRoutes is the number of stale routes at the end of each window,
	// until the reclaim.
	StaleRoutes []int64 `json:"stale_routes"`
	// StaleRoutesWindowMs is the window of StaleRoutes when the reclaim
	// lies too far out for the run's window (absent: the run's window).
	StaleRoutesWindowMs *float64 `json:"stale_routes_window_ms,omitempty"`
	// With delivery route_directed a stale route is a message black hole.
	BlackholeRouteSeconds float64 `json:"blackhole_route_seconds,omitempty"`
	BlackholeMaxMs        float64 `json:"blackhole_max_ms,omitempty"`
}

// DrainResult is a planned drain: the draining gateway's clients moving on.
type DrainResult struct {
	Clients        int     `json:"clients"`
	GraceMs        float64 `json:"grace_ms"`
	DrainMs        float64 `json:"drain_ms"` // from the drain's start to the last reconnect
	Attempts       int64   `json:"attempts"`
	Rejected       int64   `json:"rejected"`
	Unavailable    int64   `json:"unavailable"`     // 503s from the draining gateway
	LeftoverRoutes int64   `json:"leftover_routes"` // routes the draining gateway still held at exit
	// With a drain section: PaceMs is when the last goaway went, from the
	// drain's start; CutGoaways counts the connections the pace would
	// have told after the grace, told at the grace instead; Series is the
	// drain's own per-window series (the storm's, for a failure drain).
	PaceMs     float64 `json:"pace_ms,omitempty"`
	CutGoaways int64   `json:"cut_goaways,omitempty"`
	Series     *Series `json:"series,omitempty"`
}

// DatabaseResult is the database load the reconnects cause.
type DatabaseResult struct {
	RowsPerSync       int       `json:"rows_per_sync"`
	RowsTotal         int64     `json:"rows_total"`   // sync reads: rows_per_sync per accepted reconnect
	ClaimsTotal       int64     `json:"claims_total"` // route-claim statements: claim_cost per accepted reconnect
	PeakRowsPerS      float64   `json:"peak_rows_per_s"`
	ReadBudgetPerS    float64   `json:"read_budget_per_s,omitempty"`
	TimeAboveBudgetMs float64   `json:"time_above_budget_ms"`
	RowsPerS          []float64 `json:"rows_per_s"` // per window
}

// GatewayResult is one surviving gateway's share of the storm.
type GatewayResult struct {
	Gateway              int    `json:"gateway"` // 1..count-1, 0 being the failed one; 0..count-1 in a deploy
	Attempts             int64  `json:"attempts"`
	Accepted             int64  `json:"accepted"`
	Rejected             int64  `json:"rejected"`
	PeakAcceptsPerWindow int64  `json:"peak_accepts_per_window"`
	Series               Series `json:"series"`
}

// result assembles the run's metrics, the core ones and those of every
// model that is on.
func (st *storm) result() Result {
	s := st.s
	for g := range st.end.lines {
		st.sampleLine(&st.end.lines[g], g, never)
	}
	var cutAt time.Duration
	if st.end.cut {
		cutAt = st.horizon
	}
	res := st.rec.result(st.underTest.Spec.Label, s.Clients, cutAt)
	if st.rec.tracked || st.end.cut {
		res.OutcomeResult = st.outcome()
		if !res.Converged {
			res.ConvergenceMs = nil
		}
	}
	if s.Detection != nil {
		first, last := st.noticeRange()
		res.Detection = &DetectionResult{FirstNoticeMs: ms(first), LastNoticeMs: ms(last)}
	}
	if s.Lease != nil && !st.draining {
		res.Reclaim = st.reclaim()
	}
	if s.Database != nil {
		res.Database = st.database(res.Series)
	}
	if st.draining {
		res.Drain = st.drainResult(res)
	}
	if s.ThenDrain != nil {
		res.Drain = thenDrain(s, st.underTest, st.seed)
	}
	if st.deploy != nil {
		res.Deploy = st.deployResult(&res)
	}
	return res
}

// noticeRange is the earliest and latest time a client noticed the failure.
func (st *storm) noticeRange() (first, last time.Duration) {
	first = st.noticeAt(0)
	last = first
	for c := 1; c < st.s.Clients; c++ {
		t := st.noticeAt(uint32(c))
		first, last = min(first, t), max(last, t)
	}
	return first, last
}
