package gateway_test

import (
	"context"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"stormsim/gateway/logline"
	"stormsim/gateway/protocol"
	"stormsim/gateway/store"
	"stormsim/models"
)

// reclaimSlack covers what the analytic window leaves out: ticker jitter of
// two processes, a few queries, and log timestamps on a loaded 2-core box.
const reclaimSlack = 150 * time.Millisecond

// TestSIGKILLRoutesReclaimedWithinLeaseBound is V3: gw-a holds 20 routes and
// is SIGKILLed; gw-b's sweep deletes them within
// models.ReclaimBound(lease, period, period) = [lease - period, lease +
// period] after the kill, plus reclaimSlack.
func TestSIGKILLRoutesReclaimedWithinLeaseBound(t *testing.T) {
	s, schema := setup(t, 20)
	pc := shortLease
	a := startProc(t, schema, "gw-a", pc)
	b := startProc(t, schema, "gw-b", pc)
	connectAll(t, a.addr, 0, 20, 1)
	ctx := context.Background()
	if n, _ := s.RouteCount(ctx, "gw-a"); n != 20 {
		t.Fatalf("gw-a holds %d routes, want 20", n)
	}
	time.Sleep(3 * pc.ping) // a steady renew rhythm before the kill
	killed := time.Now()
	a.signal(t, syscall.SIGKILL)
	waitFor(t, 5*time.Second, "gw-b sweeps gw-a", func() bool { return len(b.logs.events(logline.SweepReclaimed)) > 0 })
	e := b.logs.events(logline.SweepReclaimed)[0]
	took := e.time().Sub(killed)
	period := models.LeasePeriod(pc.lease, pc.ping)
	lo, hi := models.ReclaimBound(pc.lease, period, period)
	t.Logf("kill to reclaim: %v (window [%v, %v] + %v slack)", took, lo, hi, reclaimSlack)
	if e[logline.KeyDeadGateway] != "gw-a" || e.num(logline.KeyCount) != 20 {
		t.Errorf("sweep line %v, want gw-a count 20", e)
	}
	if took < lo-reclaimSlack || took > hi+reclaimSlack {
		t.Errorf("reclaimed %v after the kill, outside [%v, %v] ± %v", took, lo, hi, reclaimSlack)
	}
	if n, _ := s.RouteCount(ctx, "gw-a"); n != 0 {
		t.Errorf("gw-a still holds %d routes", n)
	}
	if got := b.metric(t, "gateway_routes_reclaimed_total"); got != 20 {
		t.Errorf("gw-b routes_reclaimed metric %v, want 20", got)
	}
}

