package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"stormsim/gateway/logline"
	"stormsim/gateway/protocol"
	"stormsim/gateway/store"
)

// TestBadFrames: each protocol violation after the upgrade gets its close
// code, the route is released, and the gateway keeps serving.
func TestBadFrames(t *testing.T) {
	s, _ := setup(t, 1)
	cfg := testConfig("gw-frames")
	cfg.Idle = 400 * time.Millisecond
	p := startInproc(t, cfg, depsOf(t, s))
	ctx := context.Background()
	cases := []struct {
		name      string
		typ       websocket.MessageType
		frame     string
		code      websocket.StatusCode
		wantError bool // an error frame precedes the close
	}{
		{"frame over MaxFrameBytes", websocket.MessageText, `{"t":"sync","conv":"` + strings.Repeat("x", protocol.MaxFrameBytes) + `"}`, protocol.CloseTooBig, false},
		{"not JSON", websocket.MessageText, `hello?`, protocol.ClosePolicy, true},
		{"JSON but not an object", websocket.MessageText, `[1,2]`, protocol.ClosePolicy, true},
		{"unknown type", websocket.MessageText, `{"t":"subscribe"}`, protocol.ClosePolicy, true},
		{"binary frame", websocket.MessageBinary, `{"t":"sync","conv":"c","after":0}`, protocol.ClosePolicy, true},
		{"sync without conv", websocket.MessageText, `{"t":"sync","after":0}`, protocol.ClosePolicy, true},
		{"sync with negative cursor", websocket.MessageText, `{"t":"sync","conv":"c","after":-1}`, protocol.ClosePolicy, true},
		{"text not UTF-8", websocket.MessageText, "{\"t\":\"sync\",\"conv\":\"\xff\xfe\",\"after\":0}", protocol.CloseNotUTF8, false},
	}
	attempt := int64(0)
	for _, c := range cases {
		attempt++
		cl, _, err := dial(ctx, p.addr, "u-000-d1", 0, attempt, true)
		if err != nil {
			t.Fatalf("%s: dial: %v", c.name, err)
		}
		if err := cl.ws.Write(ctx, c.typ, []byte(c.frame)); err != nil {
			t.Fatalf("%s: write: %v", c.name, err)
		}
		if code := cl.closeCode(t, 3*time.Second); code != c.code {
			t.Errorf("%s: closed with %v, want %v", c.name, code, c.code)
		}
		var e protocol.Error
		gotError := false
		select {
		case f := <-cl.frames:
			gotError = json.Unmarshal(f, &e) == nil && e.T == protocol.TypeError && e.Message != ""
		default:
		}
		if gotError != c.wantError {
			t.Errorf("%s: error frame %v (%+v), want %v", c.name, gotError, e, c.wantError)
		}
		waitFor(t, 2*time.Second, c.name+": route released", func() bool { return routeOf(t, s, "u-000-d1") == store.Owner{} })
	}

	// A client that never reads answers no ping: the gateway closes it as
	// idle (4002) after cfg.Idle and releases its route. (The client itself
	// may never see the code: its unread pings make it answer into a socket
	// the gateway has already dropped.)
	attempt++
	closedBefore := len(p.logs.events(logline.Closed))
	if _, _, err := dial(ctx, p.addr, "u-000-d1", 0, attempt, false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 3*time.Second, "mute client dropped", func() bool { return len(p.logs.events(logline.Closed)) > closedBefore })
	if o := routeOf(t, s, "u-000-d1"); o != (store.Owner{}) {
		t.Errorf("mute client's route kept: %+v", o)
	}
	if last := p.logs.events(logline.Closed)[closedBefore]; last.num(logline.KeyCode) != float64(protocol.CloseIdle) || last[logline.KeyReason] != "idle" {
		t.Errorf("mute client closed as %v, want 4002 idle", last)
	}
	if _, _, err := dial(ctx, p.addr, "u-000-d1", 0, attempt+1, true); err != nil {
		t.Errorf("gateway stopped serving: %v", err)
	}
}

