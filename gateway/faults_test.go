package gateway_test

import (
	"context"
	"net/url"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"stormsim/gateway/logline"
	"stormsim/gateway/protocol"
	"stormsim/gateway/store"
	"stormsim/internal/pgtest"
	"stormsim/models"
)

// TestDatabaseOutageLongerThanLease: both gateways reach PostgreSQL through
// a proxy that is cut for three leases. Meanwhile they answer 503 (lease
// lost). Afterwards nobody sweeps anybody (each skips sweeping for one lease
// after its renew stall), every route and connection survives, both
// re-register, and admission recovers.
func TestDatabaseOutageLongerThanLease(t *testing.T) {
	s, schema := setup(t, 12)
	dbURL := pgtest.URL(t)
	u, _ := url.Parse(dbURL)
	proxy := startProxy(t, u.Host)
	pc := shortLease
	pc.dbURL = withHost(t, dbURL, proxy.addr())
	a := startProc(t, schema, "gw-a", pc)
	b := startProc(t, schema, "gw-b", pc)
	clients := append(connectAll(t, a.addr, 0, 5, 1), connectAll(t, b.addr, 5, 10, 1)...)
	// A loaded machine can make a gateway lapse on its own before the
	// outage; only what follows the outage is this test's.
	before := map[*proc]int{a: len(a.logs.events(logline.Reregistered)), b: len(b.logs.events(logline.Reregistered))}

	proxy.setCut(true)
	outage := 3 * pc.lease
	time.Sleep(pc.lease + 2*models.LeasePeriod(pc.lease, pc.ping))
	_, resp, err := dial(context.Background(), a.addr, store.DeviceID(10), 0, 1, true)
	if err == nil || status(resp) != 503 || resp.Header.Get(protocol.HeaderRetryAfter) != "1" {
		t.Errorf("handshake during outage: %d %v, want 503 with Retry-After", status(resp), err)
	}
	time.Sleep(outage - pc.lease - 2*models.LeasePeriod(pc.lease, pc.ping))
	proxy.setCut(false)

	for _, p := range []*proc{a, b} {
		waitFor(t, 5*time.Second, p.id+" re-registered", func() bool { return len(p.logs.events(logline.Reregistered)) > before[p] })
	}
	time.Sleep(pc.lease + models.LeasePeriod(pc.lease, pc.ping)) // any wrongful sweep would have happened by now
	for _, p := range []*proc{a, b} {
		if ev := p.logs.events(logline.SweepReclaimed); len(ev) != 0 {
			t.Errorf("%s swept after the outage: %v", p.id, ev)
		}
		if len(p.logs.events(logline.LeaseLost)) == 0 || len(p.logs.events(logline.LeaseRegained)) == 0 {
			t.Errorf("%s did not log lease_lost and lease_regained", p.id)
		}
		if r := p.logs.events(logline.Reregistered)[before[p]]; r.num(logline.KeyKept) != 5 {
			t.Errorf("%s reregistered %v, want kept 5", p.id, r)
		}
	}
	ctx := context.Background()
	for i, c := range clients {
		if !c.isOpen() {
			t.Errorf("client %d closed: %v", i, c.closeErr)
		}
		if o := routeOf(t, s, store.DeviceID(i)); o.Conn != c.hello.Conn {
			t.Errorf("device %d route %+v, want conn %s", i, o, c.hello.Conn)
		}
	}
	if n, _ := s.RouteCount(ctx, ""); n != 10 {
		t.Errorf("%d routes, want 10", n)
	}
	for i, p := range []*proc{a, b} {
		if _, resp, err := dial(ctx, p.addr, store.DeviceID(10+i), 0, 2, true); err != nil {
			t.Errorf("%s admission after the outage: %d %v", p.id, status(resp), err)
		}
	}
}

