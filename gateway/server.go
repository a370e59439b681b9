package gateway

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"time"

	"github.com/coder/websocket"

	"stormsim/gateway/logline"
	"stormsim/gateway/protocol"
)

// Handler serves protocol.Path (WebSocket handshakes), /metrics (Prometheus
// text) and /healthz (200 while admitting, 503 while draining or with a
// lapsed lease).
func (g *Gateway) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(protocol.Path, g.serveWS)
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		g.metrics.WriteText(w)
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		switch {
		case g.reg.isDraining():
			http.Error(w, "draining", http.StatusServiceUnavailable)
		case g.leaseExpired():
			http.Error(w, "lease lost", http.StatusServiceUnavailable)
		default:
			w.Write([]byte("ok\n"))
		}
	})
	return mux
}

// serveWS is the WebSocket plumbing around admitHandshake: answer a
// rejection, or upgrade and run the session in this goroutine.
func (g *Gateway) serveWS(w http.ResponseWriter, r *http.Request) {
	began := time.Now()
	c, rej := g.admitHandshake(r)
	if rej != nil {
		g.metrics.Handshake.Observe(time.Since(began))
		if rej.status == protocol.StatusConflict {
			w.Header().Set(protocol.HeaderGateway, g.cfg.ID) // authenticated: it may know who refused it
		}
		if rej.upgrade {
			w.Header().Set("Connection", "Upgrade")
			w.Header().Set("Upgrade", "websocket")
		}
		if r.ContentLength != 0 {
			// Otherwise net/http would read the request's body before
			// answering, and a client that sent none would never be answered.
			w.Header().Set("Connection", "close")
		}
		g.writeRejection(w, r, rej)
		return
	}
	if c == nil {
		return // the client left; counted and logged as abandoned or wasted
	}
	w.Header().Set(protocol.HeaderGateway, g.cfg.ID)
	hw := &hijackCapture{ResponseWriter: w}
	ws, err := websocket.Accept(hw, r, &websocket.AcceptOptions{
		OnPongReceived: func(context.Context, []byte) { c.lastSeen.Store(int64(g.mono())) },
	})
	g.metrics.Handshake.Observe(time.Since(began))
	if err != nil {
		g.metrics.rejectedCounter(reasonUpgrade).Add(1)
		g.log.Warn(logline.UpgradeFailed, logline.KeyDevice, c.device, logline.KeyConn, c.id, "err", err.Error())
		g.endSession(c, -1, "upgrade failed")
		return
	}
	c.lastSeen.Store(int64(g.mono())) // the idle clock starts with the connection, not before the claim
	c.bind(ws, hw.conn)
	g.metrics.Admitted.Add(1)
	g.log.Info(logline.Admitted, logline.KeyDevice, c.device, logline.KeyConn, c.id, "version", c.version.Load(),
		"install_epoch", c.epoch, logline.KeyAttempt, c.attempt, logline.KeyTokenMs, float64(c.admittedAt)/1e6)
	g.serveSession(c, ws)
}

// hijackCapture remembers the TCP connection websocket.Accept hijacks, so a
// drain or a stuck close can drop it outright.
type hijackCapture struct {
	http.ResponseWriter
	conn net.Conn
}

func (h *hijackCapture) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	nc, brw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	h.conn = nc
	return nc, brw, err
}
