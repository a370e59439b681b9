package gateway_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"stormsim/gateway"
	"stormsim/gateway/protocol"
	"stormsim/gateway/store"
)

// countingStore counts every handshake-path store call, to prove which
// rejections cost no query.
type countingStore struct {
	gateway.Handshakes
	calls atomic.Int64
}

func (c *countingStore) Authenticate(ctx context.Context, d, tok string) (bool, error) {
	c.calls.Add(1)
	return c.Handshakes.Authenticate(ctx, d, tok)
}

func (c *countingStore) ClaimRoute(ctx context.Context, cl store.Claim) (store.ClaimResult, error) {
	c.calls.Add(1)
	return c.Handshakes.ClaimRoute(ctx, cl)
}

// TestHandshakeRejections: every malformed or refused handshake gets its
// status, costs the documented number of queries (none before the token
// bucket), and writes no route.
func TestHandshakeRejections(t *testing.T) {
	s, _ := setup(t, 3)
	counting := &countingStore{Handshakes: s}
	p := startInproc(t, testConfig("gw-hs"), gateway.Deps{Handshakes: counting, Leases: leasePool(t, s), Kicks: s})
	ctx := context.Background()

	// u-000-d1 holds a route at attempt 5, so attempt 4 is stale.
	owner, _, err := dial(ctx, p.addr, "u-000-d1", 0, 5, true)
	if err != nil {
		t.Fatal(err)
	}
	ws := "ws://" + p.addr + protocol.Path
	auth := func(v string) http.Header { return http.Header{protocol.HeaderAuthorization: {v}} }
	fresh := bearer("u-001-d1")
	cases := []struct {
		name    string
		url     string
		header  http.Header
		status  int
		queries int64
		device  string // must hold no route afterwards
	}{
		{"attempt missing", ws, fresh, 400, 0, "u-001-d1"},
		{"attempt not a number", ws + "?attempt=x", fresh, 400, 0, "u-001-d1"},
		{"attempt negative", ws + "?attempt=-1", fresh, 400, 0, "u-001-d1"},
		{"attempt beyond int64", ws + "?attempt=9223372036854775808", fresh, 400, 0, "u-001-d1"},
		{"attempt given twice", ws + "?attempt=1&attempt=2", fresh, 400, 0, "u-001-d1"},
		{"install_epoch malformed", ws + "?attempt=1&install_epoch=1.5", fresh, 400, 0, "u-001-d1"},
		{"no Authorization", ws + "?attempt=1", nil, 401, 0, "u-001-d1"},
		{"Authorization not Bearer", ws + "?attempt=1", auth("Basic dTp0"), 401, 0, "u-001-d1"},
		{"Bearer without token", ws + "?attempt=1", auth("Bearer u-001-d1"), 401, 0, "u-001-d1"},
		{"wrong token", ws + "?attempt=1", auth("Bearer u-001-d1:tok-u-000-d1"), 401, 1, "u-001-d1"},
		{"unknown device", ws + "?attempt=1", auth("Bearer u-999-d1:tok-u-999-d1"), 401, 1, "u-999-d1"},
		{"stale attempt", ws + "?attempt=4", bearer("u-000-d1"), 409, 2, ""},
		{"equal attempt", ws + "?attempt=5", bearer("u-000-d1"), 409, 2, ""},
	}
	for _, c := range cases {
		before := counting.calls.Load()
		_, resp, err := dialRaw(ctx, c.url, c.header, true)
		if err == nil || status(resp) != c.status {
			t.Errorf("%s: status %d err %v, want %d", c.name, status(resp), err, c.status)
			continue
		}
		if resp.Header.Get(protocol.HeaderGateway) != "gw-hs" {
			t.Errorf("%s: %s header %q", c.name, protocol.HeaderGateway, resp.Header.Get(protocol.HeaderGateway))
		}
		if got := counting.calls.Load() - before; got != c.queries {
			t.Errorf("%s: %d store queries, want %d", c.name, got, c.queries)
		}
		if c.device != "" {
			if o := routeOf(t, s, c.device); o != (store.Owner{}) {
				t.Errorf("%s: route written: %+v", c.name, o)
			}
			if f, _ := s.Floors(ctx, []string{c.device}); len(f) != 0 {
				t.Errorf("%s: floor row written: %+v", c.name, f)
			}
		}
	}
	if o := routeOf(t, s, "u-000-d1"); o.Conn != owner.hello.Conn || o.Version != 1 {
		t.Errorf("owner changed by refused claims: %+v", o)
	}
	resp, err := http.Get("http://" + p.addr + protocol.Path + "?attempt=1")
	if err != nil || resp.StatusCode != 400 {
		t.Errorf("plain GET: %v %v, want 400", status(resp), err)
	}
	m := p.g.Metrics()
	if m.Rejected("400") != 7 || m.Rejected("401") != 5 || m.Rejected("409") != 2 || m.Admitted.Load() != 1 {
		t.Errorf("metrics: 400=%d 401=%d 409=%d admitted=%d, want 7 5 2 1",
			m.Rejected("400"), m.Rejected("401"), m.Rejected("409"), m.Admitted.Load())
	}
}

