package gateway_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"stormsim/gateway"
	"stormsim/gateway/protocol"
	"stormsim/gateway/store"
	"stormsim/internal/pgtest"
	"stormsim/models"
)

// blockedPool is a gateway whose handshake pool has one connection, held by
// the claim of device 0 while the test holds that device's floor row lock:
// every other handshake waits for the pool until release is called.
type blockedPool struct {
	p       *inproc
	s       *store.PG
	tx      pgx.Tx
	first   chan error // device 0's handshake outcome
	release func()
}

func startBlocked(t *testing.T, cfg gateway.Config, devices int) *blockedPool {
	t.Helper()
	s, schema := setup(t, devices)
	ctx := context.Background()
	one, err := store.Open(ctx, pgtest.URL(t), store.Options{Schema: schema, AppName: "test-one", MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(one.Close)
	if _, err := s.ClaimRoute(ctx, store.Claim{Device: store.DeviceID(0), Gateway: "x", Conn: "x", Attempt: 0}); err != nil {
		t.Fatal(err)
	}
	tx, err := s.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT 1 FROM route_floor WHERE device_id = $1 FOR UPDATE`, store.DeviceID(0)); err != nil {
		t.Fatal(err)
	}
	cfg.ClaimConcurrency = 1 // as the pool
	b := &blockedPool{p: startInproc(t, cfg, gateway.Deps{Handshakes: one, Leases: leasePool(t, s), Kicks: s}),
		s: s, tx: tx, first: make(chan error, 1)}
	b.release = func() { tx.Rollback(ctx) }
	t.Cleanup(b.release)
	go func() {
		c, _, err := dial(ctx, b.p.addr, store.DeviceID(0), 0, 1, true)
		if c != nil {
			c.ws.CloseNow()
		}
		b.first <- err
	}()
	waitFor(t, 3*time.Second, "device 0's claim under way", func() bool { return b.p.g.Metrics().ClaimsInflight.Load() == 1 })
	time.Sleep(50 * time.Millisecond) // and sent: it holds the connection, blocked on the lock
	return b
}

// leave dials device i and gives up after d, closing the connection, as a
// client whose handshake timed out does.
func (b *blockedPool) leave(t *testing.T, i int, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if _, resp, err := dial(ctx, b.p.addr, store.DeviceID(i), 0, 1, true); err == nil {
		t.Fatalf("device %d connected (%d) while the pool was blocked", i, status(resp))
	}
}

// TestAbandonedHandshakes: a client leaves while its handshake waits for a
// database connection. With skip the gateway drops it unclaimed: no floor,
// no route, gateway_handshakes_abandoned_total. With serve it claims anyway
// once a connection is free, then finds the client gone: the floor is
// raised, the route released at once, gateway_claims_wasted_total.
func TestAbandonedHandshakes(t *testing.T) {
	cases := []struct {
		mode      models.Abandoned
		abandoned int64
		wasted    int64
		floor     bool // device 1's floor records its claim
	}{
		{models.AbandonedSkip, 1, 0, false},
		{models.AbandonedServe, 0, 1, true},
	}
	for _, c := range cases {
		t.Run(string(c.mode), func(t *testing.T) {
			cfg := testConfig("gw-abandon")
			cfg.Abandoned = c.mode
			b := startBlocked(t, cfg, 2)
			b.leave(t, 1, 300*time.Millisecond)
			waitFor(t, 2*time.Second, "departure noticed", func() bool {
				return c.mode == models.AbandonedServe || b.p.g.Metrics().Abandoned.Load() == 1
			})
			b.release()
			if err := <-b.first; err != nil {
				t.Fatalf("device 0: %v", err)
			}
			m := b.p.g.Metrics()
			waitFor(t, 3*time.Second, "device 1 settled", func() bool { return m.Abandoned.Load()+m.ClaimsWasted.Load() == 1 })
			if m.Abandoned.Load() != c.abandoned || m.ClaimsWasted.Load() != c.wasted {
				t.Errorf("abandoned %d wasted %d, want %d %d", m.Abandoned.Load(), m.ClaimsWasted.Load(), c.abandoned, c.wasted)
			}
			f, _ := b.s.Floors(context.Background(), []string{store.DeviceID(1)})
			if _, claimed := f[store.DeviceID(1)]; claimed != c.floor {
				t.Errorf("device 1 floor %+v, want claimed=%v", f, c.floor)
			}
			waitFor(t, 2*time.Second, "no route for device 1", func() bool { return routeOf(t, b.s, store.DeviceID(1)) == store.Owner{} })
			if got := handshakesCounted(m); got != 2 {
				t.Errorf("metrics account for %d handshakes, want 2", got)
			}
		})
	}
}

// TestMaxClaimsInflight: with N handshakes waiting for their claim (behind
// the one claiming), the next is answered 503 + Retry-After at once,
// without waiting and without a query; the ones admitted to wait complete.
func TestMaxClaimsInflight(t *testing.T) {
	const limit = 2
	cfg := testConfig("gw-busy")
	cfg.MaxClaimsInflight = limit
	b := startBlocked(t, cfg, limit+2)
	ctx := context.Background()
	waiting := make(chan error, limit)
	for i := 1; i <= limit; i++ {
		go func() {
			c, _, err := dial(ctx, b.p.addr, store.DeviceID(i), 0, 1, true)
			if c != nil {
				c.ws.CloseNow()
			}
			waiting <- err
		}()
	}
	waitFor(t, 3*time.Second, "two waiting", func() bool { return b.p.g.Metrics().ClaimsWaiting.Load() == limit })
	began := time.Now()
	_, resp, _ := dial(ctx, b.p.addr, store.DeviceID(limit+1), 0, 1, true)
	if status(resp) != 503 || resp.Header.Get(protocol.HeaderRetryAfter) != "1" || time.Since(began) > 500*time.Millisecond {
		t.Errorf("third handshake: %d Retry-After %q after %v, want 503 with Retry-After 1 at once",
			status(resp), resp.Header.Get(protocol.HeaderRetryAfter), time.Since(began))
	}
	if got := b.p.g.Metrics().Rejected("busy"); got != 1 {
		t.Errorf("rejected{reason=busy} = %d, want 1", got)
	}
	b.release()
	if err := <-b.first; err != nil {
		t.Errorf("the claiming handshake: %v", err)
	}
	for range limit {
		if err := <-waiting; err != nil {
			t.Errorf("a waiting handshake: %v", err)
		}
	}
}