// TestPausedGatewayReregisters: gw-a is SIGSTOPped past its lease, gw-b
// sweeps its 4 routes, and device 0 reconnects to gw-b meanwhile. After
// SIGCONT gw-a stops admitting until it renews, then re-registers: devices
// 1-3 get their routes back with a fresh version (floor + 1) on the same
// connections, and device 0's old connection is closed with 4001 because its
// floor moved on.
func TestPausedGatewayReregisters(t *testing.T) {
	s, schema := setup(t, 4)
	pc := shortLease
	a := startProc(t, schema, "gw-a", pc)
	b := startProc(t, schema, "gw-b", pc)
	olds := connectAll(t, a.addr, 0, 4, 1)
	// A loaded machine can make gw-a lapse on its own before the pause;
	// only what follows the pause is this test's.
	rereg, lost, regained := len(a.logs.events(logline.Reregistered)), len(a.logs.events(logline.LeaseLost)), len(a.logs.events(logline.LeaseRegained))
	a.signal(t, syscall.SIGSTOP)
	waitFor(t, 5*time.Second, "gw-b sweeps gw-a", func() bool { return len(b.logs.events(logline.SweepReclaimed)) > 0 })
	moved := connectAll(t, b.addr, 0, 1, 2)[0]
	a.signal(t, syscall.SIGCONT)

	waitFor(t, 5*time.Second, "gw-a re-registered", func() bool { return len(a.logs.events(logline.Reregistered)) > rereg })
	r := a.logs.events(logline.Reregistered)[rereg]
	if r.num(logline.KeyRestored) != 3 || r.num(logline.KeyReplaced) != 1 || r.num(logline.KeyKept) != 0 || r.num(logline.KeyClosedCount) != 0 {
		t.Errorf("reregistered %v, want restored 3, replaced 1", r)
	}
	if code := olds[0].closeCode(t, 2*time.Second); code != protocol.CloseReplaced {
		t.Errorf("device 0 old connection closed with %v, want 4001", code)
	}
	for i := 1; i < 4; i++ {
		o := routeOf(t, s, store.DeviceID(i))
		if !olds[i].isOpen() || o.Conn != olds[i].hello.Conn || o.Version != 2 {
			t.Errorf("device %d: open=%v route %+v, want its conn at version 2", i, olds[i].isOpen(), o)
		}
	}
	if o := routeOf(t, s, store.DeviceID(0)); o.Conn != moved.hello.Conn {
		t.Errorf("device 0 route %+v, want gw-b's %s", o, moved.hello.Conn)
	}
	if len(a.logs.events(logline.LeaseLost)) != lost+1 || len(a.logs.events(logline.LeaseRegained)) != regained+1 {
		t.Errorf("want one lease_lost and one lease_regained after the pause")
	}
}

// TestListenConnectionKilledMidStorm: while 150 devices storm gw-a, its
// LISTEN backend is terminated again and again for two lease periods, and
// meanwhile 20 devices already on gw-a reconnect to gw-b. The kicks sent
// while gw-a is not listening are lost, yet every replaced connection is
// closed with 4001 within one lease period (plus slack) of its replacement:
// gw-a reconciles after each re-LISTEN, and its lease loop reconciles while
// the LISTEN connection is down. Only this test's gw-a is touched: a decoy
// gateway with the same id in another schema (as another test or lab on
// the same server would run) keeps its LISTEN connection.
func TestListenConnectionKilledMidStorm(t *testing.T) {
	const moved, storm = 20, 150
	s, schema := setup(t, moved+storm)
	pc := shortLease
	period := models.LeasePeriod(pc.lease, pc.ping)
	decoy := startProc(t, pgtest.Schema(t), "gw-a", pc)
	a := startProc(t, schema, "gw-a", pc)
	b := startProc(t, schema, "gw-b", pc)
	olds := connectAll(t, a.addr, 0, moved, 1)
	ctx := context.Background()

	var wg sync.WaitGroup
	for i := moved; i < moved+storm; i++ {
		wg.Go(func() {
			if _, resp, err := dial(ctx, a.addr, store.DeviceID(i), 0, 1, true); err != nil {
				t.Errorf("storm device %d: %d %v", i, status(resp), err)
			}
		})
	}
	killUntil := time.Now().Add(2 * period)
	killed := make(chan int)
	go func() {
		n := 0
		for time.Now().Before(killUntil) {
			var k int
			s.Pool().QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE `+ownListen,
				"gateway-gw-a-listen", listenQuery(schema)).Scan(&k)
			n += k
			time.Sleep(5 * time.Millisecond)
		}
		killed <- n
	}()
	var rw sync.WaitGroup
	for i := range moved {
		rw.Go(func() {
			if _, resp, err := dial(ctx, b.addr, store.DeviceID(i), 0, 2, true); err != nil {
				t.Errorf("device %d to gw-b: %d %v", i, status(resp), err)
			}
		})
	}
	rw.Wait()
	wg.Wait()
	kills := <-killed
	for i, c := range olds {
		if code := c.closeCode(t, 3*time.Second); code != protocol.CloseReplaced {
			t.Errorf("device %d: closed with %v, want 4001", i, code)
		}
	}
	// Gateway-side timeline (the test process is the noisiest party): gw-b's
	// "admitted" line (written after the claim committed) to gw-a's "kicked".
	admittedAt := map[any]time.Time{}
	for _, e := range b.logs.events(logline.Admitted) {
		admittedAt[e[logline.KeyDevice]] = e.time()
	}
	worst := time.Duration(0)
	sources := map[any]int{}
	for _, k := range a.logs.events(logline.Kicked) {
		sources[k[logline.KeySource]]++
		worst = max(worst, k.time().Sub(admittedAt[k[logline.KeyDevice]]))
	}
	t.Logf("LISTEN backend killed %d times; slowest kick after its replacement's admission: %v (period %v); kicks by path: %v",
		kills, worst, period, sources)
	if n := len(a.logs.events(logline.Kicked)); n != moved {
		t.Errorf("gw-a kicked %d connections, want %d", n, moved)
	}
	if sources["notify"] == moved {
		t.Errorf("every kick arrived by notification: the LISTEN outage was not exercised")
	}
	if worst > period+reclaimSlack {
		t.Errorf("a replaced connection was kicked %v after its replacement, want <= %v + %v", worst, period, reclaimSlack)
	}
	waitFor(t, 3*time.Second, "LISTEN back", func() bool {
		var n int
		s.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE `+ownListen,
			"gateway-gw-a-listen", listenQuery(schema)).Scan(&n)
		return n == 1
	})
	if len(a.logs.events(logline.ListenReconnected)) == 0 {
		t.Errorf("no listen_reconnected line")
	}
	if lost := decoy.logs.events(logline.ListenLost); len(lost) != 0 {
		t.Errorf("the decoy gw-a in another schema lost its LISTEN connection: %v", lost)
	}
}

