package gateway

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Rejection reasons: the HTTP status the handshake got, or "store" when a
// database error answered 503.
const (
	reason400   = "400"
	reason401   = "401"
	reason409   = "409"
	reason429   = "429"
	reason503   = "503"
	reasonStore = "store"
)

var rejectReasons = []string{reason400, reason401, reason409, reason429, reason503, reasonStore}

// Metrics are the gateway's counters, exposed at /metrics in the Prometheus
// text format. All fields are safe for concurrent use.
type Metrics struct {
	Admitted        atomic.Int64 // handshakes upgraded (101) with a claimed route
	rejected        sync.Map     // reason -> *atomic.Int64
	Claims          atomic.Int64 // accepted route claims (including re-registrations)
	KicksSent       atomic.Int64 // accepted claims that replaced another connection's route
	KicksReceived   atomic.Int64 // im_kick notifications addressed to this gateway
	ReplacedClosed  atomic.Int64 // local connections closed with 4001
	RoutesReclaimed atomic.Int64 // routes of expired gateways deleted by this gateway's sweeps
	LeaseLost       atomic.Int64 // times the own lease lapsed on the local clock
	ListenReconnect atomic.Int64 // LISTEN connection re-established
	Live            atomic.Int64 // open WebSocket connections
	LeaseRenew      Histogram    // lease renew round trip, seconds
	Handshake       Histogram    // handshake handling until 101 or rejection, seconds
}

// Rejected returns the rejections counted for reason ("429", "503", ...).
func (m *Metrics) Rejected(reason string) int64 { return m.rejectedCounter(reason).Load() }

func (m *Metrics) rejectedCounter(reason string) *atomic.Int64 {
	c, _ := m.rejected.LoadOrStore(reason, new(atomic.Int64))
	return c.(*atomic.Int64)
}

// histogramBounds are upper bounds in seconds, 1ms..2.5s.
var histogramBounds = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5}

// Histogram is a fixed-bucket Prometheus histogram of durations in seconds.
type Histogram struct {
	mu     sync.Mutex
	counts [12]int64 // len(histogramBounds)+1, the last is +Inf
	sum    float64
	n      int64
}

// Observe records one duration.
func (h *Histogram) Observe(d time.Duration) {
	s := d.Seconds()
	i := 0
	for i < len(histogramBounds) && s > histogramBounds[i] {
		i++
	}
	h.mu.Lock()
	h.counts[i]++
	h.sum += s
	h.n++
	h.mu.Unlock()
}

func (h *Histogram) write(w io.Writer, name, help string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name)
	var cum int64
	for i, b := range histogramBounds {
		cum += h.counts[i]
		fmt.Fprintf(w, "%s_bucket{le=\"%g\"} %d\n", name, b, cum)
	}
	fmt.Fprintf(w, "%s_bucket{le=\"+Inf\"} %d\n%s_sum %g\n%s_count %d\n", name, h.n, name, h.sum, name, h.n)
}

// WriteText writes every metric in the Prometheus text exposition format.
func (m *Metrics) WriteText(w io.Writer) {
	counter := func(name, help string, v int64) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n%s %d\n", name, help, name, name, v)
	}
	counter("gateway_handshakes_admitted_total", "Handshakes upgraded with a claimed route.", m.Admitted.Load())
	fmt.Fprintf(w, "# HELP gateway_handshakes_rejected_total Handshakes refused, by HTTP status (store = database error, answered 503).\n# TYPE gateway_handshakes_rejected_total counter\n")
	for _, r := range rejectReasons {
		fmt.Fprintf(w, "gateway_handshakes_rejected_total{reason=%q} %d\n", r, m.Rejected(r))
	}
	counter("gateway_route_claims_total", "Accepted route claims, re-registrations included.", m.Claims.Load())
	counter("gateway_kicks_sent_total", "Claims that replaced another connection's route (im_kick sent).", m.KicksSent.Load())
	counter("gateway_kicks_received_total", "im_kick notifications addressed to this gateway.", m.KicksReceived.Load())
	counter("gateway_replaced_closed_total", "Local connections closed with 4001.", m.ReplacedClosed.Load())
	counter("gateway_routes_reclaimed_total", "Routes of expired gateways deleted by this gateway's sweeps.", m.RoutesReclaimed.Load())
	counter("gateway_lease_lost_total", "Times the own lease lapsed on the local clock.", m.LeaseLost.Load())
	counter("gateway_listen_reconnects_total", "Times the LISTEN connection was re-established.", m.ListenReconnect.Load())
	fmt.Fprintf(w, "# HELP gateway_connections Open WebSocket connections.\n# TYPE gateway_connections gauge\ngateway_connections %d\n", m.Live.Load())
	m.LeaseRenew.write(w, "gateway_lease_renew_seconds", "Lease renew round trip.")
	m.Handshake.write(w, "gateway_handshake_seconds", "Handshake handling until 101 or rejection.")
}
