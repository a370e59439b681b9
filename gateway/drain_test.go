package gateway_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"stormsim/gateway"
	"stormsim/gateway/logline"
	"stormsim/gateway/protocol"
	"stormsim/gateway/store"
	"stormsim/models"
)

// slowRelease answers ReleaseRoute after delay, as a loaded database would,
// and for the devices in fail answers an error without deleting anything.
type slowRelease struct {
	*store.PG
	delay time.Duration
	fail  map[string]bool
}

func (s slowRelease) ReleaseRoute(ctx context.Context, device, conn string) error {
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return ctx.Err()
	}
	if s.fail[device] {
		return errors.New("injected release failure")
	}
	return s.PG.ReleaseRoute(ctx, device, conn)
}

// finalRelease records, for the last ReleaseGateway call, how many routes
// the gateway held in the database just before it and how many it deleted.
type finalRelease struct {
	*store.PG
	mu      sync.Mutex
	held    int64
	deleted int64
}

func (f *finalRelease) ReleaseGateway(ctx context.Context, gw string) (int64, error) {
	held, err := f.PG.RouteCount(ctx, gw)
	if err != nil {
		return 0, err
	}
	n, err := f.PG.ReleaseGateway(ctx, gw)
	f.mu.Lock()
	f.held, f.deleted = held, n
	f.mu.Unlock()
	return n, err
}

// TestDrainLeftoverCountsOnlyRoutesNobodyReleased: drain_done's
// leftover_routes is what the final release deleted, and the drain waits
// for session releases still in flight before it, so clients that all leave
// normally leave 0; a session whose release fails leaves exactly its route.
func TestDrainLeftoverCountsOnlyRoutesNobodyReleased(t *testing.T) {
	cases := []struct {
		name    string
		clients int
		failing int // clients whose route release fails: the final release deletes theirs
		delay   time.Duration
	}{
		{"all leave, releases instant", 20, 0, 0},
		{"all leave, releases slow", 20, 0, 300 * time.Millisecond},
		{"three releases fail", 20, 3, 300 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := setup(t, c.clients)
			fail := map[string]bool{}
			for i := range c.failing {
				fail[store.DeviceID(i)] = true
			}
			leases := &finalRelease{PG: leasePool(t, s)}
			deps := gateway.Deps{Handshakes: slowRelease{PG: s, delay: c.delay, fail: fail}, Leases: leases, Kicks: s}
			cfg := testConfig("gw-drain")
			p := startInproc(t, cfg, deps)
			clients := connectAll(t, p.addr, 0, c.clients, 1)
			if err := p.stop(t); err != nil {
				t.Fatalf("drain: %v", err)
			}
			for i, cl := range clients {
				if cl.isOpen() {
					t.Errorf("client %d still open after the drain", i)
				}
			}
			done := p.logs.events(logline.DrainDone)
			if len(done) != 1 {
				t.Fatalf("drain_done lines: %v, want one", done)
			}
			leases.mu.Lock()
			held, deleted := leases.held, leases.deleted
			leases.mu.Unlock()
			logged := int64(done[0].num(logline.KeyLeftoverRoutes))
			if logged != deleted || held != deleted || logged != int64(c.failing) {
				t.Errorf("leftover_routes %d, final release deleted %d of %d held; want all %d",
					logged, deleted, held, c.failing)
			}
			if f := done[0].num("forced"); f != 0 {
				t.Errorf("forced %v, want 0 (every client reads)", f)
			}
			if n, err := s.RouteCount(context.Background(), cfg.ID); err != nil || n != 0 {
				t.Errorf("%d routes left after the drain (%v)", n, err)
			}
		})
	}
}