// ownListen selects, in pg_stat_activity, the LISTEN backend of one gateway
// in one schema: application names repeat across schemas (every test has its
// gw-a), but the last statement of a LISTEN connection names its schema's
// channel.
const ownListen = `application_name = $1 AND query = $2`

// listenQuery is the statement a gateway's LISTEN connection ran in schema.
func listenQuery(schema string) string {
	return "LISTEN " + pgx.Identifier{store.KickChannel + "_" + schema}.Sanitize()
}

// TestLateRenewalCountsAsALapse: gw-a reaches PostgreSQL through a proxy,
// gw-b directly, and gw-a holds 60 sessions. The proxy cuts gw-a's database
// for 300 ms less than a lease, then adds 110 ms to every chunk: the first
// renewal after the cut is sent before the lease lapses on gw-a's clock but
// runs in the database after it lapsed there, while gw-b sweeps gw-a's
// routes, and succeeds. A renewal that completes a lease or more after the
// previous one was sent must count as a lapse: gw-a logs lease_lost and
// re-registers, so every session it keeps open has its route again within
// a lease and two periods of the delay's end, and a device that then claims
// on gw-b closes its gw-a session with 4001. (The trigger is repeated, at
// most three times, until gw-b's sweep lands inside the window.)
func TestLateRenewalCountsAsALapse(t *testing.T) {
	const n, moved = 60, 10
	s, schema := setup(t, n)
	dbURL := pgtest.URL(t)
	u, _ := url.Parse(dbURL)
	proxy := startProxy(t, u.Host)
	pc := procConfig{lease: 2 * time.Second, ping: 100 * time.Millisecond, idle: 3 * time.Second}
	period := models.LeasePeriod(pc.lease, pc.ping)
	viaProxy := pc
	viaProxy.dbURL = withHost(t, dbURL, proxy.addr())
	a := startProc(t, schema, "gw-a", viaProxy)
	b := startProc(t, schema, "gw-b", pc)
	olds := connectAll(t, a.addr, 0, n, 1)
	ctx := context.Background()

	swept := false
	for round := 1; round <= 3 && !swept; round++ {
		before := len(b.logs.events(logline.SweepReclaimed))
		time.Sleep(3 * period) // renewals back on their rhythm
		proxy.setCut(true)
		time.Sleep(pc.lease - 300*time.Millisecond)
		proxy.setDelay(110 * time.Millisecond)
		time.Sleep(3 * time.Second)
		proxy.setDelay(0)
		for _, e := range b.logs.events(logline.SweepReclaimed)[before:] {
			swept = swept || (e[logline.KeyDeadGateway] == "gw-a" && e.num(logline.KeyCount) > 0)
		}
		t.Logf("round %d: gw-b swept gw-a: %v; gw-a's sweep_paused lines %v", round, swept, a.logs.events(logline.SweepPaused))
	}
	if !swept {
		t.Fatalf("gw-b never swept gw-a's routes: the trigger missed the window three times")
	}
	ended := time.Now()
	within := pc.lease + 2*period + reclaimSlack
	routed := func() (open, routeless int) {
		for i, c := range olds {
			if !c.isOpen() {
				continue
			}
			open++
			if o := routeOf(t, s, store.DeviceID(i)); o.Conn != c.hello.Conn {
				routeless++
			}
		}
		return open, routeless
	}
	for {
		open, routeless := routed()
		if routeless == 0 {
			t.Logf("every open gw-a session (%d of %d) routed %v after the delay ended", open, n, time.Since(ended).Round(time.Millisecond))
			break
		}
		if time.Since(ended) > within {
			t.Fatalf("%d of %d open gw-a sessions still have no route %v after the delay ended (bound %v); gw-a logged lease_lost %d times",
				routeless, open, time.Since(ended).Round(time.Millisecond), within, len(a.logs.events(logline.LeaseLost)))
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The pass logs reregistered once its last route is back, and the line
	// reaches the test through gw-a's stderr: on a loaded machine it may
	// come a little after the routes.
	waitFor(t, 5*time.Second, "gw-a's lease_lost and reregistered lines", func() bool {
		return len(a.logs.events(logline.LeaseLost)) > 0 && len(a.logs.events(logline.Reregistered)) > 0
	})

	for i := range moved {
		if !olds[i].isOpen() {
			continue
		}
		if _, resp, err := dial(ctx, b.addr, store.DeviceID(i), 0, 2, true); err != nil {
			t.Fatalf("device %d on gw-b: %d %v", i, status(resp), err)
		}
		if code := olds[i].closeCode(t, period+2*time.Second); code != protocol.CloseReplaced {
			t.Errorf("device %d: gw-a session closed with %v, want 4001", i, code)
		}
	}
}
