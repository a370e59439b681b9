package sim

import (
	"stormsim/models"
	"stormsim/policies"
)

// drainResult reports a planned drain: each connection is closed right after
// its goaway, releasing its route, so the gateway holds a route at exit only
// for a client whose goaway would come after the grace period.
func (st *storm) drainResult(res Result) *DrainResult {
	s := st.s
	last, _ := res.Convergence()
	out := &DrainResult{Clients: s.Clients, GraceMs: ms(s.Failure.Grace), DrainMs: last - ms(s.Disconnect.At),
		Attempts: res.Attempts, Rejected: res.Rejected, Unavailable: res.Unavailable}
	for c := 0; c < s.Clients; c++ {
		if s.Failure.GoawayAt(st.seed, uint64(c)) > s.Failure.Grace {
			out.LeftoverRoutes++
		}
	}
	return out
}

// thenDrain runs the drain that follows the storm: every client, now on the
// survivor, gets a goaway and reconnects to a fresh gateway. It is a storm
// of its own, timed from the drain's start.
func thenDrain(s *Scenario, underTest *policies.Backoff, seed uint64) *DrainResult {
	d := *s
	d.Failure = &models.FailureSpec{Kind: models.FailureDrain, Grace: s.ThenDrain.Grace, Spread: s.ThenDrain.Spread}
	d.Disconnect, d.Detection, d.Lease, d.Gateways, d.Database, d.ThenDrain = Disconnect{}, nil, nil, nil, nil, nil
	if s.ThenDrain.Admission != nil {
		d.Admission = *s.ThenDrain.Admission
	}
	// The same seed: a client's draws are keyed by (client, attempt within
	// the round), so its drain round replays its storm round's numbers, as
	// the real client (gateway/client) does.
	st := newStorm(&d, underTest, seed)
	runStorm(st, wheel{ringLimit: maxRingBuckets, minLook: minLook}, nil)
	return st.result().Drain
}
