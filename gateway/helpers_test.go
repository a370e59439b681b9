package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"stormsim/gateway"
	"stormsim/gateway/logline"
	"stormsim/gateway/protocol"
	"stormsim/gateway/store"
	"stormsim/internal/pgtest"
)

// logLines is a concurrency-safe sink for a gateway's JSON log.
type logLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// event is one parsed log line.
type event map[string]any

func (e event) time() time.Time {
	t, _ := time.Parse(time.RFC3339Nano, e["time"].(string))
	return t
}

func (e event) num(key string) float64 { f, _ := e[key].(float64); return f }

// events returns the lines whose msg is msg (all lines for "").
func (l *logLines) events(msg string) []event {
	l.mu.Lock()
	data := append([]byte(nil), l.buf.Bytes()...)
	l.mu.Unlock()
	return parseEvents(data, msg)
}

func parseEvents(data []byte, msg string) []event {
	var out []event
	for _, line := range bytes.Split(data, []byte("\n")) {
		var e event
		if json.Unmarshal(line, &e) != nil {
			continue
		}
		if msg == "" || e["msg"] == msg {
			out = append(out, e)
		}
	}
	return out
}

// inproc is a gateway running inside the test process.
type inproc struct {
	g      *gateway.Gateway
	addr   string
	logs   *logLines
	cancel context.CancelFunc
	done   chan error
}

// testConfig is the configuration of in-process tests that do not test the
// lease itself: the seed's 1.5s lease (tolerant of a loaded machine under
// -race) with a 100ms period.
func testConfig(id string) gateway.Config {
	cfg := gateway.DefaultConfig(id)
	cfg.Ping = 100 * time.Millisecond
	cfg.Idle = 2 * time.Second
	cfg.DrainGrace = 2 * time.Second
	return cfg
}

// startInproc runs a gateway on a free port of 127.0.0.1 against s (all
// three dependencies), optionally wrapped. It is drained at cleanup.
func startInproc(t testing.TB, cfg gateway.Config, deps gateway.Deps) *inproc {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return startInprocOn(t, cfg, deps, ln)
}