// TestSyncCatchesUpOnAnyGateway is V5: a device that reconnects to another
// gateway syncs from its cursor and gets every event it missed, up to head.
func TestSyncCatchesUpOnAnyGateway(t *testing.T) {
	s, _ := setup(t, 1)
	ctx := context.Background()
	gw1 := startInproc(t, testConfig("gw-sync-1"), depsOf(t, s))
	gw2 := startInproc(t, testConfig("gw-sync-2"), depsOf(t, s))
	bodies := func(from, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = "m" + string(rune('a'+(from+i)%26))
		}
		return out
	}
	if _, err := s.AppendEvents(ctx, "conv-1", bodies(0, 5)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Join(ctx, "conv-1", []string{"u-000-d1"}); err != nil {
		t.Fatal(err)
	}
	sync := func(c *client, after int64) protocol.Events {
		t.Helper()
		c.send(t, protocol.Sync{T: protocol.TypeSync, Conv: "conv-1", After: after})
		var ev protocol.Events
		if err := json.Unmarshal(c.next(t, 3*time.Second), &ev); err != nil || ev.T != protocol.TypeEvents {
			t.Fatalf("sync answer %+v %v", ev, err)
		}
		return ev
	}
	c1, _, err := dial(ctx, gw1.addr, "u-000-d1", 0, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	ev := sync(c1, 0)
	if len(ev.Events) != 5 || ev.Head != 5 || ev.Events[4].Seq != 5 {
		t.Fatalf("first sync %+v", ev)
	}
	cursor := ev.Events[len(ev.Events)-1].Seq
	c1.ws.Close(websocket.StatusNormalClosure, "")
	if _, err := s.AppendEvents(ctx, "conv-1", bodies(5, 10)); err != nil { // written while offline
		t.Fatal(err)
	}
	c2, _, err := dial(ctx, gw2.addr, "u-000-d1", 0, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	ev = sync(c2, cursor)
	if len(ev.Events) != 10 || ev.Head != 15 || ev.Events[0].Seq != 6 || ev.Events[9].Seq != 15 {
		t.Fatalf("catch-up sync %+v", ev)
	}
	if ev := sync(c2, 15); len(ev.Events) != 0 || ev.Head != 15 {
		t.Fatalf("sync at head %+v", ev)
	}
}

// TestSlowClaimIsNotIdle: a claim that waits longer than Config.Idle (here
// for the floor row's lock) does not get its connection closed as idle
// right after the hello: the idle clock starts with the connection.
func TestSlowClaimIsNotIdle(t *testing.T) {
	s, _ := setup(t, 1)
	cfg := testConfig("gw-slow-claim")
	cfg.Ping, cfg.Idle = 100*time.Millisecond, 400*time.Millisecond
	p := startInproc(t, cfg, depsOf(t, s))
	ctx := context.Background()
	if _, err := s.ClaimRoute(ctx, store.Claim{Device: "u-000-d1", Gateway: "x", Conn: "x", Attempt: 0}); err != nil {
		t.Fatal(err)
	}
	tx, err := s.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT 1 FROM route_floor WHERE device_id = 'u-000-d1' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	type result struct {
		c   *client
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, _, err := dial(ctx, p.addr, "u-000-d1", 0, 1, true)
		done <- result{c, err}
	}()
	time.Sleep(2 * cfg.Idle)
	tx.Rollback(ctx)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	select {
	case <-r.c.closed:
		t.Errorf("closed %v after its hello (%v): the claim's wait counted as idleness", time.Since(r.c.closedAt), r.c.closeErr)
	case <-time.After(cfg.Idle + 2*cfg.Ping):
	}
}

// TestSyncOnlyForMembers: a device reads only conversations it belongs to;
// any other sync, of an existing conversation or not, gets the same error
// frame and the connection stays open.
func TestSyncOnlyForMembers(t *testing.T) {
	s, _ := setup(t, 2)
	p := startInproc(t, testConfig("gw-members"), depsOf(t, s))
	ctx := context.Background()
	if _, err := s.AppendEvents(ctx, "private", []string{"secret"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Join(ctx, "private", []string{"u-000-d1"}); err != nil {
		t.Fatal(err)
	}
	member, _, err := dial(ctx, p.addr, "u-000-d1", 0, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	stranger, _, err := dial(ctx, p.addr, "u-001-d1", 0, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	member.send(t, protocol.Sync{T: protocol.TypeSync, Conv: "private", After: 0})
	var ev protocol.Events
	if err := json.Unmarshal(member.next(t, 3*time.Second), &ev); err != nil || len(ev.Events) != 1 || ev.Head != 1 {
		t.Errorf("member's sync: %+v %v", ev, err)
	}
	for _, conv := range []string{"private", "nonexistent"} {
		stranger.send(t, protocol.Sync{T: protocol.TypeSync, Conv: conv, After: 0})
		var e protocol.Error
		if err := json.Unmarshal(stranger.next(t, 3*time.Second), &e); err != nil || e.T != protocol.TypeError || e.Message != "not a member of this conversation" {
			t.Errorf("stranger's sync of %s: %+v %v, want the not-a-member error", conv, e, err)
		}
	}
	if !stranger.isOpen() {
		t.Error("stranger's connection closed")
	}
}

// TestSyncRateLimit: a client that sends many syncs at once is answered at
// Config.SyncRate after its burst: within any span T from the first answer,
// at most SyncBurst + SyncRate*T answers (plus one for timing).
func TestSyncRateLimit(t *testing.T) {
	s, _ := setup(t, 1)
	cfg := testConfig("gw-sync-rate")
	cfg.SyncRate, cfg.SyncBurst = 20, 5
	p := startInproc(t, cfg, depsOf(t, s))
	ctx := context.Background()
	if _, err := s.Join(ctx, "c", []string{"u-000-d1"}); err != nil {
		t.Fatal(err)
	}
	c, _, err := dial(ctx, p.addr, "u-000-d1", 0, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	const n = 25
	began := time.Now()
	for range n {
		c.send(t, protocol.Sync{T: protocol.TypeSync, Conv: "c", After: 0})
	}
	var at []time.Duration
	for range n {
		c.next(t, 5*time.Second)
		at = append(at, time.Since(began))
	}
	// (n - burst) answers need (n - burst)/rate seconds of refill.
	minSpan := time.Duration(float64(n-cfg.SyncBurst) / cfg.SyncRate * float64(time.Second))
	if at[n-1] < minSpan-50*time.Millisecond {
		t.Errorf("%d syncs answered in %v, want at least %v at %v/s after a burst of %d", n, at[n-1], minSpan, cfg.SyncRate, cfg.SyncBurst)
	}
	if got := p.g.Metrics().SyncsThrottled.Load(); got == 0 {
		t.Error("no sync counted as throttled")
	}
}

// TestSyncAnswersAreBounded: clients that sync a 3 MB conversation and never
// read get pages of at most about 256 KiB, so the gateway's heap stays small
// however many of them there are.
func TestSyncAnswersAreBounded(t *testing.T) {
	const clients = 40
	s, _ := setup(t, clients)
	p := startInproc(t, testConfig("gw-sync-mem"), depsOf(t, s))
	ctx := context.Background()
	bodies := make([]string, 1000)
	for i := range bodies {
		bodies[i] = strings.Repeat("x", 3000)
	}
	if _, err := s.AppendEvents(ctx, "big", bodies); err != nil {
		t.Fatal(err)
	}
	devices := make([]string, clients)
	for i := range devices {
		devices[i] = store.DeviceID(i)
	}
	if _, err := s.Join(ctx, "big", devices); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	peak := base.HeapInuse
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
		}
	}()
	for _, dev := range devices {
		c, _, err := dial(ctx, p.addr, dev, 0, 1, false) // never reads
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			b, _ := json.Marshal(protocol.Sync{T: protocol.TypeSync, Conv: "big", After: 0})
			c.ws.Write(ctx, websocket.MessageText, b)
		}
	}
	time.Sleep(1500 * time.Millisecond)
	close(stop)
	<-sampled
	grew := int64(peak) - int64(base.HeapInuse)
	t.Logf("heap in use grew by %.1f MB at its peak", float64(grew)/(1<<20))
	if grew > 80<<20 {
		t.Errorf("heap grew by %.1f MB for %d non-reading clients of a 3 MB conversation, want under 80 MB", float64(grew)/(1<<20), clients)
	}
}

// TestUnmaskedFrameIsAProtocolError: a client frame without a mask (RFC
// 6455 5.1) is answered with a 1002 close frame, not a bare TCP close, and
// the route is released.
func TestUnmaskedFrameIsAProtocolError(t *testing.T) {
	s, _ := setup(t, 1)
	p := startInproc(t, testConfig("gw-unmasked"), depsOf(t, s))
	nc, err := net.DialTimeout("tcp", p.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	h := withHeader(wsHeaders(), protocol.HeaderAuthorization, "Bearer u-000-d1:"+store.DeviceToken("u-000-d1"))
	var req bytes.Buffer
	fmt.Fprintf(&req, "GET %s?attempt=1 HTTP/1.1\r\nHost: %s\r\n", protocol.Path, p.addr)
	for k, vs := range h {
		fmt.Fprintf(&req, "%s: %s\r\n", k, vs[0])
	}
	req.WriteString("\r\n")
	if _, err := nc.Write(req.Bytes()); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("handshake: %v %v", resp, err)
	}
	// An unmasked text frame "hi": FIN + text, length 2, no mask bit.
	if _, err := nc.Write([]byte{0x81, 0x02, 'h', 'i'}); err != nil {
		t.Fatal(err)
	}
	code := -1
	for code < 0 {
		var head [2]byte
		if _, err := io.ReadFull(br, head[:]); err != nil {
			t.Fatalf("no close frame before the connection ended: %v", err)
		}
		payload := make([]byte, head[1]&0x7f) // server frames are unmasked and short here
		if _, err := io.ReadFull(br, payload); err != nil {
			t.Fatal(err)
		}
		if head[0]&0x0f == 0x8 && len(payload) >= 2 {
			code = int(payload[0])<<8 | int(payload[1])
		}
	}
	if code != int(protocol.CloseProtocolError) {
		t.Errorf("closed with %d, want %d", code, protocol.CloseProtocolError)
	}
	waitFor(t, 3*time.Second, "route released", func() bool { return routeOf(t, s, "u-000-d1") == store.Owner{} })
}
