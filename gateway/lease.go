package gateway

import (
	"context"
	"errors"
	"sync"
	"time"

	"stormsim/gateway/logline"
	"stormsim/gateway/protocol"
	"stormsim/gateway/store"
)

const (
	// reregisterWorkers bounds concurrent re-registration transactions.
	reregisterWorkers = 8
	// orphanCheckEvery is how often the lease loop looks for own routes no
	// connection holds even when no release has failed (a backstop: a failed
	// release makes it look at the next tick).
	orphanCheckEvery = 30 * time.Second
)

// errLeaseTaken ends a gateway whose id another process took over while
// its own lease had lapsed.
var errLeaseTaken = errors.New("another process took over this gateway id while its lease had lapsed")

// leaseState is owned by the lease loop goroutine.
type leaseState struct {
	lost           bool          // own lease lapsed on the local clock, not yet renewed
	renewFailing   bool          // last renew failed (logged once per outage)
	skipSweepUntil time.Duration // gateway monotonic time
	nextOrphanScan time.Duration // gateway monotonic time
}

// leaseExpired reports whether the last successful renew was sent at least a
// lease ago on the local monotonic clock: the database may already consider
// this gateway dead and sweep its routes, so it must not admit.
func (g *Gateway) leaseExpired() bool {
	return g.mono()-time.Duration(g.lastRenew.Load()) >= g.cfg.Lease
}

// leaseLoop runs every Config.Period: renew, reconcile while the LISTEN
// connection is down, sweep, release orphan routes. When ctx ends it
// returns once the re-registrations it started have: their ctx ends too,
// so they stop at the statements already sent, and a drain that stopped the
// loop deletes the routes left only after those have run.
func (g *Gateway) leaseLoop(ctx context.Context) {
	defer g.reregisters.Wait()
	t := time.NewTicker(g.cfg.Period())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			g.leaseTick(ctx)
		}
	}
}

func (g *Gateway) leaseTick(ctx context.Context) {
	s := &g.lease
	if !s.lost && g.leaseExpired() {
		g.loseLease(g.mono()-time.Duration(g.lastRenew.Load()), 0)
	}
	renewed, taken := g.renew(ctx)
	if taken {
		g.stop(errLeaseTaken)
		return
	}
	if renewed && s.lost {
		s.lost = false
		g.log.Info(logline.LeaseRegained)
		g.reregisters.Go(func() { g.reregister(ctx) })
	}
	if !g.listening.Load() { // kicks are being lost: reconcile before anything slower
		rctx, cancel := context.WithTimeout(ctx, g.cfg.Period())
		g.reconcile(rctx, "lease_loop")
		cancel()
	}
	if !s.lost && g.mono() >= s.skipSweepUntil {
		g.sweep(ctx)
	}
	if !s.lost && (g.orphansSuspected.Swap(false) || g.mono() >= s.nextOrphanScan) {
		s.nextOrphanScan = g.mono() + orphanCheckEvery
		g.releaseOrphans(ctx)
	}
	g.sources.prune()
}

// loseLease records that the lease lapsed, or may have lapsed in the
// database: the gateway answers 503 until it renews, and a claim that was
// running meanwhile re-registers itself. since is the time from the last
// successful renewal's send to the moment the lapse was noticed; late, if
// not 0, is the round trip of the renewal that noticed it.
func (g *Gateway) loseLease(since, late time.Duration) {
	g.lease.lost = true
	g.leaseLosses.Add(1)
	g.metrics.LeaseLost.Add(1)
	args := []any{logline.KeySinceRenewMs, since.Milliseconds()}
	if late > 0 {
		args = append(args, logline.KeyLateRenewalMs, late.Milliseconds())
	}
	g.log.Warn(logline.LeaseLost, args...)
}