// TestSIGTERMDrain is V6: after SIGTERM every client gets goaway then 1001,
// new handshakes get 503 + Retry-After while the drain lasts (a client that
// never reads keeps it busy for the close timeout), the lease is set to now,
// and the process exits 0 owning no routes.
func TestSIGTERMDrain(t *testing.T) {
	const n = 20
	s, schema := setup(t, n+50)
	g := startProc(t, schema, "gw-drain", shortLease)
	clients := connectAll(t, g.addr, 0, n, 1)
	if _, _, err := dial(context.Background(), g.addr, store.DeviceID(n), 0, 1, false); err != nil {
		t.Fatal(err) // the mute client
	}
	sent := time.Now()
	g.signal(t, syscall.SIGTERM)

	var mu sync.Mutex
	probes := map[int]int{}
	var late []*client
	for i := n + 1; i < n+50; i++ {
		c, resp, err := dial(context.Background(), g.addr, store.DeviceID(i), 0, 1, true)
		if err == nil {
			late = append(late, c) // admitted just before the drain began: must be drained too
			continue
		}
		if resp == nil {
			break // listener closed: the drain is over
		}
		mu.Lock()
		probes[resp.StatusCode]++
		mu.Unlock()
		if resp.StatusCode == 503 && resp.Header.Get(protocol.HeaderRetryAfter) != "1" {
			t.Errorf("503 without Retry-After: 1")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code := g.wait(t, 10*time.Second); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	t.Logf("SIGTERM to exit: %v; probe statuses during drain: %v", time.Since(sent), probes)
	if probes[503] == 0 || len(probes) != 1 {
		t.Errorf("probe statuses %v, want only 503s (at least one)", probes)
	}
	for i, c := range append(clients, late...) {
		if code := c.closeCode(t, time.Second); code != protocol.CloseGoingAway || !c.goaway.Load() {
			t.Errorf("client %d: close %v, goaway %v; want goaway then 1001", i, code, c.goaway.Load())
		}
	}
	ctx := context.Background()
	if left, _ := s.RouteCount(ctx, "gw-drain"); left != 0 {
		t.Errorf("%d routes left after drain", left)
	}
	var expired bool
	if err := s.Pool().QueryRow(ctx, `SELECT lease_until <= clock_timestamp() FROM gateways WHERE gateway_id = 'gw-drain'`).Scan(&expired); err != nil || !expired {
		t.Errorf("lease not expired after drain: %v %v", expired, err)
	}
	order := []string{logline.DrainStart, logline.DrainDone, logline.Exit}
	var prev time.Time
	for _, msg := range order {
		ev := g.logs.events(msg)
		if len(ev) != 1 || ev[0].time().Before(prev) {
			t.Fatalf("log %s: %v (want once, after the previous step)", msg, ev)
		}
		prev = ev[0].time()
	}
	if done := g.logs.events(logline.DrainDone)[0]; done.num(logline.KeyGoaway) != float64(n+1+len(late)) || done.num(logline.KeyLeftoverRoutes) != 0 {
		t.Errorf("drain_done %v, want goaway = %d and leftover_routes = 0 (every session released its own)", done, n+1+len(late))
	}
}

// TestReplacedAcrossGateways: a device that reconnects to gw-b with a newer
// attempt makes gw-a close the old connection with 4001 (via im_kick).
func TestReplacedAcrossGateways(t *testing.T) {
	s, schema := setup(t, 3)
	a := startProc(t, schema, "gw-a", shortLease)
	b := startProc(t, schema, "gw-b", shortLease)
	olds := connectAll(t, a.addr, 0, 3, 1)
	news := connectAll(t, b.addr, 0, 3, 2)
	for i, c := range olds {
		if code := c.closeCode(t, 2*time.Second); code != protocol.CloseReplaced {
			t.Errorf("device %d: old connection closed with %v, want 4001", i, code)
		}
		if o := routeOf(t, s, store.DeviceID(i)); o.Gateway != "gw-b" || o.Conn != news[i].hello.Conn || o.Version != 2 {
			t.Errorf("device %d: route %+v, want gw-b %s v2", i, o, news[i].hello.Conn)
		}
		if !news[i].isOpen() {
			t.Errorf("device %d: new connection closed", i)
		}
	}
	for _, k := range a.logs.events(logline.Kicked) {
		if k[logline.KeySource] != "notify" {
			t.Errorf("kick via %v, want notify", k[logline.KeySource])
		}
	}
	if got := b.metric(t, "gateway_kicks_sent_total"); got != 3 {
		t.Errorf("gw-b kicks sent %v, want 3", got)
	}
	waitFor(t, 2*time.Second, "gw-a counts 3 kicks", func() bool { return a.metric(t, "gateway_kicks_received_total") == 3 })
}

// TestSecondGatewayWithTheSameIDIsRefused: a second process started with a
// live gateway's id exits 1 with a clear error once the first has kept
// renewing for a whole lease, and the first keeps its routes and clients.
func TestSecondGatewayWithTheSameIDIsRefused(t *testing.T) {
	const n = 5
	s, schema := setup(t, n)
	pc := shortLease
	first := startProc(t, schema, "gw-dup", pc)
	clients := connectAll(t, first.addr, 0, n, 1)
	second := launchProc(t, schema, "gw-dup", pc)
	period := models.LeasePeriod(pc.lease, pc.ping)
	code := second.wait(t, pc.lease+3*period+5*time.Second)
	second.logs.mu.Lock()
	out := second.logs.buf.String()
	second.logs.mu.Unlock()
	if code != 1 || !strings.Contains(out, "in use by a live gateway") {
		t.Errorf("second gateway exited %d, want 1 naming the id in use; its log:\n%s", code, out)
	}
	if n2, _ := s.RouteCount(context.Background(), "gw-dup"); n2 != n {
		t.Errorf("first gateway holds %d routes after the second's attempt, want %d", n2, n)
	}
	for i, c := range clients {
		if !c.isOpen() {
			t.Errorf("client %d closed: %v", i, c.closeErr)
		}
	}
}
