package calibrate

import (
	"math"
	"slices"
	"time"

	"stormsim/models"
)

// Stall is how long the survivor, gw-b, decided nothing after the kill in
// one real run (ms from the crash phase's origin). With clients, gateways
// and PostgreSQL sharing a small machine, the first wave after the kill is
// held back by a pause every early handshake shares, then released at
// once; the simulator's capacity.stall models it.
type Stall struct {
	// FirstDecisionMs is gw-b's first admission decision (admitted or 429)
	// after the kill: the end of the stall counted from the failure, which
	// is what capacity.stall means.
	FirstDecisionMs float64 `json:"first_decision_ms"`
	// EarliestArrivalMs is the earliest a first attempt could have reached
	// gw-b: the earliest first-attempt send plus the run's fastest
	// send-to-decision time of a 429 (the unloaded one-way time; both ends
	// on the same wall clock).
	EarliestArrivalMs float64 `json:"earliest_arrival_ms"`
	// ExcessMs is FirstDecisionMs - EarliestArrivalMs, floored at 0: how
	// much later than it could have the gateway began deciding.
	ExcessMs float64 `json:"excess_ms"`
}

// measureStall measures a run's stall from its handshakes (their sends and
// out legs, attachOutLegs having run), gw-b's claims and 429 decision times
// (ms from origin, the crash phase's start); ok is false when the run has no decision or no first
// attempt.
func measureStall(hs []Handshake, claims []Claim, rejectsMs []float64, origin time.Time) (st Stall, ok bool) {
	first := math.Inf(1)
	for _, c := range claims {
		first = min(first, c.DecidedMs)
	}
	for _, r := range rejectsMs {
		first = min(first, r)
	}
	send := math.Inf(1)
	for _, h := range hs {
		if h.Attempt == 1 {
			send = min(send, ms(h.sent.Sub(origin)))
		}
	}
	if math.IsInf(first, 1) || math.IsInf(send, 1) {
		return st, false
	}
	// With no 429 placed only the send is certain (a one-way time of 0).
	st = Stall{FirstDecisionMs: max(first, 0), EarliestArrivalMs: send + fastestOneWayMs(hs)}
	st.ExcessMs = max(st.FirstDecisionMs-st.EarliestArrivalMs, 0)
	return st, true
}

// fitStall fits capacity.stall to the runs' stall ends (ms): fixed for one
// run, else uniform on [min, max]. A handful of runs cannot tell one
// two-parameter shape from another, and the uniform neither invents stalls
// longer than any seen nor makes the typical one sharper than the runs
// show; nil when every stall is 0.
func fitStall(ends []float64) *models.Distribution {
	if len(ends) == 0 || slices.Max(ends) <= 0 {
		return nil
	}
	lo, hi := durationMs(slices.Min(ends)), durationMs(slices.Max(ends))
	if hi <= lo {
		return &models.Distribution{Dist: "fixed", Value: hi}
	}
	return &models.Distribution{Dist: "uniform", Min: lo, Max: hi}
}

// fitStalls records the runs' stalls in f and fits f.Stall to their ends
// and f.StallExcess to their excesses (see Stall).
func (f *Fit) fitStalls(runs []*RealRun) {
	f.StallEndsMs, f.StallExcessMs = nil, nil
	for _, r := range runs {
		if r.Stall != nil {
			f.StallEndsMs = append(f.StallEndsMs, r.Stall.FirstDecisionMs)
			f.StallExcessMs = append(f.StallExcessMs, r.Stall.ExcessMs)
		}
	}
	f.Stall, f.StallExcess = fitStall(f.StallEndsMs), fitStall(f.StallExcessMs)
}
