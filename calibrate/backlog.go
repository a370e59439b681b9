package calibrate

import (
	"math"
	"net/http"
	"slices"
	"time"

	"stormsim/gateway/protocol"
)

// Backlog is gw-b's decision work in one real run: how many handshakes it
// decided while requests it had received but not yet decided were waiting,
// and for how long such a backlog existed. While the backlog is not empty
// the gateway is never idle for want of work, so decisions / busy time is
// the rate at which it gets through them, its pauses included: the service
// rate of capacity.decide_per_s (the utilisation law, busy time = decisions
// x time per decision).
type Backlog struct {
	Decisions int     `json:"decisions"` // gw-b's decisions (admitted and 429) in the crash phase
	BusyMs    float64 `json:"busy_ms"`   // time with a non-empty backlog, from the first arrival
	// AfterStallMs is the busy time from gw-b's first decision on: what
	// the decision stage serves when a separate capacity.stall covers the
	// time before it.
	AfterStallMs float64 `json:"busy_after_stall_ms"`
	DecidePerS   float64 `json:"decide_per_s"`             // Decisions / BusyMs
	AfterStallPS float64 `json:"decide_after_stall_per_s"` // Decisions / AfterStallMs
}

// fastestOneWayMs is the run's fastest send-to-decision time of a 429 (the
// unloaded one-way time; both ends on the same wall clock), 0 when no 429
// was placed.
func fastestOneWayMs(hs []Handshake) float64 {
	oneWay := math.Inf(1)
	for _, h := range hs {
		if h.OutMs != nil && h.Status == protocol.StatusTooManyRequests {
			oneWay = min(oneWay, max(*h.OutMs, 0))
		}
	}
	if math.IsInf(oneWay, 1) {
		return 0
	}
	return oneWay
}

// measureBacklog measures a run's Backlog from its handshakes gw-b decided
// (answered 101 or 429; arrived at their send plus the run's fastest one-way
// time) and gw-b's decisions (claims and 429 decision times, ms from
// origin, the crash phase's start), on the wall clock both share
// (decisionsOf). The backlog at t is the arrivals up to t less the
// decisions up to t; the two sides are counted apart, so a handshake whose
// own decision could not be matched still counts. ok is false with no
// decision or no busy time.
func measureBacklog(hs []Handshake, claims []Claim, rejectsMs []float64, origin time.Time) (b Backlog, ok bool) {
	oneWay := fastestOneWayMs(hs)
	var arrivals, decisions []float64
	for _, h := range hs {
		if h.Status == http.StatusSwitchingProtocols || h.Status == protocol.StatusTooManyRequests {
			arrivals = append(arrivals, ms(h.sent.Sub(origin))+oneWay)
		}
	}
	for _, c := range claims {
		decisions = append(decisions, c.DecidedMs)
	}
	decisions = append(decisions, rejectsMs...)
	if len(decisions) == 0 || len(arrivals) == 0 {
		return b, false
	}
	slices.Sort(arrivals)
	slices.Sort(decisions)
	b.Decisions = len(decisions)
	first := decisions[0]
	// Walk the two sorted sequences; at equal times the arrival comes
	// first (a request decided the instant it arrives was still waiting).
	backlog, last := 0, math.Inf(-1)
	i, j := 0, 0
	for i < len(arrivals) || j < len(decisions) {
		var t float64
		arrival := j == len(decisions) || (i < len(arrivals) && arrivals[i] <= decisions[j])
		if arrival {
			t = arrivals[i]
		} else {
			t = decisions[j]
		}
		if backlog > 0 {
			b.BusyMs += t - last
			b.AfterStallMs += max(t-max(last, first), 0)
		}
		if arrival {
			backlog++
			i++
		} else {
			backlog--
			j++
		}
		last = t
	}
	if b.BusyMs <= 0 || b.AfterStallMs <= 0 {
		return b, false
	}
	b.DecidePerS = 1000 * float64(b.Decisions) / b.BusyMs
	b.AfterStallPS = 1000 * float64(b.Decisions) / b.AfterStallMs
	return b, true
}

// fitBacklog records the runs' backlogs in f and pools them: decide_per_s
// = all the runs' decisions / all their busy time, with and without the
// time before the first decision (f.DecidePerS, f.DecideAfterStallPerS;
// 0 when no run has a backlog).
func (f *Fit) fitBacklog(runs []*RealRun) {
	f.DecidePerSRuns, f.DecideAfterStallPerSRuns = nil, nil
	var n int
	var busy, after float64
	for _, r := range runs {
		if r.Backlog == nil {
			continue
		}
		f.DecidePerSRuns = append(f.DecidePerSRuns, r.Backlog.DecidePerS)
		f.DecideAfterStallPerSRuns = append(f.DecideAfterStallPerSRuns, r.Backlog.AfterStallPS)
		n += r.Backlog.Decisions
		busy += r.Backlog.BusyMs
		after += r.Backlog.AfterStallMs
	}
	f.DecidePerS, f.DecideAfterStallPerS = 0, 0
	if busy > 0 && after > 0 {
		f.DecidePerS, f.DecideAfterStallPerS = 1000*float64(n)/busy, 1000*float64(n)/after
	}
}
