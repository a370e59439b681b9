package gateway_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	devclient "stormsim/gateway/client"
	"stormsim/gateway/protocol"
	"stormsim/gateway/store"
	"stormsim/internal/pgtest"
	"stormsim/policies"
)

// The soak's size. The test suite runs the short default; the long soak is
//
//	go test ./gateway -run '^TestSoak$' -soak.clients 5000 -soak.duration 5m -timeout 30m -v
var (
	soakClients  = flag.Int("soak.clients", 300, "TestSoak: clients held through the churn")
	soakDuration = flag.Duration("soak.duration", 10*time.Second, "TestSoak: how long the churn lasts")
	soakSeed     = flag.Uint64("soak.seed", 1, "TestSoak: seed of the churn schedule and the clients' draws")
)

const (
	soakConv     = "soak"
	soakFlooders = 5 // extra devices that flood syncs
)

// soakState is what the test knows of one client, from its events.
type soakState struct {
	connected bool
	conn, gw  string
	stopped   bool
	err       error
}

// soakFleet is the clients and their states.
type soakFleet struct {
	mu     sync.Mutex
	states []soakState
}

func (f *soakFleet) observe(ev devclient.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := &f.states[ev.Client]
	switch ev.Kind {
	case devclient.EventConnected:
		st.connected, st.conn, st.gw = true, ev.Hello.Conn, ev.Hello.Gateway
	case devclient.EventClosed:
		st.connected = false
	case devclient.EventStopped:
		st.connected, st.stopped, st.err = false, true, ev.Err
	}
}

// settled counts clients that are connected or stopped.
func (f *soakFleet) settled() (connected, stopped int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, st := range f.states {
		switch {
		case st.connected:
			connected++
		case st.stopped:
			stopped++
		}
	}
	return connected, stopped
}

// soakGateway is one gateway slot: a fixed address and id, restarted in place.
type soakGateway struct {
	id, addr string
	p        *proc
}

// freeAddr returns a loopback address with a port free right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// processFigures are a gateway process's self-reported resources.
type processFigures struct {
	conns, goroutines, rss float64
}

func (p *proc) figures(t testing.TB) processFigures {
	return processFigures{p.metric(t, "gateway_connections"), p.metric(t, "go_goroutines"), p.metric(t, "process_resident_memory_bytes")}
}

// soakTotals adds up the gateways' figures.
func soakTotals(t testing.TB, gws []*soakGateway) processFigures {
	var sum processFigures
	for _, g := range gws {
		f := g.p.figures(t)
		sum.conns, sum.goroutines, sum.rss = sum.conns+f.conns, sum.goroutines+f.goroutines, sum.rss+f.rss
	}
	return sum
}

