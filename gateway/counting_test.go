package gateway_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"stormsim/gateway"
	"stormsim/gateway/logline"
	"stormsim/gateway/protocol"
	"stormsim/gateway/store"
)

// handshakesCounted is every handshake the metrics account for.
func handshakesCounted(m *gateway.Metrics) int64 {
	n := m.Admitted.Load() + m.Abandoned.Load() + m.ClaimsWasted.Load()
	for _, r := range []string{"400", "401", "403", "405", "409", "426", "429", "source", "503", "busy", "store", "upgrade"} {
		n += m.Rejected(r)
	}
	return n
}

// TestEveryHandshakeCountedOnce: each kind of outcome raises exactly one
// counter by one, so admitted + rejected (all reasons) + abandoned + wasted
// is the number of handshakes.
func TestEveryHandshakeCountedOnce(t *testing.T) {
	s, _ := setup(t, 3)
	cfg := scarceTokens("gw-count", 6)
	p := startInproc(t, cfg, depsOf(t, s))
	ctx := context.Background()
	valid := func(dev string) http.Header {
		return withHeader(wsHeaders(), protocol.HeaderAuthorization, "Bearer "+dev+":"+store.DeviceToken(dev))
	}
	sent := 0
	send := func(method, target string, h http.Header) int {
		sent++
		resp, _ := rawRequest(t, p.addr, method, target, h)
		return resp.StatusCode
	}
	live, _, err := dial(ctx, p.addr, "u-000-d1", 0, 1, true) // 101
	if err != nil {
		t.Fatal(err)
	}
	sent++
	statuses := []int{
		send("GET", protocol.Path+"?attempt=2", http.Header{}),                                                               // 426
		send("POST", protocol.Path+"?attempt=2", valid("u-000-d1")),                                                          // 405
		send("GET", protocol.Path+"?attempt=2", withHeader(valid("u-000-d1"), "Sec-WebSocket-Key")),                          // 400
		send("GET", protocol.Path+"?attempt=2", withHeader(valid("u-000-d1"), "Origin", "http://x.example")),                 // 403
		send("GET", protocol.Path+"?attempt=x", valid("u-000-d1")),                                                           // 400
		send("GET", protocol.Path+"?attempt=2", wsHeaders()),                                                                 // 401, no token
		send("GET", protocol.Path+"?attempt=2", withHeader(wsHeaders(), protocol.HeaderAuthorization, "Bearer u-001-d1:no")), // 401
		send("GET", protocol.Path+"?attempt=1", valid("u-000-d1")),                                                           // 409
		send("GET", protocol.Path+"?attempt=1", valid("u-002-d1")),                                                           // 101 (raw: closed at once)
	}
	for i := range 4 {
		statuses = append(statuses, send("GET", protocol.Path+"?attempt="+strconv.Itoa(10+i), valid("u-001-d1"))) // 101, 101, then 429s
	}
	t.Logf("statuses %v", statuses)
	waitFor(t, 3*time.Second, "raw sessions ended", func() bool { return p.g.Connections() == 1 })
	if got := handshakesCounted(p.g.Metrics()); got != int64(sent) {
		t.Errorf("metrics account for %d handshakes, %d were sent", got, sent)
	}
	live.ws.CloseNow()
}

// slowClaims delays every claim, as a loaded database would.
type slowClaims struct {
	gateway.Handshakes
	delay time.Duration
}

func (s slowClaims) AuthenticateAndClaim(ctx context.Context, c store.Claim, token string) (store.ClaimResult, error) {
	time.Sleep(s.delay)
	return s.Handshakes.AuthenticateAndClaim(ctx, c, token)
}

// flakyLeases fails every lease renewal while down is set.
type flakyLeases struct {
	gateway.Leases
	down atomic.Bool
}

func (f *flakyLeases) AcquireLease(ctx context.Context, gw, owner string, lease time.Duration) (bool, error) {
	if f.down.Load() {
		return false, context.DeadlineExceeded
	}
	return f.Leases.AcquireLease(ctx, gw, owner, lease)
}

