package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"stormsim/gateway"
	devclient "stormsim/gateway/client"
	"stormsim/gateway/protocol"
	"stormsim/gateway/store"
	"stormsim/models"
	"stormsim/policies"
)

// Bounds of the paced drain tests, generous for a busy 2-core machine
// running them under -race: a goaway may reach its client this late after
// its pace's time, and a drain may end this long after its budget.
const (
	goawayLateness = 2500 * time.Millisecond
	exitSlack      = 5 * time.Second
)

// drainBudget is how long a drain of cfg may take: its grace, the time a
// paced drain gives the connections it told last, and the wait for the
// force-closed ones.
func drainBudget(cfg gateway.Config) time.Duration {
	return cfg.DrainGrace + 2*time.Second + time.Second
}

// goawayOf returns the goaway frame client c received, if any.
func goawayOf(t *testing.T, c *client) (protocol.Goaway, bool) {
	t.Helper()
	for {
		select {
		case f := <-c.frames:
			var g protocol.Goaway
			if json.Unmarshal(f, &g) == nil && g.T == protocol.TypeGoaway {
				return g, true
			}
		default:
			return protocol.Goaway{}, false
		}
	}
}

// TestPacedDrainHoldsV6: for every pace, the seed's drain invariant: once
// draining the gateway admits nobody (503), every connection gets its
// goaway and then 1001, never before its pace's time (connections in the
// order they were admitted) and not much after it, a goaway the pace would
// send after the grace goes at the grace, and the gateway exits owning no
// route, within its drain budget.
func TestPacedDrainHoldsV6(t *testing.T) {
	const n = 30
	sec, ms := time.Second, time.Millisecond
	cases := []struct {
		name  string
		pace  string
		grace time.Duration
		cut   int // goaways sent at the grace
	}{
		{"all at once", "all", 2 * sec, 0},
		{"batches of 10 every 400ms", "batches:size=10,interval=400ms", 3 * sec, 0},
		{"spread over 1.5s", "spread:over=1500ms", 3 * sec, 0},
		{"spread at most 30ms apart", "spread:max_gap=30ms", 3 * sec, 0},
		{"lame duck: 500ms of grace, then over 1s", "lame_duck:grace=500ms,over=1s", 3 * sec, 0},
		{"the phoenix preset, batches of 10 every 300ms", "phoenix:size=10,interval=300ms", 3 * sec, 0},
		// Over 6 s, one every 200 ms: connections 6-29 (due at 1.2 s and
		// later) are past the 1.1 s grace and go at it.
		{"a pace cut at the grace", "spread:over=6s", 1100 * ms, 24},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pace, err := models.ParseDrainPace(c.pace)
			if err != nil {
				t.Fatal(err)
			}
			s, _ := setup(t, n+1)
			cfg := testConfig("gw-paced")
			cfg.DrainPace, cfg.DrainGrace = pace, c.grace
			p := startInproc(t, cfg, depsOf(t, s))
			clients := connectAll(t, p.addr, 0, n, 1)
			stopped := time.Now()
			go p.cancel()
			waitFor(t, 5*time.Second, "drain_start", func() bool { return len(p.logs.events("drain_start")) > 0 })
			began := p.logs.events("drain_start")[0].time()
			if pace.Span(n) > 300*ms {
				// Still telling its connections: admitting has stopped.
				_, resp, err := dial(context.Background(), p.addr, store.DeviceID(n), 0, 1, true)
				if err == nil || status(resp) != protocol.StatusServiceUnavailable {
					t.Errorf("a handshake during the drain got %d (%v), want 503", status(resp), err)
				}
			}
			if err := p.stop(t); err != nil {
				t.Fatalf("drain: %v", err)
			}
			if took, budget := time.Since(stopped), drainBudget(cfg)+exitSlack; took > budget {
				t.Errorf("the drain took %v, over its budget %v", took.Round(ms), budget)
			}
			for i, cl := range clients {
				code := cl.closeCode(t, 5*time.Second)
				g, ok := goawayOf(t, cl)
				if !ok || code != protocol.CloseGoingAway || g.ReconnectAfterMs != nil {
					t.Errorf("client %d: goaway %v (%+v), close %d; want a goaway without a hint, then 1001", i, ok, g, code)
					continue
				}
				due := min(pace.GoawayAt(i, n), c.grace)
				if at := cl.closedAt.Sub(began); at < due-5*ms || at > due+goawayLateness {
					t.Errorf("client %d left %v after the drain began, want from its pace's %v to %v later", i, at.Round(ms), due, goawayLateness)
				}
			}
			done := p.logs.events("drain_done")
			if len(done) != 1 || done[0].num("goaway") != n || done[0].num("leftover_routes") != 0 || int(done[0].num("cut_goaways")) != c.cut {
				t.Errorf("drain_done %v: want %d goaways, no leftover route, %d cut", done, n, c.cut)
			}
			if left, err := s.RouteCount(context.Background(), cfg.ID); err != nil || left != 0 {
				t.Errorf("%d routes left after the drain (%v)", left, err)
			}
		})
	}
}

