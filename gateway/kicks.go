package gateway

import (
	"context"
	"time"

	"stormsim/gateway/logline"
	"stormsim/gateway/protocol"
	"stormsim/gateway/store"
)

// LISTEN reconnect backoff: quick, because kicks are lost while it is down.
const (
	listenBackoffMin = 20 * time.Millisecond
	listenBackoffMax = time.Second
)

// listenLoop keeps the dedicated LISTEN connection up. After every
// (re)connect it reconciles, because notifications sent while nobody
// listened are lost.
func (g *Gateway) listenLoop(ctx context.Context) {
	backoff := listenBackoffMin
	var downSince time.Time
	connected := false
	for ctx.Err() == nil {
		err := g.deps.Kicks.ListenKicks(ctx, func() {
			g.listening.Store(true)
			if connected {
				g.metrics.ListenReconnect.Add(1)
				g.log.Info(logline.ListenReconnected, "down_ms", time.Since(downSince).Milliseconds())
			}
			connected = true
			backoff = listenBackoffMin
			// On the lease pool, which a handshake storm cannot starve, and
			// concurrently with the notifications that now arrive again.
			go g.reconcile(ctx, "listen")
		}, g.onKick)
		was := g.listening.Swap(false)
		if ctx.Err() != nil {
			return
		}
		if was {
			downSince = time.Now()
			g.log.Warn(logline.ListenLost, "err", err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, listenBackoffMax)
	}
}

// onKick closes the named local connection if it still serves the device.
func (g *Gateway) onKick(k store.Kick) {
	if k.Gateway != g.cfg.ID {
		return
	}
	g.metrics.KicksReceived.Add(1)
	if c := g.reg.get(k.Conn); c != nil && c.device == k.Device {
		g.closeReplaced(c, "notify")
	}
}

// closeReplaced closes c with 4001 (replaced: do not reconnect).
func (g *Gateway) closeReplaced(c *conn, source string) {
	if c.terminate(protocol.CloseReplaced, "replaced") {
		g.metrics.ReplacedClosed.Add(1)
		g.log.Info(logline.Kicked, logline.KeyDevice, c.device, logline.KeyConn, c.id, logline.KeySource, source)
	}
}

// reconcile closes local connections whose device's floor records a newer
// claim than theirs: they were replaced while their kick could not arrive.
func (g *Gateway) reconcile(ctx context.Context, source string) {
	if ctx.Err() != nil {
		return
	}
	var conns []*conn
	for _, c := range g.reg.all() {
		if c.claimed.Load() { // an unclaimed conn's floor check is its own claim's
			conns = append(conns, c)
		}
	}
	if len(conns) == 0 {
		return
	}
	devices := make([]string, len(conns))
	for i, c := range conns {
		devices[i] = c.device
	}
	rctx, cancel := context.WithTimeout(ctx, storeTimeout)
	got, err := g.deps.Leases.Floors(rctx, devices)
	cancel()
	if err != nil {
		return
	}
	for _, c := range conns {
		if f, ok := got[c.device]; ok && (store.Floor{Epoch: c.epoch, Attempt: c.attempt}).Below(f.Epoch, f.Attempt) {
			g.closeReplaced(c, source)
		}
	}
}