// TestLeaseLapseDuringClaimKeepsTheConnection: the gateway's lease lapses
// and is regained while a handshake's claim is still running. The
// re-registration that follows must not treat that claim as a connection
// replaced by a newer one (it has no route yet): the handshake completes,
// its session stays open with its route, and nothing is counted as
// replaced.
func TestLeaseLapseDuringClaimKeepsTheConnection(t *testing.T) {
	s, _ := setup(t, 1)
	cfg := testConfig("gw-lapse")
	cfg.Lease, cfg.Ping, cfg.Idle = 600*time.Millisecond, 200*time.Millisecond, 3*time.Second
	leases := &flakyLeases{Leases: leasePool(t, s)}
	p := startInproc(t, cfg, gateway.Deps{Handshakes: slowClaims{Handshakes: s, delay: 2 * time.Second}, Leases: leases, Kicks: s})
	type result struct {
		c   *client
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, _, err := dial(context.Background(), p.addr, "u-000-d1", 0, 1, true)
		done <- result{c, err}
	}()
	time.Sleep(100 * time.Millisecond) // the claim is under way
	leases.down.Store(true)
	waitFor(t, 3*time.Second, "lease lost", func() bool { return len(p.logs.events(logline.LeaseLost)) > 0 })
	leases.down.Store(false)
	waitFor(t, 3*time.Second, "re-registration", func() bool { return len(p.logs.events(logline.Reregistered)) > 0 })
	r := <-done
	if r.err != nil {
		t.Fatalf("handshake: %v", r.err)
	}
	select {
	case <-r.c.closed:
		t.Fatalf("session closed right after its hello: %v", r.c.closeErr)
	case <-time.After(500 * time.Millisecond):
	}
	if e := p.logs.events(logline.Reregistered)[0]; e.num(logline.KeyReplaced) != 0 || e.num(logline.KeyClosedCount) != 0 {
		t.Errorf("reregistered %v: the claim in flight was counted", e)
	}
	if got := p.g.Metrics().ReplacedClosed.Load(); got != 0 {
		t.Errorf("replaced_closed = %d, want 0", got)
	}
	if o := routeOf(t, s, "u-000-d1"); o.Conn != r.c.hello.Conn {
		t.Errorf("route %+v, want the session's %s", o, r.c.hello.Conn)
	}
}

// claimThenLapse runs each claim, then (once) makes the gateway's lease
// lapse and a newer claim of the same device win on another gateway before
// the claim returns: the handshake's re-registration then finds the floor
// moved on.
type claimThenLapse struct {
	gateway.Handshakes
	once  sync.Once
	lapse func()
}

func (c *claimThenLapse) AuthenticateAndClaim(ctx context.Context, cl store.Claim, token string) (store.ClaimResult, error) {
	r, err := c.Handshakes.AuthenticateAndClaim(ctx, cl, token)
	c.once.Do(c.lapse)
	return r, err
}

