package gateway

import (
	"context"
	"time"

	"stormsim/gateway/logline"
	"stormsim/gateway/protocol"
)

// forcedCloseWait is how long a drain waits, after the grace, for
// force-closed sessions to unregister and release their routes.
const forcedCloseWait = time.Second

// drain is the seed's planned shutdown, in its order:
//
//  1. refuse new handshakes (503 + Retry-After);
//  2. stop renewing and set lease_until = now, so the other gateways reclaim
//     at their next sweep even if the rest is cut short;
//  3. goaway then close 1001 to every connection, all at once;
//  4. wait for them to leave and for their route releases to return, at most
//     DrainGrace from the start; then drop the stragglers' TCP connections;
//  5. wait for the claims still running to return (each within its store
//     timeout) and for the sessions they opened to close, so that no claim
//     commits after step 6;
//  6. delete whatever routes are left: leftover_routes counts only routes
//     that no session released (0 when every client left in time).
//
// stopLease must stop the lease loop and return once it has stopped. When
// another process has taken this gateway id over (taken), steps 2 and 6
// are skipped: the lease and whatever routes remain under the id are the
// other process's; every session still releases its own route.
func (g *Gateway) drain(stopLease func(), taken bool) error {
	began := time.Now()
	conns := g.reg.beginDrain()
	g.log.Info(logline.DrainStart, "connections", len(conns))
	stopLease()
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if !taken {
		if err := g.deps.Leases.ExpireLease(ctx, g.cfg.ID, g.incarnation); err != nil {
			g.log.Warn(logline.LeaseExpireFailed, "err", err.Error())
		}
	}
	g.closeSessions(conns)
	forced := g.awaitSessions(began.Add(g.cfg.DrainGrace))
	forced += g.awaitClaims()
	var released int64
	var err error
	if !taken {
		rctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		released, err = g.deps.Leases.ReleaseGateway(rctx, g.cfg.ID)
		cancel()
	}
	args := []any{logline.KeyGoaway, g.goawaySent.Load(), "forced", forced, logline.KeyLeftoverRoutes, released,
		"duration_ms", time.Since(began).Milliseconds()}
	if err != nil {
		args = append(args, "err", err.Error())
	}
	g.log.Info(logline.DrainDone, args...)
	return err
}

// closeSessions asks every connection to close with goaway then 1001.
func (g *Gateway) closeSessions(conns []*conn) {
	for _, c := range conns {
		c.terminate(protocol.CloseGoingAway, "drain")
	}
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

// waitEmpty polls until no connection is registered and no route release
// is in flight, or deadline passes.
func (g *Gateway) waitEmpty(deadline time.Time) {
	for g.reg.busy() > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
}