// TestHelloAndLocalReplacement: the hello names gateway, conn and version;
// a newer handshake of the same device on the same gateway closes the old
// connection with 4001 and the route moves to the new one.
func TestHelloAndLocalReplacement(t *testing.T) {
	s, _ := setup(t, 1)
	p := startInproc(t, testConfig("gw-one"), depsOf(t, s))
	ctx := context.Background()
	old, _, err := dial(ctx, p.addr, "u-000-d1", 0, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	if old.hello.Gateway != "gw-one" || old.hello.RouteVersion != 1 || old.hello.Conn == "" {
		t.Fatalf("hello %+v", old.hello)
	}
	neu, _, err := dial(ctx, p.addr, "u-000-d1", 0, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	if code := old.closeCode(t, 2*time.Second); code != protocol.CloseReplaced {
		t.Fatalf("old connection closed with %v, want 4001", code)
	}
	if neu.hello.RouteVersion != 2 || !neu.isOpen() {
		t.Fatalf("new connection: %+v open=%v", neu.hello, neu.isOpen())
	}
	waitFor(t, 2*time.Second, "route of the new conn", func() bool { return routeOf(t, s, "u-000-d1").Conn == neu.hello.Conn })
}

// TestRestartReleasesOwnStaleRoutes: routes left under a gateway's id by an
// earlier process (SIGKILLed and restarted under the same id before anyone
// swept it) are deleted at start, since the renewed lease would otherwise
// protect them forever.
func TestRestartReleasesOwnStaleRoutes(t *testing.T) {
	s, _ := setup(t, 2)
	ctx := context.Background()
	for i, gw := range []string{"gw-same", "gw-other"} {
		if _, err := s.ClaimRoute(ctx, store.Claim{Device: store.DeviceID(i), Gateway: gw, Conn: "old", Attempt: 1}); err != nil {
			t.Fatal(err)
		}
	}
	p := startInproc(t, testConfig("gw-same"), depsOf(t, s))
	if o := routeOf(t, s, store.DeviceID(0)); o != (store.Owner{}) {
		t.Errorf("stale own route kept: %+v", o)
	}
	if o := routeOf(t, s, store.DeviceID(1)); o.Gateway != "gw-other" {
		t.Errorf("another gateway's route touched: %+v", o)
	}
	if ev := p.logs.events("stale_routes_released"); len(ev) != 1 || ev[0].num("count") != 1 {
		t.Errorf("stale_routes_released lines %v, want one with count 1", ev)
	}
}

// failingClaims fails every claim after it reached the database.
type failingClaims struct{ gateway.Handshakes }

func (failingClaims) ClaimRoute(context.Context, store.Claim) (store.ClaimResult, error) {
	return store.ClaimResult{}, errors.New("connection reset during commit")
}

// TestStoreErrorAnswers503: a database error on the handshake path is a 503
// with Retry-After (retry, maybe elsewhere), counted as reason "store", and
// leaves no connection registered.
func TestStoreErrorAnswers503(t *testing.T) {
	s, _ := setup(t, 1)
	p := startInproc(t, testConfig("gw-err"), gateway.Deps{Handshakes: failingClaims{s}, Leases: leasePool(t, s), Kicks: s})
	_, resp, err := dial(context.Background(), p.addr, "u-000-d1", 0, 1, true)
	if err == nil || status(resp) != 503 || resp.Header.Get(protocol.HeaderRetryAfter) != "1" {
		t.Fatalf("status %d err %v, want 503 with Retry-After 1", status(resp), err)
	}
	if got := p.g.Metrics().Rejected("store"); got != 1 {
		t.Errorf("store rejections %d, want 1", got)
	}
	waitFor(t, 2*time.Second, "no connection registered", func() bool { return p.g.Connections() == 0 })
}