// TestClaimOvertakenDuringALapseCitesTheFloor: a claim accepted while the
// lease lapsed, and overtaken by a newer claim before it could re-register,
// is refused with a 409 that, like every other 409, cites the recorded
// claim that beat it.
func TestClaimOvertakenDuringALapseCitesTheFloor(t *testing.T) {
	s, _ := setup(t, 1)
	cfg := testConfig("gw-overtaken")
	cfg.Lease, cfg.Ping, cfg.Idle = 600*time.Millisecond, 200*time.Millisecond, 3*time.Second
	leases := &flakyLeases{Leases: leasePool(t, s)}
	var p *inproc
	hs := &claimThenLapse{Handshakes: s, lapse: func() {
		leases.down.Store(true)
		waitFor(t, 3*time.Second, "lease lost", func() bool { return p.g.Metrics().LeaseLost.Load() > 0 })
		if _, err := s.ClaimRoute(context.Background(), store.Claim{Device: "u-000-d1", Gateway: "gw-other", Conn: "other-1", Epoch: 0, Attempt: 7}); err != nil {
			t.Error(err)
		}
		leases.down.Store(false)
	}}
	p = startInproc(t, cfg, gateway.Deps{Handshakes: hs, Leases: leases, Kicks: s})
	h := withHeader(wsHeaders(), protocol.HeaderAuthorization, "Bearer u-000-d1:"+store.DeviceToken("u-000-d1"))
	resp, body := rawRequest(t, p.addr, "GET", protocol.Path+"?attempt=3", h)
	if resp.StatusCode != protocol.StatusConflict || !strings.Contains(body, "(install_epoch 0, attempt 3)") ||
		!strings.Contains(body, "recorded (0, 7)") {
		t.Errorf("overtaken claim answered %d %q, want 409 citing the recorded (0, 7)", resp.StatusCode, body)
	}
	if o := routeOf(t, s, "u-000-d1"); o.Conn != "other-1" {
		t.Errorf("route %+v, want the newer claim's", o)
	}
}

// gatedReregister holds every re-registration until gate is closed, and
// says when the first one arrived.
type gatedReregister struct {
	gateway.Handshakes
	arrived chan struct{}
	once    sync.Once
	gate    chan struct{}
}

func (g *gatedReregister) ReregisterRoute(ctx context.Context, c store.Claim) (store.ClaimResult, error) {
	g.once.Do(func() { close(g.arrived) })
	<-g.gate
	return g.Handshakes.ReregisterRoute(ctx, c)
}

// lapseUntilReregistering fails the lease's renewals until p notices the
// lapse, then lets them through and waits until arrived says that the
// re-registration that follows has reached the store.
func lapseUntilReregistering(t *testing.T, p *inproc, leases *flakyLeases, arrived <-chan struct{}) {
	t.Helper()
	leases.down.Store(true)
	waitFor(t, 3*time.Second, "lease lost", func() bool { return p.g.Metrics().LeaseLost.Load() > 0 })
	leases.down.Store(false)
	select {
	case <-arrived:
	case <-time.After(3 * time.Second):
		t.Fatal("no re-registration")
	}
}

// TestSessionEndingDuringItsReregistration: a session that ends while the
// gateway re-registers it after a lapse (its release runs before the
// re-registration writes the route again) does not leave a route behind:
// the device must not look online on a connection that is gone.
func TestSessionEndingDuringItsReregistration(t *testing.T) {
	s, _ := setup(t, 1)
	cfg := testConfig("gw-rereg-ended")
	cfg.Lease, cfg.Ping, cfg.Idle = 600*time.Millisecond, 200*time.Millisecond, 3*time.Second
	leases := &flakyLeases{Leases: leasePool(t, s)}
	hs := &gatedReregister{Handshakes: s, arrived: make(chan struct{}), gate: make(chan struct{})}
	p := startInproc(t, cfg, gateway.Deps{Handshakes: hs, Leases: leases, Kicks: s})
	c := connectAll(t, p.addr, 0, 1, 1)[0]
	lapseUntilReregistering(t, p, leases, hs.arrived)
	c.ws.Close(websocket.StatusNormalClosure, "bye")
	waitFor(t, 3*time.Second, "the session closed", func() bool { return len(p.logs.events(logline.Closed)) > 0 })
	close(hs.gate)
	waitFor(t, 3*time.Second, "the re-registration done", func() bool { return len(p.logs.events(logline.Reregistered)) > 0 })
	time.Sleep(2 * cfg.Period()) // a release that follows would be done
	if o := routeOf(t, s, "u-000-d1"); o != (store.Owner{}) {
		t.Errorf("route %+v left for a session that ended during its re-registration", o)
	}
}

