package gateway_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"stormsim/gateway/logline"
	"stormsim/gateway/protocol"
	"stormsim/gateway/store"
)

// keepAlive opens a TCP connection, asks GET /healthz on it and leaves it
// open and idle (HTTP/1.1 keeps it alive). It returns nil if no answer came
// within d.
func keepAlive(t testing.TB, addr string, d time.Duration) net.Conn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, d)
	if err != nil {
		return nil
	}
	nc.SetDeadline(time.Now().Add(d))
	if _, err := io.WriteString(nc, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		nc.Close()
		return nil
	}
	resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil {
		nc.Close()
		return nil
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	nc.SetDeadline(time.Time{})
	return nc
}

// keepAlives opens n idle keep-alive connections at once; those that got
// no answer within d are left out.
func keepAlives(t testing.TB, addr string, n int, d time.Duration) []net.Conn {
	var mu sync.Mutex
	var out []net.Conn
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if nc := keepAlive(t, addr, d); nc != nil {
				mu.Lock()
				out = append(out, nc)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, nc := range out {
			nc.Close()
		}
	})
	return out
}

// closedByPeer reports whether the server closed nc within d.
func closedByPeer(nc net.Conn, d time.Duration) bool {
	nc.SetReadDeadline(time.Now().Add(d))
	_, err := nc.Read(make([]byte, 1))
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// TestIdleKeepAliveIsClosed: an HTTP keep-alive connection left idle after a
// request is closed by the gateway after Config.HTTPIdle.
func TestIdleKeepAliveIsClosed(t *testing.T) {
	s, _ := setup(t, 1)
	cfg := testConfig("gw-idle-http")
	cfg.HTTPIdle = 300 * time.Millisecond
	p := startInproc(t, cfg, depsOf(t, s))
	nc := keepAlive(t, p.addr, 2*time.Second)
	if nc == nil {
		t.Fatal("no answer to /healthz")
	}
	defer nc.Close()
	if !closedByPeer(nc, 3*time.Second) {
		t.Errorf("idle keep-alive connection still open 3 s after its request (HTTPIdle %v)", cfg.HTTPIdle)
	}
}

// TestConnectionCap: at Config.MaxConns open connections a new one closes an
// idle keep-alive connection to get in, so a valid handshake still
// succeeds; when none is idle (all sessions), the newcomer gets 503 with
// Retry-After at once instead of waiting.
func TestConnectionCap(t *testing.T) {
	const max = 20
	s, _ := setup(t, max+1)
	cfg := testConfig("gw-cap")
	cfg.MaxConns = max
	p := startInproc(t, cfg, depsOf(t, s))
	ctx := context.Background()
	idle := keepAlives(t, p.addr, max, 2*time.Second)
	if len(idle) != max {
		t.Fatalf("%d of %d keep-alive connections answered", len(idle), max)
	}
	sessions := make([]*client, 0, max)
	for i := range max {
		c, resp, err := dial(ctx, p.addr, store.DeviceID(i), 0, 1, true)
		if err != nil {
			t.Fatalf("handshake %d with the cap full of idle connections: %d %v", i, status(resp), err)
		}
		sessions = append(sessions, c)
	}
	if m := p.g.Metrics(); m.IdleEvicted.Load() != max {
		t.Errorf("idle evicted %d, want %d", m.IdleEvicted.Load(), max)
	}
	began := time.Now()
	_, resp, err := dial(ctx, p.addr, store.DeviceID(max), 0, 1, true)
	if status(resp) != 503 || resp.Header.Get(protocol.HeaderRetryAfter) != "1" || time.Since(began) > time.Second {
		t.Errorf("handshake over the cap: %d %v after %v, want 503 with Retry-After 1 at once", status(resp), err, time.Since(began))
	}
	if got := p.g.Metrics().ConnsRefused.Load(); got != 1 {
		t.Errorf("tcp refused %d, want 1", got)
	}
	sessions[0].ws.CloseNow()
	waitFor(t, 3*time.Second, "a slot", func() bool { return p.g.Metrics().TCPConns.Load() < max })
	if _, resp, err := dial(ctx, p.addr, store.DeviceID(max), 0, 2, true); err != nil {
		t.Errorf("handshake after a session left: %d %v", status(resp), err)
	}
}

// TestIdleSocketsDoNotStarveHandshakes is the reported attack on a real
// process: under ulimit -n 256, 300 idle keep-alive connections, and then a
// valid handshake must succeed promptly. The default cap (the descriptor
// limit less a reserve) keeps the gateway within its descriptors, closing
// idle connections to admit new ones.
func TestIdleSocketsDoNotStarveHandshakes(t *testing.T) {
	_, schema := setup(t, 1)
	pc := shortLease
	pc.fdLimit = 256
	g := startProc(t, schema, "gw-fd", pc)
	keepAlives(t, g.addr, 300, 2*time.Second)
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, resp, err := dial(ctx, g.addr, store.DeviceID(0), 0, 1, true)
	if err != nil {
		t.Fatalf("valid handshake after 300 idle connections: %d %v after %v", status(resp), err, time.Since(began))
	}
	c.ws.CloseNow()
	t.Logf("handshake took %v; idle evicted %v, open %v of %v", time.Since(began),
		g.metric(t, "gateway_idle_evicted_total"), g.metric(t, "gateway_tcp_connections"), g.metric(t, "gateway_tcp_connections_max"))
}

// TestDescriptorExhaustionIsLoud: with the cap set above the descriptor
// limit, accepts fail with EMFILE; the gateway says so at warn level and in
// /metrics, and frees descriptors by closing idle connections.
func TestDescriptorExhaustionIsLoud(t *testing.T) {
	_, schema := setup(t, 1)
	pc := shortLease
	pc.fdLimit = 128
	pc.extra = []string{"--max-conns", "100000"}
	g := startProc(t, schema, "gw-emfile", pc)
	keepAlives(t, g.addr, 200, 2*time.Second)
	waitFor(t, 3*time.Second, "accept_failed warning", func() bool {
		for _, e := range g.logs.events(logline.AcceptFailed) {
			if e["level"] == "WARN" {
				return true
			}
		}
		return false
	})
	if n := g.metric(t, "gateway_descriptors_exhausted_total"); n == 0 {
		t.Errorf("gateway_descriptors_exhausted_total = 0")
	}
}

// headOfSize sends GET /healthz with a padding header that makes the
// request line and headers exactly size bytes, final blank line included,
// and returns the status.
func headOfSize(t testing.TB, addr string, size int) int {
	t.Helper()
	const prefix, pad = "GET /healthz HTTP/1.1\r\nHost: x\r\n", "X-Pad: "
	fill := size - len(prefix) - len(pad) - len("\r\n\r\n")
	if fill < 0 {
		t.Fatalf("head of %d bytes is too small", size)
	}
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	head := prefix + pad + strings.Repeat("a", fill) + "\r\n\r\n"
	if _, err := io.WriteString(nc, head); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil {
		t.Fatalf("head of %d bytes: %v", size, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestRequestHeadLimit: a request's line and headers may take 16 KiB, as
// documented, and not more (net/http allows MaxHeaderBytes plus 4 KiB).
func TestRequestHeadLimit(t *testing.T) {
	s, _ := setup(t, 0)
	p := startInproc(t, testConfig("gw-head"), depsOf(t, s))
	for _, c := range []struct {
		size, status int
	}{{1 << 10, 200}, {16<<10 - 1, 200}, {16 << 10, 200}, {16<<10 + 1, 431}, {20_000, 431}} {
		if got := headOfSize(t, p.addr, c.size); got != c.status {
			t.Errorf("head of %d bytes: status %d, want %d", c.size, got, c.status)
		}
	}
}
