package gateway

import (
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"stormsim/gateway/protocol"
)

// conn is one device connection from the moment its handshake is about to
// claim a route until its session ends. It is registered before the claim so
// that a kick arriving between the claim's commit and the upgrade is not lost.
type conn struct {
	id      string
	device  string
	epoch   int64
	attempt int64
	version atomic.Int64 // route version, changes on re-registration
	claimed atomic.Bool  // its claim was accepted: re-registration applies to it

	admittedAt time.Duration // gateway monotonic time its admission token was taken

	lastSeen atomic.Int64 // gateway monotonic ns of the last frame or pong

	mu         sync.Mutex
	ws         *websocket.Conn
	netConn    net.Conn // the hijacked TCP connection, to force a close
	stop       chan struct{}
	terminated bool
	code       websocket.StatusCode
	reason     string
	// drainPlace is the connection's place in a drain's order, and
	// drainBegan the drain's start: the goaway's hint is computed from
	// them when the goaway is written.
	drainPlace int
	drainBegan time.Time
}

func newConn(id, device string, epoch, attempt int64) *conn {
	return &conn{id: id, device: device, epoch: epoch, attempt: attempt, stop: make(chan struct{})}
}

// terminate asks the session to close with code; the first request wins.
// It reports whether this call was the first.
func (c *conn) terminate(code websocket.StatusCode, reason string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.terminated {
		return false
	}
	c.terminated, c.code, c.reason = true, code, reason
	close(c.stop)
	return true
}

// goaway asks the session to send a goaway, the connection being number
// place of the drain that began at began, then close 1001; the first
// termination request wins.
func (c *conn) goaway(place int, began time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.terminated {
		return false
	}
	c.terminated, c.code, c.reason, c.drainPlace, c.drainBegan = true, protocol.CloseGoingAway, "drain", place, began
	close(c.stop)
	return true
}

// drainOrder is the connection's place in its drain and the drain's start.
func (c *conn) drainOrder() (int, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.drainPlace, c.drainBegan
}

// termination returns the requested close, if any.
func (c *conn) termination() (websocket.StatusCode, string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.code, c.reason, c.terminated
}

func (c *conn) bind(ws *websocket.Conn, nc net.Conn) {
	c.mu.Lock()
	c.ws, c.netConn = ws, nc
	c.mu.Unlock()
}

// forceClose drops the TCP connection without a close handshake; every
// blocked read, write or close on it returns.
func (c *conn) forceClose() {
	c.mu.Lock()
	nc := c.netConn
	c.mu.Unlock()
	if nc != nil {
		nc.Close()
	}
}

// registry holds the gateway's connections by conn id, and the sessions that
// have left it but whose route release has not returned: until it does, the
// route may still be in the database, and a drain that released the
// gateway's routes meanwhile would count it as left over, or an orphan check
// would delete it twice.
type registry struct {
	mu        sync.Mutex
	draining  bool
	conns     map[string]*conn
	releasing map[string]struct{}
}

func newRegistry() *registry {
	return &registry{conns: make(map[string]*conn), releasing: make(map[string]struct{})}
}

// add registers c unless the gateway is draining.
func (r *registry) add(c *conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.draining {
		return false
	}
	r.conns[c.id] = c
	return true
}

func (r *registry) remove(c *conn) {
	r.mu.Lock()
	delete(r.conns, c.id)
	r.mu.Unlock()
}

// beginRelease unregisters c and counts its route release as in flight
// until endRelease: at every moment c is either registered or counted.
func (r *registry) beginRelease(c *conn) {
	r.mu.Lock()
	delete(r.conns, c.id)
	r.releasing[c.id] = struct{}{}
	r.mu.Unlock()
}

func (r *registry) endRelease(c *conn) {
	r.mu.Lock()
	delete(r.releasing, c.id)
	r.mu.Unlock()
}

// busy is the number of registered connections plus route releases in flight.
func (r *registry) busy() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.conns) + len(r.releasing)
}

// known reports whether conn id is registered or its release is in flight:
// a route of this gateway held by any other conn id has no connection.
func (r *registry) known(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, releasing := r.releasing[id]
	return releasing || r.conns[id] != nil
}

func (r *registry) get(id string) *conn {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.conns[id]
}

func (r *registry) all() []*conn {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*conn, 0, len(r.conns))
	for _, c := range r.conns {
		out = append(out, c)
	}
	return out
}

func (r *registry) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.conns)
}

func (r *registry) isDraining() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.draining
}

// beginDrain refuses further registrations and returns every connection
// registered so far: each of them is either in the snapshot or was refused.
func (r *registry) beginDrain() []*conn {
	r.mu.Lock()
	r.draining = true
	r.mu.Unlock()
	return r.all()
}
