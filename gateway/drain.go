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
//  5. delete whatever routes are left: leftover_routes counts only routes
//     that no session released (0 when every client left in time).
//
// stopLease must stop the lease loop and return once it has stopped. When
// another process has taken this gateway id over (taken), steps 2 and 5
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
	for _, c := range conns {
		c.terminate(protocol.CloseGoingAway, "drain")
	}
	g.waitEmpty(began.Add(g.cfg.DrainGrace))
	forced := g.reg.all()
	for _, c := range forced {
		c.forceClose()
	}
	g.waitEmpty(time.Now().Add(forcedCloseWait))
	var released int64
	var err error
	if !taken {
		released, err = g.deps.Leases.ReleaseGateway(ctx, g.cfg.ID)
	}
	args := []any{logline.KeyGoaway, g.goawaySent.Load(), "forced", len(forced), logline.KeyLeftoverRoutes, released,
		"duration_ms", time.Since(began).Milliseconds()}
	if err != nil {
		args = append(args, "err", err.Error())
	}
	g.log.Info(logline.DrainDone, args...)
	return err
}

// waitEmpty polls until no connection is registered and no route release
// is in flight, or deadline passes.
func (g *Gateway) waitEmpty(deadline time.Time) {
	for g.reg.busy() > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
}