// startInprocOn is startInproc on the listener ln.
func startInprocOn(t testing.TB, cfg gateway.Config, deps gateway.Deps, ln net.Listener) *inproc {
	t.Helper()
	logs := &logLines{}
	g, err := gateway.New(cfg, deps, slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &inproc{g: g, addr: ln.Addr().String(), logs: logs, cancel: cancel, done: make(chan error, 1)}
	go func() { p.done <- g.Run(ctx, ln) }()
	waitFor(t, 10*time.Second, "listening", func() bool { return len(logs.events(logline.Listening)) > 0 })
	t.Cleanup(func() {
		p.stop(t)
		if t.Failed() {
			for _, e := range logs.events("") {
				if e["level"] != "INFO" || e["msg"] == logline.LeaseRegained || e["msg"] == logline.SweepPaused {
					t.Logf("%s: %v", cfg.ID, e)
				}
			}
		}
	})
	return p
}

// stop drains the gateway and waits for Run to return.
func (p *inproc) stop(t testing.TB) error {
	p.cancel()
	select {
	case err := <-p.done:
		p.done <- err
		return err
	case <-time.After(15 * time.Second):
		t.Error("gateway did not stop")
		return nil
	}
}

// depsOf wires s for handshakes and kicks and a separate small pool for
// leases, as cmd/gateway does.
func depsOf(t testing.TB, s *store.PG) gateway.Deps {
	return gateway.Deps{Handshakes: s, Leases: leasePool(t, s), Kicks: s}
}

func leasePool(t testing.TB, s *store.PG) *store.PG {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := store.Open(ctx, pgtest.URL(t), store.Options{Schema: s.Schema(), AppName: "test-lease", MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l
}

// setup returns a migrated store in a fresh schema with n devices.
func setup(t testing.TB, devices int) (*store.PG, string) {
	t.Helper()
	schema := pgtest.Schema(t)
	s := pgtest.Open(t, schema, "test")
	if _, err := s.ProvisionDevices(context.Background(), devices); err != nil {
		t.Fatal(err)
	}
	return s, schema
}

func waitFor(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// client is a minimal test WebSocket client: it reads the hello, then keeps
// reading (so pings are answered) and records frames and the close.
type client struct {
	ws       *websocket.Conn
	hello    protocol.Hello
	frames   chan []byte
	closed   chan struct{}
	closeErr error
	closedAt time.Time
	goaway   atomic.Bool
}

// handshakeURL builds ws://addr/ws?attempt=..&install_epoch=..
func handshakeURL(addr string, epoch, attempt int64) string {
	q := url.Values{protocol.QueryAttempt: {strconv.FormatInt(attempt, 10)},
		protocol.QueryInstallEpoch: {strconv.FormatInt(epoch, 10)}}
	return "ws://" + addr + protocol.Path + "?" + q.Encode()
}

func bearer(device string) http.Header {
	return http.Header{protocol.HeaderAuthorization: {"Bearer " + device + ":" + store.DeviceToken(device)}}
}

// dial handshakes as device and, on 101, reads the hello. read=false leaves
// the connection unread (a client that never reads).
func dial(ctx context.Context, addr, device string, epoch, attempt int64, read bool) (*client, *http.Response, error) {
	return dialRaw(ctx, handshakeURL(addr, epoch, attempt), bearer(device), read)
}

func dialRaw(ctx context.Context, u string, h http.Header, read bool) (*client, *http.Response, error) {
	ws, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		return nil, resp, err
	}
	c := &client{ws: ws, frames: make(chan []byte, 64), closed: make(chan struct{})}
	if !read {
		return c, resp, nil
	}
	_, data, err := ws.Read(ctx)
	if err != nil {
		return nil, resp, fmt.Errorf("read hello: %w", err)
	}
	if err := json.Unmarshal(data, &c.hello); err != nil || c.hello.T != protocol.TypeHello {
		return nil, resp, fmt.Errorf("bad hello %q", data)
	}
	go c.readLoop()
	return c, resp, nil
}

func (c *client) readLoop() {
	defer close(c.closed)
	for {
		_, data, err := c.ws.Read(context.Background())
		if err != nil {
			c.closeErr, c.closedAt = err, time.Now()
			return
		}
		var env struct{ T string }
		if json.Unmarshal(data, &env) == nil && env.T == protocol.TypeGoaway {
			c.goaway.Store(true)
		}
		select {
		case c.frames <- data:
		default:
		}
	}
}

// closeCode waits for the connection to end and returns its close code.
func (c *client) closeCode(t testing.TB, within time.Duration) websocket.StatusCode {
	t.Helper()
	select {
	case <-c.closed:
		return websocket.CloseStatus(c.closeErr)
	case <-time.After(within):
		t.Fatalf("connection %s not closed within %v", c.hello.Conn, within)
		return 0
	}
}

func (c *client) isOpen() bool {
	select {
	case <-c.closed:
		return false
	default:
		return true
	}
}

func (c *client) send(t testing.TB, v any) {
	t.Helper()
	b, _ := json.Marshal(v)
	if err := c.ws.Write(context.Background(), websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
}

// next returns the next frame within d.
func (c *client) next(t testing.TB, d time.Duration) []byte {
	t.Helper()
	select {
	case f := <-c.frames:
		return f
	case <-time.After(d):
		t.Fatalf("no frame within %v", d)
		return nil
	}
}

func status(resp *http.Response) int {
	if resp == nil {
		return 0
	}
	return resp.StatusCode
}

func routeOf(t testing.TB, s *store.PG, device string) store.Owner {
	t.Helper()
	o, err := s.Route(context.Background(), device)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// wsHeaders are the headers of a valid WebSocket upgrade request.
func wsHeaders() http.Header {
	return http.Header{
		"Connection":            {"Upgrade"},
		"Upgrade":               {"websocket"},
		"Sec-Websocket-Version": {"13"},
		"Sec-Websocket-Key":     {"dGhlIHNhbXBsZSBub25jZQ=="},
	}
}

// rawRequest sends one request written by hand (so that it can break rules a
// Go client enforces: bytes in headers, NUL, odd spacing) on a fresh TCP
// connection and returns the response with its body read.
func rawRequest(t testing.TB, addr, method, target string, h http.Header) (*http.Response, string) {
	t.Helper()
	return rawRequestFrom(t, "", addr, method, target, h)
}

// rawRequestBody is rawRequest with body written after the headers as it
// is (framing it is the caller's: Content-Length or chunks), answered
// within 3 s.
func rawRequestBody(t testing.TB, addr, method, target string, h http.Header, body string) (*http.Response, string) {
	t.Helper()
	return rawExchange(t, "", addr, method, target, h, body, 3*time.Second)
}

// rawRequestFrom is rawRequest from a chosen local IP address (any
// 127.0.0.0/8 address is loopback on Linux), to play several sources.
func rawRequestFrom(t testing.TB, localIP, addr, method, target string, h http.Header) (*http.Response, string) {
	t.Helper()
	return rawExchange(t, localIP, addr, method, target, h, "", 10*time.Second)
}

func rawExchange(t testing.TB, localIP, addr, method, target string, h http.Header, body string, within time.Duration) (*http.Response, string) {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second}
	if localIP != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(localIP)}
	}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(within))
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, target, addr)
	for k, vs := range h {
		for _, v := range vs {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	b.WriteString("\r\n")
	b.WriteString(body)
	if _, err := nc.Write(b.Bytes()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil {
		t.Fatalf("%s %.80s: %v", method, target, err)
	}
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return resp, string(answer)
}

// withHeader returns h with key set to the given values (none deletes it).
func withHeader(h http.Header, key string, values ...string) http.Header {
	out := h.Clone()
	if len(values) == 0 {
		out.Del(key)
	} else {
		out[http.CanonicalHeaderKey(key)] = values
	}
	return out
}
