package gateway

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"strconv"
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
		w.Header().Set(protocol.HeaderGateway, g.cfg.ID)
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
	w.Header().Set(protocol.HeaderGateway, g.cfg.ID)
	c, rej := g.admitHandshake(r.Context(), r)
	if rej != nil {
		g.metrics.Handshake.Observe(time.Since(began))
		g.writeRejection(w, r, rej)
		return
	}
	hw := &hijackCapture{ResponseWriter: w}
	ws, err := websocket.Accept(hw, r, &websocket.AcceptOptions{
		OnPongReceived: func(context.Context, []byte) { c.lastSeen.Store(int64(g.mono())) },
	})
	g.metrics.Handshake.Observe(time.Since(began))
	if err != nil {
		g.log.Warn("upgrade_failed", "device", c.device, "conn", c.id, "err", err.Error())
		g.endSession(c, -1, "upgrade failed")
		return
	}
	c.bind(ws, hw.conn)
	g.metrics.Admitted.Add(1)
	g.log.Info(logline.Admitted, logline.KeyDevice, c.device, "conn", c.id, "version", c.version.Load(),
		"install_epoch", c.epoch, logline.KeyAttempt, c.attempt, logline.KeyTokenMs, float64(c.admittedAt)/1e6)
	g.serveSession(c, ws)
}

func (g *Gateway) writeRejection(w http.ResponseWriter, r *http.Request, rej *rejection) {
	g.metrics.rejectedCounter(rej.reason).Add(1)
	if rej.status == protocol.StatusTooManyRequests || rej.status == protocol.StatusServiceUnavailable {
		w.Header().Set(protocol.HeaderRetryAfter, strconv.Itoa(g.cfg.retryAfterSeconds()))
	}
	args := []any{logline.KeyStatus, rej.status, "reason", rej.reason, "cause", rej.message, logline.KeyDevice, rej.device, "remote", r.RemoteAddr}
	if rej.detail != "" {
		args = append(args, "err", rej.detail)
	}
	g.log.Info(logline.Rejected, args...)
	http.Error(w, rej.message, rej.status)
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