// TestFailedReleaseIsRetried: a session whose route release fails (the
// database dropped the backend) leaves a route with no connection; the
// lease loop finds it at its next tick and deletes it, while the gateway
// keeps running.
func TestFailedReleaseIsRetried(t *testing.T) {
	const clients, failing = 16, 6
	s, _ := setup(t, clients)
	fail := map[string]bool{}
	for i := range failing {
		fail[store.DeviceID(i)] = true
	}
	cfg := testConfig("gw-orphans")
	p := startInproc(t, cfg, gateway.Deps{Handshakes: slowRelease{PG: s, fail: fail}, Leases: leasePool(t, s), Kicks: s})
	for _, c := range connectAll(t, p.addr, 0, clients, 1) {
		c.ws.CloseNow()
	}
	waitFor(t, 3*time.Second, "sessions closed", func() bool { return len(p.logs.events(logline.Closed)) == clients })
	within := 2*cfg.Period() + time.Second
	waitFor(t, within, "orphan routes released", func() bool {
		n, err := s.RouteCount(context.Background(), cfg.ID)
		return err == nil && n == 0
	})
	if got := p.g.Metrics().OrphansReleased.Load(); got != failing {
		t.Errorf("orphan routes released %d, want %d", got, failing)
	}
}

// TestDrainWaitsForClaimsInFlight: a claim that takes longer than the
// drain's grace and forced-close wait together (its device's floor row is
// locked by another transaction) but less than the store timeout still
// completes before the drain's final delete: the drain waits for it, and no
// route of the gateway outlives the drain. In both abandoned modes: the
// claim is sent before the drain starts, so nothing cancels it.
func TestDrainWaitsForClaimsInFlight(t *testing.T) {
	for _, mode := range []models.Abandoned{models.AbandonedSkip, models.AbandonedServe} {
		t.Run(string(mode), func(t *testing.T) {
			s, _ := setup(t, 1)
			ctx := context.Background()
			cfg := testConfig("gw-drain-claim")
			cfg.DrainGrace, cfg.Abandoned = 200*time.Millisecond, mode
			const claimTakes = 2500 * time.Millisecond // > grace + the 1 s forced-close wait, < the 5 s store timeout
			p := startInproc(t, cfg, depsOf(t, s))
			tx, err := s.Pool().Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO route_floor (device_id) VALUES ('u-000-d1')`); err != nil {
				tx.Rollback(ctx)
				t.Fatal(err)
			}
			committed := make(chan struct{})
			time.AfterFunc(claimTakes, func() { tx.Commit(ctx); close(committed) })
			defer func() { <-committed }()
			go dial(ctx, p.addr, "u-000-d1", 0, 1, true)
			waitFor(t, 2*time.Second, "the claim under way", func() bool { return p.g.Metrics().ClaimsInflight.Load() == 1 })
			if err := p.stop(t); err != nil {
				t.Errorf("drain: %v", err)
			}
			// Once Run returns the process exits: nothing that is still
			// running would release what it claims.
			if n := p.g.Metrics().ClaimsInflight.Load(); n != 0 {
				t.Errorf("%d claims still running after the drain", n)
			}
			waitFor(t, claimTakes+time.Second, "the claim done", func() bool {
				f, err := s.Floors(ctx, []string{"u-000-d1"})
				return err == nil && f["u-000-d1"].Attempt == 1
			})
			if n, err := s.RouteCount(ctx, cfg.ID); err != nil || n != 0 {
				t.Errorf("%d routes of the drained gateway left (%v): a claim committed after the drain's final delete", n, err)
			}
		})
	}
}

// slowReregister delays every re-registration, as a loaded database would.
type slowReregister struct {
	gateway.Handshakes
	delay time.Duration
}

func (s slowReregister) ReregisterRoute(ctx context.Context, c store.Claim) (store.ClaimResult, error) {
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return store.ClaimResult{}, ctx.Err()
	}
	return s.Handshakes.ReregisterRoute(ctx, c)
}

// TestDrainDuringReregistration: a drain that begins while the gateway
// re-registers its sessions after a lapse still tells every client goaway
// and closes it with 1001: stopping the lease loop ends the
// re-registration, it does not close the sessions it had not reached as if
// their routes were lost (4003).
func TestDrainDuringReregistration(t *testing.T) {
	const n = 24
	s, _ := setup(t, n)
	cfg := testConfig("gw-drain-rereg")
	cfg.Lease, cfg.Ping, cfg.Idle = 600*time.Millisecond, 200*time.Millisecond, 3*time.Second
	leases := &flakyLeases{Leases: leasePool(t, s)}
	p := startInproc(t, cfg, gateway.Deps{Handshakes: slowReregister{Handshakes: s, delay: 300 * time.Millisecond}, Leases: leases, Kicks: s})
	clients := connectAll(t, p.addr, 0, n, 1)
	leases.down.Store(true)
	waitFor(t, 3*time.Second, "lease lost", func() bool { return len(p.logs.events(logline.LeaseLost)) > 0 })
	leases.down.Store(false)
	waitFor(t, 3*time.Second, "lease regained", func() bool { return len(p.logs.events(logline.LeaseRegained)) > 0 })
	time.Sleep(100 * time.Millisecond) // the re-registration under way: 8 at a time, 300 ms each
	if err := p.stop(t); err != nil {
		t.Errorf("drain: %v", err)
	}
	for i, c := range clients {
		if code := c.closeCode(t, 2*time.Second); code != protocol.CloseGoingAway || !c.goaway.Load() {
			t.Errorf("client %d: closed with %v, goaway %v; want goaway then 1001", i, code, c.goaway.Load())
		}
	}
}

// finalDelete says when the drain's final delete (ReleaseGateway) has run,
// once armed: the gateway's start-up runs one too.
type finalDelete struct {
	gateway.Leases
	armed   atomic.Bool
	once    sync.Once
	deleted chan struct{}
}

func (f *finalDelete) ReleaseGateway(ctx context.Context, gw string) (int64, error) {
	n, err := f.Leases.ReleaseGateway(ctx, gw)
	if f.armed.Load() {
		f.once.Do(func() { close(f.deleted) })
	}
	return n, err
}

// lateReregister models a re-registration statement that was sent and
// that the database runs late (held in the network, a loaded server): the
// first one waits until the drain's final delete has run, or 2 s, and then
// runs whatever its caller's context says meanwhile, as a statement already
// sent does (store.PG runs it to completion once sent).
type lateReregister struct {
	gateway.Handshakes
	deleted <-chan struct{}
	once    sync.Once
	arrived chan struct{}
	wrote   chan struct{}
}

func (l *lateReregister) ReregisterRoute(ctx context.Context, c store.Claim) (store.ClaimResult, error) {
	first := false
	l.once.Do(func() { first = true; close(l.arrived) })
	if !first {
		return l.Handshakes.ReregisterRoute(ctx, c)
	}
	defer close(l.wrote)
	select {
	case <-l.deleted:
	case <-time.After(2 * time.Second):
	}
	run, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return l.Handshakes.ReregisterRoute(run, c)
}

// TestDrainWaitsForAReregistrationInFlight: a drain that begins while a
// re-registration's statement is in flight waits for it before its final
// delete, as it waits for the claims in flight: otherwise the statement
// writes the route again after that delete and the route outlives the
// gateway (held by nobody until a sweep or the id's next process).
func TestDrainWaitsForAReregistrationInFlight(t *testing.T) {
	s, _ := setup(t, 1)
	cfg := testConfig("gw-drain-rereg-late")
	cfg.Lease, cfg.Ping, cfg.Idle = 600*time.Millisecond, 200*time.Millisecond, 3*time.Second
	final := &finalDelete{Leases: leasePool(t, s), deleted: make(chan struct{})}
	leases := &flakyLeases{Leases: final}
	hs := &lateReregister{Handshakes: s, deleted: final.deleted, arrived: make(chan struct{}), wrote: make(chan struct{})}
	p := startInproc(t, cfg, gateway.Deps{Handshakes: hs, Leases: leases, Kicks: s})
	c := connectAll(t, p.addr, 0, 1, 1)[0]
	lapseUntilReregistering(t, p, leases, hs.arrived)
	final.armed.Store(true)
	if err := p.stop(t); err != nil {
		t.Errorf("drain: %v", err)
	}
	if code := c.closeCode(t, 2*time.Second); code != protocol.CloseGoingAway {
		t.Errorf("session closed with %v, want 1001", code)
	}
	select {
	case <-hs.wrote:
	case <-time.After(5 * time.Second):
		t.Fatal("the re-registration never ran")
	}
	if n, err := s.RouteCount(context.Background(), cfg.ID); err != nil || n != 0 {
		t.Errorf("%d routes of the drained gateway left (%v): a re-registration wrote after the drain's final delete", n, err)
	}
}

// failingWrites hands out connections whose writes can be made to fail,
// as a socket whose peer has stopped reading fails its write bound.
type failingWrites struct {
	net.Listener
	mu    sync.Mutex
	conns []*failingConn
}

type failingConn struct {
	net.Conn
	fail atomic.Bool
}

func (l *failingWrites) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	fc := &failingConn{Conn: c}
	l.mu.Lock()
	l.conns = append(l.conns, fc)
	l.mu.Unlock()
	return fc, nil
}

func (c *failingConn) Write(p []byte) (int, error) {
	if c.fail.Load() {
		return 0, errors.New("injected write failure")
	}
	return c.Conn.Write(p)
}

// TestFailedGoawayIsSaid: a goaway the gateway cannot write is logged with
// its error (goaway_failed) and counted in drain_done's failed_goaways, so
// drain_done's goaway plus failed_goaways is every session told, and a
// shortfall in goaway has its reason in the log.
func TestFailedGoawayIsSaid(t *testing.T) {
	const clients = 10
	s, _ := setup(t, clients)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fw := &failingWrites{Listener: ln}
	cfg := testConfig("gw-goaway")
	cfg.Ping, cfg.Idle = 0, 0 // no write of the gateway's own between the connects and the drain
	p := startInprocOn(t, cfg, depsOf(t, s), fw)
	connectAll(t, p.addr, 0, clients, 1)
	fw.mu.Lock()
	failing := 0
	for i, c := range fw.conns {
		if i%3 == 0 {
			c.fail.Store(true)
			failing++
		}
	}
	accepted := len(fw.conns)
	fw.mu.Unlock()
	if accepted != clients {
		t.Fatalf("%d connections accepted, want %d (one per client)", accepted, clients)
	}
	if err := p.stop(t); err != nil {
		t.Fatalf("drain: %v", err)
	}
	done := p.logs.events(logline.DrainDone)
	if len(done) != 1 {
		t.Fatalf("drain_done lines: %v, want one", done)
	}
	if sent, failed := done[0].num(logline.KeyGoaway), done[0].num(logline.KeyFailedGoaways); sent != float64(clients-failing) || failed != float64(failing) {
		t.Errorf("drain_done goaway %v, failed_goaways %v; want %d and %d", sent, failed, clients-failing, failing)
	}
	lines := p.logs.events(logline.GoawayFailed)
	if len(lines) != failing {
		t.Fatalf("%d goaway_failed lines, want %d", len(lines), failing)
	}
	sent := map[any]bool{}
	for _, e := range p.logs.events(logline.GoawaySent) {
		sent[e[logline.KeyDevice]] = true
	}
	for _, e := range lines {
		if msg, _ := e["err"].(string); !strings.Contains(msg, "injected write failure") {
			t.Errorf("goaway_failed %v: err does not say the write failed", e)
		}
		if sent[e[logline.KeyDevice]] {
			t.Errorf("device %v has both goaway_sent and goaway_failed", e[logline.KeyDevice])
		}
	}
	if n, err := s.RouteCount(context.Background(), cfg.ID); err != nil || n != 0 {
		t.Errorf("%d routes left after the drain (%v)", n, err)
	}
}