// renew extends the lease; it may take up to half a lease (the loop then
// skips ticks) before it counts as failed. The local lease clock starts when
// the renew is sent, which is no later than the database's
// clock_timestamp() in it, so the local view of expiry is never later than
// the database's. The other side of that bound: the database ran a renewal
// no later than its completion, so one that completes a lease or more after
// the previous renewal was sent may have run after the lease had lapsed
// there, and another gateway may have swept this one's routes in between;
// it counts as a lapse (the loop then re-registers), whatever the local
// clock said when it was sent. A gap of more than two periods between
// successful renews is a stall (database outage, pause): sweeping then
// waits one lease, so that gateways that were cut off the same way get to
// renew before anyone sweeps them. taken reports that another process holds
// this id's lease.
func (g *Gateway) renew(ctx context.Context) (renewed, taken bool) {
	s := &g.lease
	sent := g.mono()
	rctx, cancel := context.WithTimeout(ctx, g.cfg.Lease/2)
	held, err := g.deps.Leases.AcquireLease(rctx, g.cfg.ID, g.incarnation, g.cfg.Lease)
	cancel()
	g.metrics.LeaseRenew.Observe(g.mono() - sent)
	if err == nil && held {
		return false, true
	}
	if err != nil {
		if !s.renewFailing && ctx.Err() == nil {
			g.log.Warn(logline.LeaseRenewFailed, "err", err.Error())
		}
		s.renewFailing = true
		return false, false
	}
	s.renewFailing = false
	done := g.mono()
	prev := time.Duration(g.lastRenew.Load())
	if !s.lost && done-prev >= g.cfg.Lease {
		// Before lastRenew moves on: a claim running now must see the loss.
		g.loseLease(done-prev, done-sent)
	}
	g.lastRenew.Store(int64(sent))
	if sent-prev > 2*g.cfg.Period() {
		s.skipSweepUntil = sent + g.cfg.Lease
		g.log.Info(logline.SweepPaused, logline.KeyRenewGapMs, (sent - prev).Milliseconds(), "for_ms", g.cfg.Lease.Milliseconds())
	}
	g.log.Debug(logline.LeaseRenewed, "latency_ms", float64(done-sent)/1e6)
	return true, false
}

// sweep deletes the routes of other gateways whose lease expired. The swept
// gateway is logged as dead_gateway: "gateway" is the logger's own id.
func (g *Gateway) sweep(ctx context.Context) {
	sctx, cancel := context.WithTimeout(ctx, g.cfg.Period())
	gone, err := g.deps.Leases.Sweep(sctx, g.cfg.ID)
	cancel()
	if err != nil {
		return // the renew failure (if any) is already logged; the next tick retries
	}
	for _, r := range gone {
		g.metrics.RoutesReclaimed.Add(r.Routes)
		g.log.Info(logline.SweepReclaimed, logline.KeyDeadGateway, r.Gateway, logline.KeyCount, r.Routes)
	}
}

// releaseOrphans deletes the routes held under this gateway's id by
// connections it does not have: sessions whose release failed (a dropped
// backend, a timeout) and sessions of an earlier process with the same id.
// A route appears only after its connection is registered, and leaves the
// registry only into a release that is tracked until it returns, so a conn
// id that is neither registered nor being released now will never hold a
// route legitimately again.
func (g *Gateway) releaseOrphans(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	routes, err := g.deps.Leases.RoutesOf(rctx, g.cfg.ID)
	if err != nil {
		g.orphansSuspected.Store(true)
		return
	}
	var orphans []store.RouteKey
	for _, r := range routes {
		if !g.reg.known(r.Conn) {
			orphans = append(orphans, r)
		}
	}
	if len(orphans) == 0 {
		return
	}
	n, err := g.deps.Leases.ReleaseRoutes(rctx, orphans)
	if err != nil {
		g.orphansSuspected.Store(true)
		return
	}
	g.metrics.OrphansReleased.Add(n)
	g.log.Info(logline.OrphanRoutesReleased, logline.KeyCount, n)
}

