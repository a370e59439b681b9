package fit

import (
	"math"

	"stormsim/calibrate/measured"
	"stormsim/gateway/protocol"
)

// Backlog is the survivor's decision work in one real run: how many
// handshakes it decided while requests it had been sent but had not yet
// decided were waiting, and for how long such a backlog existed. While the
// backlog is not empty the gateway is never idle for want of work, so
// decisions / busy time is the rate at which it gets through them, its
// pauses included (the utilisation law). It is a lower bound: a request
// counts as waiting from its send plus the run's fastest one-way time, so
// time it spent in the client or the kernel counts as busy.
type Backlog struct {
	Decisions  int     // admitted and 429, in the crash storm
	BusyMs     float64 // time with a non-empty backlog
	DecidePerS float64 // Decisions / BusyMs
}

// fastestOneWayMs is the run's fastest send-to-decision time of a 429 (the
// unloaded one-way time; both ends on the same wall clock), 0 when no 429
// was placed.
func fastestOneWayMs(hs []measured.Handshake) float64 {
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

// measureBacklog measures a run's Backlog from the handshakes the survivor
// decided (answered 101 or 429) and its decisions (claims and 429 lines).
// The backlog at t is the arrivals up to t less the decisions up to t; the
// two sides are counted apart, so a handshake whose own decision could not
// be matched still counts. ok is false with no decision or no busy time.
func measureBacklog(r *measured.Run) (b Backlog, ok bool) {
	_, arrivals, decisions := arrivalsAndDecisions(r)
	if len(decisions) == 0 || len(arrivals) == 0 {
		return b, false
	}
	b.Decisions = len(decisions)
	// Walk the two sorted sequences; at equal times the arrival comes
	// first (a request decided the instant it arrives was still waiting).
	backlog, last := 0, math.Inf(-1)
	i, j := 0, 0
	for i < len(arrivals) || j < len(decisions) {
		arrival := j == len(decisions) || (i < len(arrivals) && arrivals[i] <= decisions[j])
		t := 0.0
		if arrival {
			t = arrivals[i]
		} else {
			t = decisions[j]
		}
		if backlog > 0 {
			b.BusyMs += t - last
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
	if b.BusyMs <= 0 {
		return b, false
	}
	b.DecidePerS = 1000 * float64(b.Decisions) / b.BusyMs
	return b, true
}
