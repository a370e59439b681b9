package gateway_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"stormsim/gateway"
	"stormsim/gateway/logline"
	"stormsim/gateway/protocol"
	"stormsim/gateway/store"
)

// countingStore counts every handshake-path store call, to prove which
// rejections cost no query.
type countingStore struct {
	gateway.Handshakes
	calls atomic.Int64
}

func (c *countingStore) AuthenticateAndClaim(ctx context.Context, cl store.Claim, token string) (store.ClaimResult, error) {
	c.calls.Add(1)
	return c.Handshakes.AuthenticateAndClaim(ctx, cl, token)
}

// scarceTokens is a configuration whose admission bucket never refills in a
// test's time (0.001/s) and holds burst tokens: a test that spends a known
// number can tell whether anything else took one.
func scarceTokens(id string, burst int) gateway.Config {
	cfg := testConfig(id)
	cfg.AdmitRate, cfg.AdmitBurst = 0.001, burst
	return cfg
}

// TestHandshakeRejections: every malformed or refused handshake gets its
// status and reason, costs the documented number of queries and admission
// tokens (none before the token bucket), and writes no route.
func TestHandshakeRejections(t *testing.T) {
	s, _ := setup(t, 3)
	counting := &countingStore{Handshakes: s}
	const burst = 100
	p := startInproc(t, scarceTokens("gw-hs", burst), gateway.Deps{Handshakes: counting, Leases: leasePool(t, s), Kicks: s})
	ctx := context.Background()

	// u-000-d1 holds a route at attempt 5, so attempt 4 is stale.
	owner, _, err := dial(ctx, p.addr, "u-000-d1", 0, 5, true)
	if err != nil {
		t.Fatal(err)
	}
	ws := protocol.Path
	auth := func(v string) http.Header { return withHeader(wsHeaders(), protocol.HeaderAuthorization, v) }
	fresh := auth("Bearer u-001-d1:" + store.DeviceToken("u-001-d1"))
	cases := []struct {
		name    string
		method  string
		target  string
		header  http.Header
		status  int
		reason  string
		queries int64
		tokens  int
		device  string // must hold no route afterwards
	}{
		{"plain GET", "GET", ws + "?attempt=1", http.Header{}, 426, "426", 0, 0, "u-001-d1"},
		{"attempt missing", "GET", ws, fresh, 400, "400", 0, 0, "u-001-d1"},
		{"attempt not a number", "GET", ws + "?attempt=x", fresh, 400, "400", 0, 0, "u-001-d1"},
		{"attempt negative", "GET", ws + "?attempt=-1", fresh, 400, "400", 0, 0, "u-001-d1"},
		{"attempt beyond int64", "GET", ws + "?attempt=9223372036854775808", fresh, 400, "400", 0, 0, "u-001-d1"},
		{"attempt given twice", "GET", ws + "?attempt=1&attempt=2", fresh, 400, "400", 0, 0, "u-001-d1"},
		{"attempt with a plus sign", "GET", ws + "?attempt=%2B5", fresh, 400, "400", 0, 0, "u-001-d1"},
		{"attempt with a leading zero", "GET", ws + "?attempt=007", fresh, 400, "400", 0, 0, "u-001-d1"},
		{"attempt minus zero", "GET", ws + "?attempt=-0", fresh, 400, "400", 0, 0, "u-001-d1"},
		{"attempt empty", "GET", ws + "?attempt=", fresh, 400, "400", 0, 0, "u-001-d1"},
		{"install_epoch with a leading zero", "GET", ws + "?attempt=1&install_epoch=01", fresh, 400, "400", 0, 0, "u-001-d1"},
		{"install_epoch malformed", "GET", ws + "?attempt=1&install_epoch=1.5", fresh, 400, "400", 0, 0, "u-001-d1"},
		{"no Authorization", "GET", ws + "?attempt=1", wsHeaders(), 401, "401", 0, 0, "u-001-d1"},
		{"Authorization not Bearer", "GET", ws + "?attempt=1", auth("Basic dTp0"), 401, "401", 0, 0, "u-001-d1"},
		{"Bearer without token", "GET", ws + "?attempt=1", auth("Bearer u-001-d1"), 401, "401", 0, 0, "u-001-d1"},
		{"wrong token", "GET", ws + "?attempt=1", auth("Bearer u-001-d1:tok-u-000-d1"), 401, "401", 1, 1, "u-001-d1"},
		{"unknown device", "GET", ws + "?attempt=1", auth("Bearer u-999-d1:tok-u-999-d1"), 401, "401", 1, 1, "u-999-d1"},
		{"stale attempt", "GET", ws + "?attempt=4", auth("Bearer u-000-d1:tok-u-000-d1"), 409, "409", 1, 1, ""},
		{"equal attempt", "GET", ws + "?attempt=5", auth("Bearer u-000-d1:tok-u-000-d1"), 409, "409", 1, 1, ""},
	}
	spent := 1 // the owner's
	for _, c := range cases {
		before, rejected := counting.calls.Load(), p.g.Metrics().Rejected(c.reason)
		resp, _ := rawRequest(t, p.addr, c.method, c.target, c.header)
		spent += c.tokens
		if resp.StatusCode != c.status {
			t.Errorf("%s: status %d, want %d", c.name, resp.StatusCode, c.status)
			continue
		}
		if got := p.g.Metrics().Rejected(c.reason) - rejected; got != 1 {
			t.Errorf("%s: rejected{reason=%q} rose by %d, want 1", c.name, c.reason, got)
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
	if o := routeOf(t, s, "u-000-d1"); o.Conn != owner.hello.Conn || o.Version != 1 || !owner.isOpen() {
		t.Errorf("owner changed by refused claims: %+v open=%v", o, owner.isOpen())
	}
	assertTokensLeft(t, p, burst-spent)
}

// assertTokensLeft checks that exactly n admission tokens are left: n
// handshakes of fresh devices are admitted... as far as 401s go (the
// devices are unknown, so nothing else changes), then the next gets 429.
func assertTokensLeft(t *testing.T, p *inproc, n int) {
	t.Helper()
	for i := range n + 1 {
		h := withHeader(wsHeaders(), protocol.HeaderAuthorization, "Bearer probe-"+strconv.Itoa(i)+":t")
		resp, _ := rawRequest(t, p.addr, "GET", protocol.Path+"?attempt=1", h)
		want := protocol.StatusUnauthorized
		if i == n {
			want = protocol.StatusTooManyRequests
		}
		if resp.StatusCode != want {
			t.Fatalf("token probe %d of %d: status %d, want %d (tokens were spent by refused requests)", i+1, n+1, resp.StatusCode, want)
		}
	}
}

// TestRefusedUpgradeChangesNothing: a handshake with valid credentials and a
// newer attempt that cannot be upgraded is refused with the status the
// WebSocket library would answer, before any claim: the device's live
// session is not kicked, its route, floor and version stay, no admission
// token is spent, and the refusal is counted. A handshake with a body
// (chunked, or a Content-Length above 0, sent or not) is one of them: the
// HTTP server reads a request's body before it writes the 101, so it would
// wait for a body the client never sends after the claim had kicked the
// live session.
func TestRefusedUpgradeChangesNothing(t *testing.T) {
	s, _ := setup(t, 1)
	counting := &countingStore{Handshakes: s}
	const burst = 2
	p := startInproc(t, scarceTokens("gw-upgrade", burst), gateway.Deps{Handshakes: counting, Leases: leasePool(t, s), Kicks: s})
	ctx := context.Background()
	live, _, err := dial(ctx, p.addr, "u-000-d1", 0, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	valid := withHeader(wsHeaders(), protocol.HeaderAuthorization, "Bearer u-000-d1:"+store.DeviceToken("u-000-d1"))
	cases := []struct {
		name   string
		method string
		header http.Header
		body   string
		status int
	}{
		{"chunked, no body", "GET", withHeader(valid, "Transfer-Encoding", "chunked"), "", 400},
		{"chunked, an empty body", "GET", withHeader(valid, "Transfer-Encoding", "chunked"), "0\r\n\r\n", 400},
		{"Content-Length 5, no body", "GET", withHeader(valid, "Content-Length", "5"), "", 400},
		{"Content-Length 5 and its body", "GET", withHeader(valid, "Content-Length", "5"), "hello", 400},
		{"no Sec-WebSocket-Key", "GET", withHeader(valid, "Sec-WebSocket-Key"), "", 400},
		{"Sec-WebSocket-Key not 16 bytes", "GET", withHeader(valid, "Sec-WebSocket-Key", "c2hvcnQ="), "", 400},
		{"foreign Origin", "GET", withHeader(valid, "Origin", "http://evil.example"), "", 403},
		{"POST", "POST", valid, "", 405},
		{"version 8", "GET", withHeader(valid, "Sec-WebSocket-Version", "8"), "", 400},
		{"no Connection: Upgrade", "GET", withHeader(valid, "Connection", "keep-alive"), "", 426},
		{"no Upgrade: websocket", "GET", withHeader(valid, "Upgrade", "h2c"), "", 426},
	}
	for i, c := range cases {
		resp, _ := rawRequestBody(t, p.addr, c.method, protocol.Path+"?attempt="+strconv.Itoa(2+i), c.header, c.body)
		if resp.StatusCode != c.status {
			t.Errorf("%s: status %d, want %d", c.name, resp.StatusCode, c.status)
		}
	}
	time.Sleep(200 * time.Millisecond) // a kick would have arrived by now
	if !live.isOpen() {
		t.Errorf("live session closed (%v): a refused request kicked it", live.closeErr)
	}
	if o := routeOf(t, s, "u-000-d1"); o.Conn != live.hello.Conn || o.Version != 1 {
		t.Errorf("route %+v, want the live session's at version 1", o)
	}
	if f, _ := s.Floors(ctx, []string{"u-000-d1"}); f["u-000-d1"] != (store.Floor{Version: 1, Epoch: 0, Attempt: 1}) {
		t.Errorf("floor %+v, want {1 0 1}", f)
	}
	if n := counting.calls.Load(); n != 1 {
		t.Errorf("%d claims, want 1 (the live session's)", n)
	}
	m := p.g.Metrics()
	refused := m.Rejected("400") + m.Rejected("403") + m.Rejected("405") + m.Rejected("426")
	if refused != int64(len(cases)) || m.Admitted.Load() != 1 || m.ReplacedClosed.Load() != 0 {
		t.Errorf("refused %d admitted %d replaced %d, want %d 1 0", refused, m.Admitted.Load(), m.ReplacedClosed.Load(), len(cases))
	}
	assertTokensLeft(t, p, burst-1)
}

// TestCredentialSyntax: the Bearer scheme is case-insensitive and may be
// followed by several spaces; a device id or token with bytes outside
// visible ASCII (bytes that are not UTF-8, spaces) is refused with 401 before any
// query or admission token, and is never reported as a database failure.
func TestCredentialSyntax(t *testing.T) {
	s, _ := setup(t, 1)
	counting := &countingStore{Handshakes: s}
	const burst = 10
	p := startInproc(t, scarceTokens("gw-cred", burst), gateway.Deps{Handshakes: counting, Leases: leasePool(t, s), Kicks: s})
	tok := store.DeviceToken("u-000-d1")
	cases := []struct {
		name   string
		auth   string
		status int
		claims int64
	}{
		{"device id not UTF-8", "Bearer u-\xff\xfe-d1:" + tok, 401, 0},
		{"token not UTF-8", "Bearer u-000-d1:tok-\xff", 401, 0},
		{"device id with a space", "Bearer u-000 d1:" + tok, 401, 0},
		{"device id too long", "Bearer " + strings.Repeat("d", protocol.MaxDeviceIDBytes+1) + ":" + tok, 401, 0},
		{"lower-case scheme", "bearer u-000-d1:" + tok, 101, 1},
		{"upper-case scheme", "BEARER u-000-d1:" + tok, 101, 1},
		{"two spaces after the scheme", "Bearer  u-000-d1:" + tok, 101, 1},
	}
	spent := 0
	for i, c := range cases {
		before := counting.calls.Load()
		h := withHeader(wsHeaders(), protocol.HeaderAuthorization, c.auth)
		resp, _ := rawRequest(t, p.addr, "GET", protocol.Path+"?attempt="+strconv.Itoa(i+1), h)
		if resp.StatusCode != c.status {
			t.Errorf("%s: status %d, want %d", c.name, resp.StatusCode, c.status)
		}
		if got := counting.calls.Load() - before; got != c.claims {
			t.Errorf("%s: %d queries, want %d", c.name, got, c.claims)
		}
		spent += int(c.claims)
	}
	if got := p.g.Metrics().Rejected("store"); got != 0 {
		t.Errorf("rejected{reason=store} = %d, want 0: malformed credentials raised a database alarm", got)
	}
	for _, e := range p.logs.events(logline.Admitted) {
		if e[logline.KeyDevice] != "u-000-d1" {
			t.Errorf("admitted device %q, want u-000-d1", e[logline.KeyDevice])
		}
	}
	waitFor(t, 3*time.Second, "raw sessions ended", func() bool { return p.g.Connections() == 0 })
	assertTokensLeft(t, p, burst-spent)
}

// TestClaimRange: attempt and install_epoch outside [0, protocol's max] are
// refused with 400 before any query; a device whose attempt reached the
// maximum recovers by reinstalling (epoch + 1, attempt 0), and one whose
// epoch reached it by an operator's floor reset.
func TestClaimRange(t *testing.T) {
	s, _ := setup(t, 1)
	counting := &countingStore{Handshakes: s}
	p := startInproc(t, testConfig("gw-range"), gateway.Deps{Handshakes: counting, Leases: leasePool(t, s), Kicks: s})
	ctx := context.Background()
	const maxA, maxE = protocol.MaxAttempt, protocol.MaxInstallEpoch
	steps := []struct {
		name           string
		epoch, attempt int64
		status         int
		reset          bool // the operator resets the floor first
	}{
		{"attempt above the range", 0, maxA + 1, 400, false},
		{"attempt 2^63-1", 0, 1<<63 - 1, 400, false},
		{"install_epoch above the range", maxE + 1, 0, 400, false},
		{"attempt at the maximum", 0, maxA, 101, false},
		{"no attempt can follow it", 0, maxA, 409, false},
		{"a reinstall can", 1, 0, 101, false},
		{"epoch at the maximum", maxE, maxA, 101, false},
		{"nothing can follow it", maxE, maxA, 409, false},
		{"after a floor reset anything can", 0, 0, 101, true},
	}
	for _, st := range steps {
		if st.reset {
			if _, err := s.ResetFloor(ctx, "u-000-d1"); err != nil {
				t.Fatal(err)
			}
		}
		before := counting.calls.Load()
		c, resp, err := dial(ctx, p.addr, "u-000-d1", st.epoch, st.attempt, true)
		if got := status(resp); got != st.status {
			t.Errorf("%s: status %d (%v), want %d", st.name, got, err, st.status)
		}
		if st.status == 400 && counting.calls.Load() != before {
			t.Errorf("%s: refused after a query", st.name)
		}
		if c != nil {
			c.ws.CloseNow()
		}
	}
}

// TestEchoedValuesAreTruncated: a huge query value is echoed, in the answer
// and in the log line, only as its first bytes and its length.
func TestEchoedValuesAreTruncated(t *testing.T) {
	s, _ := setup(t, 1)
	cfg := testConfig("gw-echo")
	cfg.LogRejections = gateway.RejectionEach
	p := startInproc(t, cfg, depsOf(t, s))
	huge := strings.Repeat("9", 12_000)
	resp, body := rawRequest(t, p.addr, "GET", protocol.Path+"?attempt="+huge, wsHeaders())
	if resp.StatusCode != 400 || len(body) > 300 || !strings.Contains(body, "12000 bytes") {
		t.Errorf("status %d, body of %d bytes %q, want 400 naming the value's length in under 300 bytes", resp.StatusCode, len(body), body[:min(len(body), 200)])
	}
	lines := p.logs.events(logline.Rejected)
	if len(lines) != 1 {
		t.Fatalf("%d rejected lines, want 1", len(lines))
	}
	if cause, _ := lines[0]["cause"].(string); len(cause) > 300 {
		t.Errorf("logged cause of %d bytes", len(cause))
	}
	resp, _ = rawRequest(t, p.addr, "GET", protocol.Path+"?attempt="+strings.Repeat("9", 40_000), wsHeaders())
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("40 KB request line: status %d, want 431", resp.StatusCode)
	}
}

// TestRejectionsSummarized: by default refusals are logged as counts per
// interval, not one line each; every one is still in /metrics.
func TestRejectionsSummarized(t *testing.T) {
	s, _ := setup(t, 1)
	p := startInproc(t, testConfig("gw-summary"), depsOf(t, s))
	const n = 50
	for i := range n {
		h := withHeader(wsHeaders(), protocol.HeaderAuthorization, "Bearer nobody-"+strconv.Itoa(i)+":x")
		rawRequest(t, p.addr, "GET", protocol.Path+"?attempt=1", h)
		rawRequest(t, p.addr, "GET", protocol.Path, wsHeaders())
	}
	waitFor(t, 3*gateway.RejectionSummaryEvery, "a rejections line", func() bool { return len(p.logs.events(logline.Rejections)) > 0 })
	time.Sleep(gateway.RejectionSummaryEvery) // any straggler's line
	var got401, got400 float64
	for _, e := range p.logs.events(logline.Rejections) {
		by, _ := e["by_reason"].(map[string]any)
		f401, _ := by["401"].(float64)
		f400, _ := by["400"].(float64)
		got401, got400 = got401+f401, got400+f400
	}
	if got401 != n || got400 != n {
		t.Errorf("summaries count 401=%v 400=%v, want %d each", got401, got400, n)
	}
	var info int
	for _, e := range p.logs.events(logline.Rejected) {
		if e["level"] == "INFO" {
			info++
		}
	}
	if info != 0 {
		t.Errorf("%d per-request rejected lines at INFO, want 0", info)
	}
	if m := p.g.Metrics(); m.Rejected("401") != n || m.Rejected("400") != n {
		t.Errorf("metrics 401=%d 400=%d, want %d each", m.Rejected("401"), m.Rejected("400"), n)
	}
}

// TestGatewayIDOnlyForAuthenticated: X-Gateway-Id goes with answers to
// authenticated handshakes (101, 409), not to anonymous or refused ones nor
// to /healthz.
func TestGatewayIDOnlyForAuthenticated(t *testing.T) {
	s, _ := setup(t, 1)
	p := startInproc(t, testConfig("gw-secret-host-42"), depsOf(t, s))
	ctx := context.Background()
	_, resp, err := dial(ctx, p.addr, "u-000-d1", 0, 1, true)
	if err != nil || resp.Header.Get(protocol.HeaderGateway) != "gw-secret-host-42" {
		t.Errorf("101: %v, header %q, want the id", err, resp.Header.Get(protocol.HeaderGateway))
	}
	_, resp, _ = dial(ctx, p.addr, "u-000-d1", 0, 1, true)
	if status(resp) != 409 || resp.Header.Get(protocol.HeaderGateway) != "gw-secret-host-42" {
		t.Errorf("409: status %d header %q, want the id", status(resp), resp.Header.Get(protocol.HeaderGateway))
	}
	anonymous := []struct {
		name   string
		target string
		header http.Header
	}{
		{"no credentials", protocol.Path + "?attempt=1", wsHeaders()},
		{"wrong token", protocol.Path + "?attempt=2", withHeader(wsHeaders(), protocol.HeaderAuthorization, "Bearer u-000-d1:nope")},
		{"bad attempt", protocol.Path + "?attempt=x", wsHeaders()},
		{"healthz", "/healthz", http.Header{}},
	}
	for _, c := range anonymous {
		resp, _ := rawRequest(t, p.addr, "GET", c.target, c.header)
		if v := resp.Header.Get(protocol.HeaderGateway); v != "" {
			t.Errorf("%s (%d): %s %q sent to an anonymous client", c.name, resp.StatusCode, protocol.HeaderGateway, v)
		}
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
// earlier process (SIGKILLed and restarted under the same id after its
// lease ran out, before anyone swept it) are deleted at start, since the
// renewed lease would otherwise protect them forever.
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
	if ev := p.logs.events(logline.StaleRoutesReleased); len(ev) != 1 || ev[0].num(logline.KeyCount) != 1 {
		t.Errorf("stale_routes_released lines %v, want one with count 1", ev)
	}
}

// failingClaims fails every claim after it reached the database.
type failingClaims struct{ gateway.Handshakes }

func (failingClaims) AuthenticateAndClaim(context.Context, store.Claim, string) (store.ClaimResult, error) {
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
