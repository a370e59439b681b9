package fit

import (
	"cmp"
	"slices"
	"sort"

	"stormsim/calibrate/measured"
	"stormsim/gateway/protocol"
)

// retryLeg is one rejected retry's send time and its out leg (ms): how
// late its client sent it plus its way to the survivor's decision stage.
type retryLeg struct{ sentMs, legMs float64 }

// retryLegsOf returns a run's rejected retries whose decision is known,
// in send order, with their out legs, and how many of them went their way
// alone.
//
// A retry that arrived (sent plus the run's fastest one-way time) while
// nothing sent to the survivor before it was still undecided met an idle
// decision stage: from its send to its 429 line is its way. One that
// arrived behind a backlog also waited for the survivor to decide the
// requests ahead of it, a wait the model's own decision stage makes
// (capacity.decide_per_s): counted in the leg as well, it would be waited
// twice, and the more clients, the longer the backlog. Its lateness is its
// own; its way is a calm retry's, taken in turn in send order. With fewer
// than minSamples calm retries the legs are their whole out legs, waits
// included (calm is then that count, below minSamples).
func retryLegsOf(r *measured.Run) (legs []retryLeg, calm int) {
	type retry struct {
		sentMs, outMs, lagMs float64
	}
	var rs []retry
	for _, h := range r.Handshakes {
		if h.Attempt > 1 && h.Status == protocol.StatusTooManyRequests && h.OutMs != nil {
			rs = append(rs, retry{h.SentMs, *h.OutMs, h.LagMs})
		}
	}
	slices.SortStableFunc(rs, func(a, b retry) int { return cmp.Compare(a.sentMs, b.sentMs) })
	oneWay, arrivals, decisions := arrivalsAndDecisions(r)
	undecidedBefore := func(t float64) int { // sent ahead of an arrival at t and not decided by then
		return sort.SearchFloat64s(arrivals, t) - sort.SearchFloat64s(decisions, t)
	}
	var calmWays []float64
	alone := make([]bool, len(rs))
	for i, x := range rs {
		if undecidedBefore(x.sentMs+oneWay) <= 0 {
			alone[i] = true
			calmWays = append(calmWays, x.outMs)
		}
	}
	calm = len(calmWays)
	legs = make([]retryLeg, len(rs))
	next := 0
	for i, x := range rs {
		way := x.outMs
		if calm >= minSamples && !alone[i] {
			way, next = calmWays[next%calm], next+1
		}
		legs[i] = retryLeg{x.sentMs, x.lagMs + way}
	}
	return legs, calm
}

// arrivalsAndDecisions are a run's requests' arrivals at the survivor
// (the admitted and 429 handshakes, sent plus the run's fastest one-way
// time) and its decisions (claim and 429 lines), each sorted (ms). The two
// are counted apart, so a handshake whose own decision could not be
// matched still counts.
func arrivalsAndDecisions(r *measured.Run) (oneWay float64, arrivals, decisions []float64) {
	oneWay = fastestOneWayMs(r.Handshakes)
	for _, h := range r.Handshakes {
		if h.Admitted() || h.Status == protocol.StatusTooManyRequests {
			arrivals = append(arrivals, h.SentMs+oneWay)
		}
	}
	for _, c := range r.Claims {
		decisions = append(decisions, c.DecidedMs)
	}
	decisions = append(decisions, r.RejectsMs...)
	slices.Sort(arrivals)
	slices.Sort(decisions)
	return oneWay, arrivals, decisions
}