// TestSoak holds clients (the project's client, full-jitter backoff) on
// three gateway processes behind a database proxy while a seeded schedule
// churns: SIGKILL and restart, SIGTERM drain and restart, database cuts
// shorter and longer than the lease, and sync floods. Afterwards every
// client is connected (or stopped with a reason), every route belongs to a
// live connection and every device is connected once, and the gateways'
// goroutines and memory are back near their baseline.
func TestSoak(t *testing.T) {
	n := *soakClients
	s, schema := setup(t, n+soakFlooders)
	ctx := context.Background()
	devices := make([]string, n+soakFlooders)
	for i := range devices {
		devices[i] = store.DeviceID(i)
	}
	if _, err := s.AppendEvents(ctx, soakConv, []string{"hello", "world"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Join(ctx, soakConv, devices); err != nil {
		t.Fatal(err)
	}
	dbURL := pgtest.URL(t)
	u, _ := url.Parse(dbURL)
	proxy := startProxy(t, u.Host)
	pc := procConfig{lease: 1500 * time.Millisecond, ping: 500 * time.Millisecond, idle: 3 * time.Second,
		dbURL: withHost(t, dbURL, proxy.addr())}
	gws := make([]*soakGateway, 3)
	for i := range gws {
		gws[i] = &soakGateway{id: "gw-soak-" + string(rune('a'+i)), addr: freeAddr(t)}
	}
	start := func(g *soakGateway) {
		c := pc
		c.extra = []string{"--listen", g.addr, "--db-conns", "8"}
		g.p = startProc(t, schema, g.id, c)
	}
	for _, g := range gws {
		start(g)
	}
	idle := gws[0].p.figures(t)

	backoff, err := policies.New(policies.Spec{Kind: "full", Base: 100 * time.Millisecond, Cap: 2 * time.Second, HonorRetryAfter: true})
	if err != nil {
		t.Fatal(err)
	}
	urls := make([]string, len(gws))
	for i, g := range gws {
		urls[i] = "ws://" + g.addr
	}
	fleet := &soakFleet{states: make([]soakState, n)}
	runCtx, stopClients := context.WithCancel(ctx)
	var running sync.WaitGroup
	for i := range n {
		c, err := devclient.New(devclient.Config{
			Device: devclient.Device{ID: devices[i], Token: store.DeviceToken(devices[i])}, Index: i, Seed: *soakSeed,
			Gateways: urls, Conversations: []string{soakConv},
			Drop:     devclient.Reconnect{Backoff: backoff, InitialJitter: 500 * time.Millisecond},
			Observer: fleet.observe, PingEvery: time.Second, PingTimeout: 2 * time.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		running.Go(func() { c.Run(runCtx) })
	}
	defer func() { stopClients(); running.Wait() }()
	settle := func(what string, within time.Duration) {
		t.Helper()
		waitFor(t, within, what, func() bool { c, st := fleet.settled(); return c+st == n })
	}
	settle("every client connected", 60*time.Second+time.Duration(n)*5*time.Millisecond)
	base := soakTotals(t, gws)

	// The churn: one action every 0.5-2 s, drawn from the seed.
	rng := rand.New(rand.NewPCG(*soakSeed, 0x50a6))
	actions := map[string]int{}
	floodStop := make(chan struct{})
	var flooders sync.WaitGroup
	deadline := time.Now().Add(*soakDuration)
	for time.Now().Before(deadline) {
		g := gws[1+rng.IntN(2)] // gw-a stays up throughout
		switch k := rng.IntN(10); {
		case k < 3:
			actions["kill"]++
			g.p.signal(t, syscall.SIGKILL)
			g.p.wait(t, 5*time.Second)
			start(g)
		case k < 5:
			actions["drain"]++
			g.p.signal(t, syscall.SIGTERM)
			if code := g.p.wait(t, 15*time.Second); code != 0 {
				t.Errorf("%s drain exited %d", g.id, code)
			}
			start(g)
		case k < 7:
			actions["db cut, short"]++
			proxy.setCut(true)
			time.Sleep(pc.lease / 3)
			proxy.setCut(false)
		case k < 8:
			actions["db cut, past the lease"]++
			proxy.setCut(true)
			time.Sleep(pc.lease + pc.lease/2)
			proxy.setCut(false)
		default:
			actions["sync flood"]++
			i, addr := n+rng.IntN(soakFlooders), gws[rng.IntN(3)].addr
			flooders.Go(func() { floodSyncs(addr, devices[i], floodStop) })
		}
		time.Sleep(500*time.Millisecond + time.Duration(rng.IntN(1500))*time.Millisecond)
	}
	close(floodStop)
	flooders.Wait()
	t.Logf("churn over %v: %v", *soakDuration, actions)

	settle("every client back", 60*time.Second+time.Duration(n)*5*time.Millisecond)
	// Wait for routes to settle too: a drained gateway's sweep or an orphan
	// release may trail the last reconnect by a lease.
	var final processFigures
	waitFor(t, 3*pc.lease+5*time.Second, "routes and sessions match the clients", func() bool {
		final = soakTotals(t, gws)
		routes, err := s.RouteCount(ctx, "")
		return err == nil && int(routes) == n && int(final.conns) == n
	})
	fleet.mu.Lock()
	states := append([]soakState(nil), fleet.states...)
	fleet.mu.Unlock()
	stops := map[string]int{}
	for i, st := range states {
		if st.stopped {
			stops[fmt.Sprint(st.err)]++
			if st.err == nil {
				t.Errorf("client %d stopped without a reason", i)
			}
			continue
		}
		o := routeOf(t, s, devices[i])
		if o.Conn != st.conn || o.Gateway != st.gw {
			t.Errorf("client %d holds %s on %s, its route is %+v", i, st.conn, st.gw, o)
		}
	}
	if len(stops) > 0 {
		t.Errorf("clients stopped: %v", stops)
	}
	// Two goroutines per session (its own and its reader) plus each
	// process's fixed ones: anything more that stays is a leak. On a loaded
	// machine the churn's last connections and renewals take a while to
	// wind down, so the count has 10 s to come within its budget.
	extra := func(f processFigures) float64 { return f.goroutines - 2*f.conns - 3*idle.goroutines }
	for settled := time.Now().Add(10 * time.Second); extra(final) > 30 && time.Now().Before(settled); {
		time.Sleep(200 * time.Millisecond)
		final = soakTotals(t, gws)
	}
	t.Logf("gateways: %d connections, %.0f goroutines, %.0f MB RSS before the churn; %d, %.0f, %.0f MB after",
		int(base.conns), base.goroutines, base.rss/(1<<20), int(final.conns), final.goroutines, final.rss/(1<<20))
	if e := extra(final); e > 30 {
		t.Errorf("%.0f goroutines beyond 2 per session and 3 idle processes' %.0f, 10 s after the routes settled", e, 3*idle.goroutines)
	}
	if final.rss > 1.5*base.rss+30<<20 {
		t.Errorf("gateways' RSS %.0f MB after the churn, %.0f MB before", final.rss/(1<<20), base.rss/(1<<20))
	}

	stopClients()
	running.Wait()
	// Sessions end, then release their routes: give the releases time.
	var after processFigures
	settled := time.Now().Add(15 * time.Second)
	for time.Now().Before(settled) {
		if after = gws[0].p.figures(t); after.conns == 0 && after.goroutines <= idle.goroutines+10 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("%s idle: %.0f goroutines, %.0f MB before any client; %.0f, %.0f MB after the soak", gws[0].id,
		idle.goroutines, idle.rss/(1<<20), after.goroutines, after.rss/(1<<20))
	if after.goroutines > idle.goroutines+10 {
		t.Errorf("%s has %.0f goroutines 15 s after its last client left, %.0f before the soak", gws[0].id, after.goroutines, idle.goroutines)
	}
}

// floodSyncs syncs the soak conversation as fast as the gateway answers,
// from its own connection, until stop; connection failures end it.
func floodSyncs(addr, device string, stop <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-stop; cancel() }()
	c, _, err := dial(ctx, addr, device, 0, floodAttempts.Add(1), false)
	if err != nil {
		return
	}
	defer c.ws.CloseNow()
	req, _ := json.Marshal(protocol.Sync{T: protocol.TypeSync, Conv: soakConv, After: 0})
	for ctx.Err() == nil {
		if c.ws.Write(ctx, websocket.MessageText, req) != nil {
			return
		}
		if _, _, err := c.ws.Read(ctx); err != nil {
			return
		}
	}
}

// floodAttempts numbers the flooders' handshakes, so each is newer than the
// last of its device.
var floodAttempts atomic.Int64
