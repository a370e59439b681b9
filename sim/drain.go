package sim

import (
	"time"

	"stormsim/models"
	"stormsim/policies"
	"stormsim/policies/rng"
)

// goaways is a paced drain's schedule, as the drain section says: when
// each connection of a draining gateway gets its goaway, and the delay
// the goaway carries.
type goaways struct {
	pace     models.DrainPaceSpec
	hint     models.ReconnectHintSpec // reserved's rate and burst filled in
	grace    time.Duration
	seed     uint64
	jitter   time.Duration        // initial_jitter: the first wait without a hint
	capacity *models.CapacitySpec // how fast the goaways get out; nil: at once
	leg      *models.Distribution // network.goaway: from a goaway's write to its client's end; nil: none
}

func newGoaways(s *Scenario, grace time.Duration, dest drainDestination, seed uint64) *goaways {
	g := &goaways{pace: models.DrainPaceSpec{Kind: models.PaceAll}, grace: grace, seed: seed, jitter: s.InitialJitter, capacity: s.Capacity}
	if s.Drain != nil {
		g.pace, g.hint = s.Drain.Pace, s.Drain.ReconnectHint
	}
	g.hint.Reserve(dest.rate, dest.burst)
	if s.Network != nil {
		g.leg = s.Network.GoawayLeg
	}
	return g
}

// at is when the pace asks connection i of n (in the drain's order) to
// leave, from the drain's start: its pace's time, or the grace if the pace
// would tell it later (the gateway then tells everyone left at once).
func (g *goaways) at(i, n int) time.Duration { return min(g.pace.GoawayAt(i, n), g.grace) }

// sent is when each of n connections' goaways leaves, from the drain's
// start: asked at its pace's time, written at the gateway's goaway rate.
func (g *goaways) sent(n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = g.at(i, n)
	}
	if g.capacity != nil {
		g.capacity.GoawaysSent(out)
	}
	return out
}

// cut reports whether the pace of n connections runs past the grace.
func (g *goaways) cut(n int) bool { return g.pace.Span(n) > g.grace }

// firstWait is how long client c, connection i of n in the drain told in
// its round-th drain (from 1), waits before its first attempt once its
// session ended at ended after the drain's start (policies.FirstWait: the
// hint, or the initial jitter). The hint is computed where the gateway
// computes it, when it writes the goaway (written).
func (g *goaways) firstWait(c, round uint64, i, n int, ended time.Duration) time.Duration {
	hint, hinted := g.hint.Hint(i, g.written(c, round, i, n, ended), rng.Draw(g.seed, c, 0, rng.StreamHint))
	return policies.FirstWait(g.seed, c, g.jitter, hint, hinted)
}

// written is when the gateway wrote the goaway of client c, connection i
// of n, whose session ended at ended: network.goaway earlier, but not
// before the pace asked. Only a reserved hint reads it, so only then is
// the leg drawn.
func (g *goaways) written(c, round uint64, i, n int, ended time.Duration) time.Duration {
	if g.leg == nil || g.hint.Kind != models.HintReserved {
		return ended
	}
	return max(g.at(i, n), ended-g.leg.Sample(rng.Draw(g.seed, c, round, rng.StreamGoawayLeg)))
}

// drainResult reports a planned drain: each connection is closed right after
// its goaway, releasing its route, so the gateway holds a route at exit only
// for a client whose goaway would come after the grace period.
func (st *storm) drainResult(res Result) *DrainResult {
	s := st.s
	last, _ := res.Convergence()
	out := &DrainResult{Clients: s.Clients, GraceMs: ms(s.Failure.Grace), DrainMs: last - ms(s.Disconnect.At),
		Attempts: res.Attempts, Rejected: res.Rejected, Unavailable: res.Unavailable}
	if g := st.goaways; g != nil {
		out.PaceMs = ms(st.goawayAt[s.Clients-1])
		if g.cut(s.Clients) {
			for i := s.Clients - 1; i >= 0 && g.pace.GoawayAt(i, s.Clients) > g.grace; i-- {
				out.CutGoaways++
			}
		}
		return out
	}
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
	res := st.result()
	if s.Drain != nil {
		res.Drain.Series = &res.Series
	}
	return res.Drain
}