// TestDrainHintsOnTheWire: each goaway carries its hint in whole
// milliseconds. A reserved hint of 40 slots/s with a burst of 4, all
// told at once: connection k (in admission order) waits for slot k,
// ceil((k+1-4)/40 s), less the time its goaway left after the drain's
// start, so hint + that time is never before the slot, and within the
// sending's lateness of it.
func TestDrainHintsOnTheWire(t *testing.T) {
	const n = 12
	s, _ := setup(t, n)
	cfg := testConfig("gw-hints")
	hint := models.ReconnectHintSpec{Kind: models.HintReserved, Rate: 40, Burst: 4}
	cfg.ReconnectHint = hint
	p := startInproc(t, cfg, depsOf(t, s))
	clients := connectAll(t, p.addr, 0, n, 1)
	if err := p.stop(t); err != nil {
		t.Fatal(err)
	}
	began := p.logs.events("drain_start")[0].time()
	for k, cl := range clients {
		cl.closeCode(t, 5*time.Second)
		g, ok := goawayOf(t, cl)
		if !ok || g.ReconnectAfterMs == nil {
			t.Fatalf("client %d: goaway %v %+v, want one with reconnect_after_ms", k, ok, g)
		}
		slot := hint.ReservedSlot(k)
		arrives := cl.closedAt.Sub(began) + time.Duration(*g.ReconnectAfterMs)*time.Millisecond
		if arrives < slot-5*time.Millisecond || arrives > slot+goawayLateness {
			t.Errorf("client %d: hint %d ms, told %v after the start: back at %v, its slot %v", k, *g.ReconnectAfterMs, cl.closedAt.Sub(began), arrives, slot)
		}
	}
}

// TestClientHonoursReconnectHint: the project's client, drained from one
// real gateway with a fixed hint of 800 ms, waits that long from its
// goaway (instead of its initial jitter of 5 s) before its first attempt,
// at the other gateway.
func TestClientHonoursReconnectHint(t *testing.T) {
	s, _ := setup(t, 1)
	a, b := testConfig("gw-hint-a"), testConfig("gw-hint-b")
	a.ReconnectHint = models.ReconnectHintSpec{Kind: models.HintFixed, Delay: 800 * time.Millisecond}
	pa, pb := startInproc(t, a, depsOf(t, s)), startInproc(t, b, depsOf(t, s))
	backoff, err := policies.New(policies.Spec{Kind: policies.KindFixed, Base: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan devclient.Event, 64)
	id := store.DeviceID(0)
	c, err := devclient.New(devclient.Config{Device: devclient.Device{ID: id, Token: store.DeviceToken(id)},
		Gateways: []string{"ws://" + pa.addr, "ws://" + pb.addr}, Drop: devclient.Reconnect{Backoff: backoff},
		Drain:    devclient.Reconnect{Backoff: backoff, InitialJitter: 5 * time.Second},
		Observer: func(ev devclient.Event) { events <- ev }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- c.Run(ctx) }()
	next := func(kind devclient.EventKind) devclient.Event {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case ev := <-events:
				if ev.Kind == kind {
					return ev
				}
			case <-deadline:
				t.Fatalf("no %s event", kind)
			}
		}
	}
	if ev := next(devclient.EventSynced); ev.Gateway != "ws://"+pa.addr {
		t.Fatalf("connected to %s first, want gateway a", ev.Gateway)
	}
	go pa.stop(t)
	goaway := next(devclient.EventGoaway)
	if goaway.Hint == nil || *goaway.Hint != 800*time.Millisecond {
		t.Fatalf("goaway hint %v, want 800ms", goaway.Hint)
	}
	if round := next(devclient.EventRound); round.RoundKind != devclient.RoundDrain || round.Wait != 800*time.Millisecond {
		t.Errorf("round %s waiting %v, want a drain round waiting the hint", round.RoundKind, round.Wait)
	}
	attempt := next(devclient.EventAttempt)
	if waited := attempt.Sent.Sub(goaway.Time); waited < 800*time.Millisecond || waited > 800*time.Millisecond+goawayLateness {
		t.Errorf("first attempt %v after the goaway, want 800ms (at most %v more)", waited, goawayLateness)
	}
	if attempt.Gateway != "ws://"+pb.addr || attempt.Status != protocol.StatusSwitchingProtocols {
		t.Errorf("first attempt at %s answered %d, want gateway b's 101", attempt.Gateway, attempt.Status)
	}
	cancel()
	if err := <-ran; !errors.Is(err, context.Canceled) {
		t.Errorf("client stopped with %v", err)
	}
	_ = pb
}
