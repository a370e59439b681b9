package gateway

import (
	"context"
	"sync"
	"time"

	"stormsim/gateway/logline"
	"stormsim/gateway/protocol"
	"stormsim/gateway/store"
)

// reregisterWorkers bounds concurrent re-registration transactions.
const reregisterWorkers = 8

// leaseState is owned by the lease loop goroutine.
type leaseState struct {
	lost           bool          // own lease lapsed on the local clock, not yet renewed
	renewFailing   bool          // last renew failed (logged once per outage)
	skipSweepUntil time.Duration // gateway monotonic time
	lastHeartbeat  time.Duration
}

// leaseExpired reports whether the last successful renew was sent at least a
// lease ago on the local monotonic clock: the database may already consider
// this gateway dead and sweep its routes, so it must not admit.
func (g *Gateway) leaseExpired() bool {
	return g.mono()-time.Duration(g.lastRenew.Load()) >= g.cfg.Lease
}

// leaseLoop runs every Config.Period: renew, reconcile while the LISTEN
// connection is down, sweep, heartbeat.
func (g *Gateway) leaseLoop(ctx context.Context) {
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
		s.lost = true
		g.metrics.LeaseLost.Add(1)
		g.log.Warn(logline.LeaseLost, "since_renew_ms", (g.mono() - time.Duration(g.lastRenew.Load())).Milliseconds())
	}
	if g.renew(ctx) && s.lost {
		s.lost = false
		g.log.Info(logline.LeaseRegained)
		go g.reregister(ctx)
	}
	if !g.listening.Load() { // kicks are being lost: reconcile before anything slower
		rctx, cancel := context.WithTimeout(ctx, g.cfg.Period())
		g.reconcile(rctx, "lease_loop")
		cancel()
	}
	if !s.lost && g.mono() >= s.skipSweepUntil {
		g.sweep(ctx)
	}
	g.heartbeat(g.mono())
}

// renew extends the lease; it may take up to half a lease (the loop then
// skips ticks) before it counts as failed. The local lease clock starts when the renew is
// sent, which is no later than the database's clock_timestamp() in it, so
// the local view of expiry is never later than the database's. A gap of more
// than two periods between successful renews is a stall (database outage,
// pause): sweeping then waits one lease, so that gateways that were cut off
// the same way get to renew before anyone sweeps them.
func (g *Gateway) renew(ctx context.Context) bool {
	s := &g.lease
	sent := g.mono()
	rctx, cancel := context.WithTimeout(ctx, g.cfg.Lease/2)
	err := g.deps.Leases.RenewLease(rctx, g.cfg.ID, g.cfg.Lease)
	cancel()
	g.metrics.LeaseRenew.Observe(g.mono() - sent)
	if err != nil {
		if !s.renewFailing && ctx.Err() == nil {
			g.log.Warn(logline.LeaseRenewFailed, "err", err.Error())
		}
		s.renewFailing = true
		return false
	}
	s.renewFailing = false
	prev := time.Duration(g.lastRenew.Swap(int64(sent)))
	if sent-prev > 2*g.cfg.Period() {
		s.skipSweepUntil = sent + g.cfg.Lease
		g.log.Info(logline.SweepPaused, "renew_gap_ms", (sent - prev).Milliseconds(), "for_ms", g.cfg.Lease.Milliseconds())
	}
	g.log.Debug("lease_renewed", "latency_ms", float64(g.mono()-sent)/1e6)
	return true
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

// heartbeat pings connections and closes idle ones (4002). After a stall of
// the loop itself (a pause of this process) clients get a fresh idle window:
// their silence was this process's fault.
func (g *Gateway) heartbeat(now time.Duration) {
	s := &g.lease
	stalled := s.lastHeartbeat > 0 && now-s.lastHeartbeat > 2*g.cfg.Period()
	s.lastHeartbeat = now
	for _, c := range g.reg.all() {
		ws := c.socket()
		if ws == nil {
			continue
		}
		if stalled {
			c.lastSeen.Store(int64(now))
			continue
		}
		if g.cfg.Idle > 0 && now-time.Duration(c.lastSeen.Load()) > g.cfg.Idle {
			if c.terminate(protocol.CloseIdle, "idle") {
				g.log.Info("idle_closed", "device", c.device, "conn", c.id)
			}
			continue
		}
		if g.cfg.Ping > 0 && now-time.Duration(c.lastPing.Load()) >= g.cfg.Ping && c.pinging.CompareAndSwap(false, true) {
			c.lastPing.Store(int64(now))
			go func() {
				defer c.pinging.Store(false)
				pctx, cancel := context.WithTimeout(g.ctx, max(g.cfg.Ping, g.cfg.Idle))
				defer cancel()
				ws.Ping(pctx) // the pong updates lastSeen via OnPongReceived
			}()
		}
	}
}

// reregister restores the routes of live connections after the lease lapsed
// and was renewed: others may have swept them meanwhile. A connection whose
// device has since been claimed by a newer handshake is closed with 4001; one
// whose re-registration fails on the database is closed with 4003 (lease
// lost), so no connection stays open without a route.
func (g *Gateway) reregister(ctx context.Context) {
	if !g.reregistering.CompareAndSwap(false, true) {
		return
	}
	defer g.reregistering.Store(false)
	var mu sync.Mutex
	counts := map[string]int{}
	work := make(chan *conn)
	var wg sync.WaitGroup
	for range reregisterWorkers {
		wg.Go(func() {
			for c := range work {
				rctx, cancel := context.WithTimeout(ctx, storeTimeout)
				ok, v, err := g.deps.Handshakes.ReregisterRoute(rctx, store.Claim{
					Device: c.device, Gateway: g.cfg.ID, Conn: c.id, Epoch: c.epoch, Attempt: c.attempt})
				cancel()
				outcome := "kept"
				switch {
				case err != nil:
					outcome = "closed"
					c.terminate(protocol.CloseLeaseLost, "lease lost")
				case !ok:
					outcome = "replaced"
					g.closeReplaced(c, "reregister")
				case v != c.version.Swap(v):
					outcome = "restored"
					g.metrics.Claims.Add(1)
				}
				mu.Lock()
				counts[outcome]++
				mu.Unlock()
			}
		})
	}
	for _, c := range g.reg.all() {
		if _, _, done := c.termination(); !done {
			work <- c
		}
	}
	close(work)
	wg.Wait()
	g.log.Info("reregistered", "kept", counts["kept"], "restored", counts["restored"],
		"replaced", counts["replaced"], "closed", counts["closed"])
}