// reregister restores the routes of live connections after the lease lapsed
// and was renewed: others may have swept them meanwhile. A connection whose
// device has since been claimed by a newer handshake is closed with 4001; one
// whose re-registration fails on the database is closed with 4003 (lease
// lost), so no connection stays open without a route. When ctx ends (the
// lease loop stops for a drain) it stops and leaves the sessions to the
// drain, which closes them with goaway and 1001.
//
// A lapse noticed while a re-registration runs makes it run again once
// done: the routes it restored before the second lapse may have been swept
// again.
func (g *Gateway) reregister(ctx context.Context) {
	g.reregisterPending.Store(true)
	for g.reregisterPending.Load() {
		if !g.reregistering.CompareAndSwap(false, true) {
			return // the running one sees the pending request
		}
		for g.reregisterPending.Swap(false) {
			g.reregisterAll(ctx)
		}
		g.reregistering.Store(false)
	}
}

// reregisterAll is one pass of reregister over the registered connections.
func (g *Gateway) reregisterAll(ctx context.Context) {
	var mu sync.Mutex
	counts := map[string]int{}
	work := make(chan *conn)
	var wg sync.WaitGroup
	for range reregisterWorkers {
		wg.Go(func() {
			for c := range work {
				if ctx.Err() != nil {
					continue // the lease loop is stopping: the drain closes the session
				}
				rctx, cancel := context.WithTimeout(ctx, storeTimeout)
				res, err := g.deps.Handshakes.ReregisterRoute(rctx, store.Claim{
					Device: c.device, Gateway: g.cfg.ID, Conn: c.id, Epoch: c.epoch, Attempt: c.attempt})
				cancel()
				outcome := logline.KeyKept
				switch {
				case err != nil && ctx.Err() != nil:
					continue // stopped, not lost: the drain tells the client goaway
				case err != nil:
					outcome = logline.KeyClosedCount
					c.terminate(protocol.CloseLeaseLost, "lease lost")
				case !res.Accepted:
					outcome = logline.KeyReplaced
					g.closeReplaced(c, "reregister")
				case res.Version != c.version.Swap(res.Version):
					outcome = logline.KeyRestored
					g.metrics.Claims.Add(1)
				}
				if res.Accepted && g.reg.get(c.id) == nil {
					g.releaseEnded(c)
				}
				mu.Lock()
				counts[outcome]++
				mu.Unlock()
			}
		})
	}
	for _, c := range g.reg.all() {
		// A conn whose claim has not been accepted has no route to restore
		// (claimHandshake re-registers it if the lease lapsed meanwhile).
		if _, _, done := c.termination(); !done && c.claimed.Load() {
			work <- c
		}
	}
	close(work)
	wg.Wait()
	g.log.Info(logline.Reregistered, logline.KeyKept, counts[logline.KeyKept], logline.KeyRestored, counts[logline.KeyRestored],
		logline.KeyReplaced, counts[logline.KeyReplaced], logline.KeyClosedCount, counts[logline.KeyClosedCount])
}

// releaseEnded deletes the route a re-registration wrote for a session
// that ended while it ran: the session's own release may have come first.
// (A session leaves the registry before its release, so a re-registration
// that finds it gone after writing runs after that release, or before it.)
func (g *Gateway) releaseEnded(c *conn) {
	rctx, cancel := context.WithTimeout(g.ctx, storeTimeout)
	defer cancel()
	if err := g.deps.Handshakes.ReleaseRoute(rctx, c.device, c.id); err != nil {
		g.orphansSuspected.Store(true)
	}
}

// reregisterOne restores one freshly claimed connection's route after the
// lease lapsed during its claim; the rejection, if any, answers its
// handshake (the conn is then released).
func (g *Gateway) reregisterOne(c *conn) *rejection {
	rctx, cancel := context.WithTimeout(g.ctx, storeTimeout)
	res, err := g.deps.Handshakes.ReregisterRoute(rctx, store.Claim{
		Device: c.device, Gateway: g.cfg.ID, Conn: c.id, Epoch: c.epoch, Attempt: c.attempt})
	cancel()
	switch {
	case err != nil:
		go g.endSession(c, -1, "claim failed")
		return storeUnavailable(err)
	case !res.Accepted:
		go g.endSession(c, -1, "replaced during the claim")
		return notNewer(c.epoch, c.attempt, res.Floor, "; it was accepted, then overtaken while the lease lapsed")
	}
	c.version.Store(res.Version)
	return nil
}
