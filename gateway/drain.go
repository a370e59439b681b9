package gateway

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"time"

	"stormsim/gateway/logline"
)

// forcedCloseWait is how long a drain waits, after the grace, for
// force-closed sessions to unregister and release their routes.
const forcedCloseWait = time.Second

// afterLastGoaway is how long a paced drain gives the connections it told
// last to close and release their routes, if that runs past the grace: the
// close handshake's bound and a second for the release.
const afterLastGoaway = closeTimeout + time.Second

// drain is the seed's planned shutdown, paced:
//
//  1. refuse new handshakes (503 + Retry-After);
//  2. send each connection its goaway, then close 1001, at the times the
//     pace gives (models.DrainPaceSpec.GoawayAt, connections in the order
//     they were admitted), each goaway carrying the hint
//     (models.ReconnectHintSpec.Hint) for the time it is actually written;
//     every goaway not sent by DrainGrace after the start is sent then;
//  3. stop renewing and set lease_until = now, so the other gateways reclaim
//     at their next sweep even if the rest is cut short; the lease is kept
//     while the pace runs, or the others would sweep the routes of
//     connections still open;
//  4. wait for the connections to leave and for their route releases to
//     return, at most DrainGrace from the start (or, for a paced drain
//     whose last goaway came late, afterLastGoaway after it); then drop the
//     stragglers' TCP connections;
//  5. wait for the claims still running to return (each within its store
//     timeout) and for the sessions they opened to close, so that no claim
//     commits after step 6;
//  6. delete whatever routes are left: leftover_routes counts only routes
//     that no session released (0 when every client left in time).
//
// With pace all step 2 takes no time: every goaway at once, as the seed's
// drain. stopLease must stop the lease loop and return once it has
// stopped, which includes the re-registration it may have been running:
// that stops at the statements it already sent, and waits for them (each
// within its store timeout), so no re-registration writes a route after
// step 6 either. When another process has taken this gateway id over (taken),
// the lease loop is stopped first and steps 3 and 6 are skipped: the lease
// and whatever routes remain under the id are the other process's; every
// session still releases its own route.
func (g *Gateway) drain(stopLease func(), taken bool) error {
	began := time.Now()
	conns := g.reg.beginDrain()
	g.log.Info(logline.DrainStart, "connections", len(conns), "pace", g.cfg.DrainPace.String(), "reconnect_hint", g.cfg.drainHint().String())
	if taken {
		stopLease()
	}
	deadline := began.Add(g.cfg.DrainGrace)
	last, cut := g.sendGoaways(conns, began, deadline)
	if !taken {
		stopLease()
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		if err := g.deps.Leases.ExpireLease(ctx, g.cfg.ID, g.incarnation); err != nil {
			g.log.Warn(logline.LeaseExpireFailed, "err", err.Error())
		}
		cancel()
	}
	if g.cfg.DrainPace.Paced() {
		deadline = later(deadline, began.Add(last+afterLastGoaway))
	}
	forced := g.awaitSessions(deadline)
	forced += g.awaitClaims()
	var released int64
	var err error
	if !taken {
		rctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		released, err = g.deps.Leases.ReleaseGateway(rctx, g.cfg.ID)
		cancel()
	}
	args := []any{logline.KeyGoaway, g.goawaySent.Load(), logline.KeyFailedGoaways, g.goawayFailed.Load(), "forced", forced, logline.KeyLeftoverRoutes, released,
		logline.KeyCutGoaways, cut, logline.KeyLastGoawayMs, last.Milliseconds(), "duration_ms", time.Since(began).Milliseconds()}
	if err != nil {
		args = append(args, "err", err.Error())
	}
	g.log.Info(logline.DrainDone, args...)
	return err
}

// awaitSessions waits until deadline for the connections to leave, then
// drops the TCP connections of those still there and waits forcedCloseWait
// for them to release their routes; it returns how many it dropped.
func (g *Gateway) awaitSessions(deadline time.Time) int {
	g.waitEmpty(deadline)
	forced := g.reg.all()
	for _, c := range forced {
		c.forceClose()
	}
	g.waitEmpty(time.Now().Add(forcedCloseWait))
	return len(forced)
}

// awaitClaims waits for the handshakes still waiting for a slot or
// claiming: a claim sent before the drain began may take up to its store
// timeout, and its route would outlive a final delete that ran first (the
// process exits right after). Those that waited for a slot find the
// registry closed and go; an accepted claim's session, told to close by
// the drain's termination, closes as the others did. It returns how many
// such sessions had to be dropped.
func (g *Gateway) awaitClaims() int {
	if g.slots.busy() == 0 {
		return 0
	}
	deadline := time.Now().Add(storeTimeout + time.Second)
	for g.slots.busy() > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	return g.awaitSessions(time.Now().Add(closeTimeout))
}

// sendGoaways asks every connection in conns to leave at its pace's time
// from began, in the order the connections were admitted; a goaway the
// pace would send after deadline is sent at deadline. It returns when it
// asked the last one, from began, and how many it asked at the deadline
// rather than at their pace.
func (g *Gateway) sendGoaways(conns []*conn, began, deadline time.Time) (last time.Duration, cut int) {
	slices.SortFunc(conns, func(a, b *conn) int { return cmp.Or(cmp.Compare(a.admittedAt, b.admittedAt), cmp.Compare(a.id, b.id)) })
	pace, n := g.cfg.DrainPace, len(conns)
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for i, c := range conns {
		at := began.Add(pace.GoawayAt(i, n))
		if at.After(deadline) {
			at = deadline
			cut++
		}
		if wait := time.Until(at); wait > 0 {
			timer.Reset(wait)
			<-timer.C
		}
		c.goaway(i, began)
		last = time.Since(began)
	}
	return last, cut
}

// reconnectAfter is the hint of c's goaway, computed as the goaway is
// written: a connection whose goaway leaves late (a thousand sessions
// writing theirs at once on a busy machine) is told its slot less the
// time it actually leaves, not the time the drain asked. nil: no hint.
func (g *Gateway) reconnectAfter(c *conn) *int64 {
	place, began := c.drainOrder()
	hint, ok := g.cfg.drainHint().Hint(place, time.Since(began), rand.Uint64())
	if !ok {
		return nil
	}
	ms := hint.Milliseconds()
	return &ms
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// waitEmpty polls until no connection is registered and no route release
// is in flight, or deadline passes.
func (g *Gateway) waitEmpty(deadline time.Time) {
	for g.reg.busy() > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
}