// queuedClaims holds device 0's claim before it is sent, so that it keeps
// the gateway's one claim slot, and holds device 1's answer after its claim
// has committed, as a database connection that stalls on the way back would.
type queuedClaims struct {
	gateway.Handshakes
	hold0      chan struct{}
	committed1 chan struct{}
	answer1    chan struct{}
}

func (q *queuedClaims) AuthenticateAndClaim(ctx context.Context, c store.Claim, token string) (store.ClaimResult, error) {
	switch c.Device {
	case store.DeviceID(0):
		<-q.hold0
	case store.DeviceID(1):
		r, err := q.Handshakes.AuthenticateAndClaim(ctx, c, token)
		close(q.committed1)
		<-q.answer1
		return r, err
	}
	return q.Handshakes.AuthenticateAndClaim(ctx, c, token)
}

// TestLapseWhileAClaimWaitsForItsSlot: a handshake that passed the lease
// check and then waited for a claim slot while the lease lapsed claims
// during the lapse; another gateway sweeps the route it wrote, and the
// re-registration after the renewal passes it by (its claim has not
// returned yet). The claim must still re-register itself: its session may
// not stay open without its route.
func TestLapseWhileAClaimWaitsForItsSlot(t *testing.T) {
	s, _ := setup(t, 2)
	cfg := testConfig("gw-slot-lapse")
	cfg.Lease, cfg.Ping, cfg.Idle = 600*time.Millisecond, 200*time.Millisecond, 5*time.Second
	cfg.ClaimConcurrency = 1
	leases := &flakyLeases{Leases: leasePool(t, s)}
	hs := &queuedClaims{Handshakes: s, hold0: make(chan struct{}), committed1: make(chan struct{}), answer1: make(chan struct{})}
	p := startInproc(t, cfg, gateway.Deps{Handshakes: hs, Leases: leases, Kicks: s})
	type result struct {
		c   *client
		err error
	}
	first, second := make(chan result, 1), make(chan result, 1)
	go func() {
		c, _, err := dial(context.Background(), p.addr, store.DeviceID(0), 0, 1, true)
		first <- result{c, err}
	}()
	waitFor(t, 3*time.Second, "device 0's claim holds the slot", func() bool { return p.g.Metrics().ClaimsInflight.Load() == 1 })
	go func() {
		c, _, err := dial(context.Background(), p.addr, store.DeviceID(1), 0, 1, true)
		second <- result{c, err}
	}()
	waitFor(t, 3*time.Second, "device 1 waits for the slot", func() bool { return p.g.Metrics().ClaimsWaiting.Load() == 1 })
	leases.down.Store(true)
	waitFor(t, 3*time.Second, "lease lost", func() bool { return p.g.Metrics().LeaseLost.Load() > 0 })
	close(hs.hold0)
	select {
	case <-hs.committed1:
	case <-time.After(3 * time.Second):
		t.Fatal("device 1's claim never ran")
	}
	waitFor(t, 3*time.Second, "another gateway swept the lapsed lease's routes", func() bool {
		s.Sweep(context.Background(), "gw-sweeper")
		return routeOf(t, s, store.DeviceID(1)) == store.Owner{}
	})
	rereg := len(p.logs.events(logline.Reregistered))
	leases.down.Store(false)
	waitFor(t, 3*time.Second, "the re-registration after the renewal", func() bool { return len(p.logs.events(logline.Reregistered)) > rereg })
	close(hs.answer1)
	r := <-second
	if r.err != nil {
		t.Logf("device 1's handshake refused: %v", r.err)
	} else {
		within := cfg.Lease + 2*cfg.Period()
		deadline := time.Now().Add(within)
		for r.c.isOpen() && routeOf(t, s, store.DeviceID(1)).Conn != r.c.hello.Conn {
			if time.Now().After(deadline) {
				t.Fatalf("device 1's session %s open without its route %v after its hello (route %+v)", r.c.hello.Conn, within, routeOf(t, s, store.DeviceID(1)))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if f := <-first; f.err == nil {
		f.c.ws.CloseNow()
	}
}
