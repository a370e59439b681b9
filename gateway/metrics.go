package gateway

import (
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Rejection reasons: the HTTP status the handshake got, or a word where one
// status has several causes.
const (
	reason400     = "400"     // malformed claim, or a WebSocket version or key problem
	reason401     = "401"     // malformed credentials, unknown device or wrong token
	reason403     = "403"     // cross-origin
	reason405     = "405"     // not GET
	reason409     = "409"     // claim not newer than the floor
	reason426     = "426"     // not a WebSocket upgrade
	reason429     = "429"     // no admission token
	reasonSource  = "source"  // 429 from the per-source pre-limit
	reason503     = "503"     // draining or own lease lapsed
	reasonBusy    = "busy"    // 503: MaxClaimsInflight others waiting for a claim slot, or the wait timed out
	reasonStore   = "store"   // 503: database error
	reasonUpgrade = "upgrade" // the upgrade failed after the claim (the route is released)
)

var rejectReasons = []string{reason400, reason401, reason403, reason405, reason409, reason426, reason429,
	reasonSource, reason503, reasonBusy, reasonStore, reasonUpgrade}

// Metrics are the gateway's counters, exposed at /metrics in the Prometheus
// text format. All fields are safe for concurrent use. Every handshake (a
// request to protocol.Path) is counted exactly once: in Admitted, in one
// rejected reason, in Abandoned or in ClaimsWasted.
type Metrics struct {
	Admitted        atomic.Int64 // handshakes upgraded (101) with a claimed route
	rejected        sync.Map     // reason -> *atomic.Int64
	Abandoned       atomic.Int64 // handshakes dropped without a claim because the client left (AbandonedSkip)
	ClaimsWasted    atomic.Int64 // claims that completed after their client left: not upgraded, route released
	Claims          atomic.Int64 // accepted route claims (including re-registrations)
	KicksSent       atomic.Int64 // accepted claims that replaced another connection's route
	KicksReceived   atomic.Int64 // im_kick notifications addressed to this gateway
	ReplacedClosed  atomic.Int64 // local connections closed with 4001
	RoutesReclaimed atomic.Int64 // routes of expired gateways deleted by this gateway's sweeps
	OrphansReleased atomic.Int64 // own routes deleted because no connection held them (a failed release)
	LeaseLost       atomic.Int64 // times the own lease lapsed on the local clock
	ListenReconnect atomic.Int64 // LISTEN connection re-established
	Live            atomic.Int64 // open WebSocket connections
	ClaimsInflight  atomic.Int64 // handshakes waiting for a claim slot or claiming now
	ClaimsWaiting   atomic.Int64 // handshakes waiting for a claim slot now
	TCPConns        atomic.Int64 // open TCP connections (sessions, requests, idle keep-alives)
	MaxConns        atomic.Int64 // Config.MaxConns (0 = no cap)
	ConnsRefused    atomic.Int64 // TCP connections answered 503 at the cap
	IdleEvicted     atomic.Int64 // idle keep-alive connections closed to make room
	// DescriptorsExhausted counts accepts that failed for want of a file
	// descriptor (EMFILE, ENFILE).
	DescriptorsExhausted atomic.Int64
	SyncsThrottled       atomic.Int64 // sync requests that waited for their connection's token
	LeaseRenew           Histogram    // lease renew round trip, seconds
	Handshake            Histogram    // handshake handling until 101 or rejection, seconds
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
	gauge := func(name, help string, v int64) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s gauge\n%s %d\n", name, help, name, name, v)
	}
	counter("gateway_handshakes_admitted_total", "Handshakes upgraded with a claimed route.", m.Admitted.Load())
	fmt.Fprintf(w, "# HELP gateway_handshakes_rejected_total Handshakes refused, by HTTP status or cause (source, busy, store, upgrade).\n# TYPE gateway_handshakes_rejected_total counter\n")
	for _, r := range rejectReasons {
		fmt.Fprintf(w, "gateway_handshakes_rejected_total{reason=%q} %d\n", r, m.Rejected(r))
	}
	counter("gateway_handshakes_abandoned_total", "Handshakes dropped without a claim because the client left (--abandoned skip).", m.Abandoned.Load())
	counter("gateway_claims_wasted_total", "Claims that completed after their client left; not upgraded, route released.", m.ClaimsWasted.Load())
	counter("gateway_route_claims_total", "Accepted route claims, re-registrations included.", m.Claims.Load())
	counter("gateway_kicks_sent_total", "Claims that replaced another connection's route (im_kick sent).", m.KicksSent.Load())
	counter("gateway_kicks_received_total", "im_kick notifications addressed to this gateway.", m.KicksReceived.Load())
	counter("gateway_replaced_closed_total", "Local connections closed with 4001.", m.ReplacedClosed.Load())
	counter("gateway_routes_reclaimed_total", "Routes of expired gateways deleted by this gateway's sweeps.", m.RoutesReclaimed.Load())
	counter("gateway_orphan_routes_released_total", "Own routes deleted because no connection held them.", m.OrphansReleased.Load())
	counter("gateway_lease_lost_total", "Times the own lease lapsed on the local clock.", m.LeaseLost.Load())
	counter("gateway_listen_reconnects_total", "Times the LISTEN connection was re-established.", m.ListenReconnect.Load())
	counter("gateway_tcp_refused_total", "TCP connections answered 503 at --max-conns.", m.ConnsRefused.Load())
	counter("gateway_idle_evicted_total", "Idle keep-alive connections closed to make room.", m.IdleEvicted.Load())
	counter("gateway_descriptors_exhausted_total", "Accepts that failed for want of a file descriptor.", m.DescriptorsExhausted.Load())
	counter("gateway_syncs_throttled_total", "Sync requests that waited for their connection's rate limit.", m.SyncsThrottled.Load())
	gauge("gateway_connections", "Open WebSocket connections.", m.Live.Load())
	gauge("gateway_claims_inflight", "Handshakes waiting for a claim slot or claiming.", m.ClaimsInflight.Load())
	gauge("gateway_claims_waiting", "Handshakes waiting for a claim slot (--max-claims-inflight bounds it).", m.ClaimsWaiting.Load())
	gauge("gateway_tcp_connections", "Open TCP connections: sessions, requests and idle keep-alives.", m.TCPConns.Load())
	gauge("gateway_tcp_connections_max", "The --max-conns cap (0 = none).", m.MaxConns.Load())
	gauge("go_goroutines", "Goroutines of the gateway process.", int64(runtime.NumGoroutine()))
	if rss, ok := residentBytes(); ok {
		gauge("process_resident_memory_bytes", "Resident set size of the gateway process.", rss)
	}
	m.LeaseRenew.write(w, "gateway_lease_renew_seconds", "Lease renew round trip.")
	m.Handshake.write(w, "gateway_handshake_seconds", "Handshake handling until 101 or rejection.")
}
