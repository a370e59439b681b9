package client

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"stormsim/gateway/protocol"
)

// after says what the fake gateway does once an accepted client has synced.
type after int

const (
	hold    after = iota // keep reading until the client or the test ends it
	goaway               // goaway frame, then close 1001
	closeAs              // close with step.code
	reset                // drop the TCP connection without a close frame
	mute                 // stop reading, so pings go unanswered
)

// step is the fake gateway's answer to one handshake.
type step struct {
	status     int    // 101 accepts; anything else is written as the HTTP status
	retryAfter string // Retry-After header of a refusal
	then       after  // after an accept
	code       websocket.StatusCode
	delay      time.Duration // before the answer
	helloDelay time.Duration // after a 101, before the hello
	hintMs     *int64        // the goaway's reconnect_after_ms
}

// request is what the fake gateway saw of one handshake.
type request struct {
	attempt, epoch int64
	auth           string
}

// fakeGateway speaks the protocol surface from a script of steps: one per
// handshake, 401 once the script is exhausted so a runaway client stops.
type fakeGateway struct {
	t        *testing.T
	id       string
	srv      *httptest.Server
	pageSize int // events per sync answer
	// syncErrors is how many sync requests, from the first, get an error
	// frame ("sync failed, retry") instead of events.
	syncErrors int
	log        map[string][]protocol.Event // per conversation, seq 1..n

	mu    sync.Mutex
	steps []step
	reqs  []request
	syncs []protocol.Sync
	// leftEarly holds, per step index, how long after the request arrived
	// the client closed its connection while the gateway was still delaying
	// its answer or hello.
	leftEarly map[int]time.Duration
}

func newFakeGateway(t *testing.T, steps ...step) *fakeGateway {
	g := &fakeGateway{t: t, id: "gw-test", steps: steps, pageSize: 100, log: map[string][]protocol.Event{},
		leftEarly: map[int]time.Duration{}}
	g.srv = httptest.NewServer(http.HandlerFunc(g.serveHTTP))
	t.Cleanup(func() {
		g.srv.CloseClientConnections()
		g.srv.Close()
	})
	return g
}

// url is the gateway's base URL in the ws scheme, without the path.
func (g *fakeGateway) url() string { return "ws" + strings.TrimPrefix(g.srv.URL, "http") }

func (g *fakeGateway) requests() []request {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]request(nil), g.reqs...)
}

func (g *fakeGateway) syncRequests() []protocol.Sync {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]protocol.Sync(nil), g.syncs...)
}

func (g *fakeGateway) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != protocol.Path {
		http.NotFound(w, r)
		return
	}
	attempt, _ := strconv.ParseInt(r.URL.Query().Get(protocol.QueryAttempt), 10, 64)
	epoch, _ := strconv.ParseInt(r.URL.Query().Get(protocol.QueryInstallEpoch), 10, 64)
	g.mu.Lock()
	n := len(g.reqs)
	g.reqs = append(g.reqs, request{attempt: attempt, epoch: epoch, auth: r.Header.Get(protocol.HeaderAuthorization)})
	st := step{status: http.StatusUnauthorized}
	if n < len(g.steps) {
		st = g.steps[n]
	}
	g.mu.Unlock()
	arrived := time.Now()
	left := func() {
		g.mu.Lock()
		g.leftEarly[n] = time.Since(arrived)
		g.mu.Unlock()
	}
	if st.delay > 0 {
		select {
		case <-time.After(st.delay):
		case <-r.Context().Done(): // the client closed the connection
			left()
			return
		}
	}

	w.Header().Set(protocol.HeaderGateway, g.id)
	if st.status != http.StatusSwitchingProtocols {
		if st.retryAfter != "" {
			w.Header().Set(protocol.HeaderRetryAfter, st.retryAfter)
		}
		w.WriteHeader(st.status)
		return
	}
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		g.t.Errorf("accept: %v", err)
		return
	}
	defer conn.CloseNow()
	ctx := r.Context()
	if st.helloDelay > 0 {
		read := make(chan error, 1)
		go func() { _, _, err := conn.Read(ctx); read <- err }()
		select {
		case <-time.After(st.helloDelay):
		case <-read: // the client closed the connection
			left()
			return
		}
	}
	hello, _ := json.Marshal(protocol.Hello{T: protocol.TypeHello, Gateway: g.id, Conn: "c" + strconv.Itoa(n), RouteVersion: int64(n + 1)})
	if conn.Write(ctx, websocket.MessageText, hello) != nil {
		return
	}
	if !g.answerSyncs(ctx, conn) {
		return
	}
	switch st.then {
	case hold:
		for {
			if _, _, err := conn.Read(ctx); err != nil {
				return
			}
		}
	case goaway:
		b, _ := json.Marshal(protocol.Goaway{T: protocol.TypeGoaway, Reason: "drain", ReconnectAfterMs: st.hintMs})
		conn.Write(ctx, websocket.MessageText, b)
		conn.Close(protocol.CloseGoingAway, "drain")
	case closeAs:
		conn.Close(st.code, "scripted close")
	case reset:
		conn.CloseNow()
	case mute:
		<-ctx.Done()
	}
}

// answerSyncs serves sync requests until every conversation of the log has
// been delivered up to its head, which is when the client stops asking.
func (g *fakeGateway) answerSyncs(ctx context.Context, conn *websocket.Conn) bool {
	pending, failedInARow := map[string]bool{}, map[string]int{}
	for conv := range g.log {
		pending[conv] = true
	}
	for len(pending) > 0 {
		_, data, err := conn.Read(ctx)
		if err != nil {
			return false
		}
		var req protocol.Sync
		if err := json.Unmarshal(data, &req); err != nil || req.T != protocol.TypeSync {
			g.t.Errorf("fake gateway: expected a sync, got %s", data)
			return false
		}
		g.mu.Lock()
		g.syncs = append(g.syncs, req)
		failed := len(g.syncs) <= g.syncErrors
		g.mu.Unlock()
		if failed {
			// After maxSyncRetries+1 failed answers in a row the client
			// leaves the conversation behind and stops asking.
			if failedInARow[req.Conv]++; failedInARow[req.Conv] > maxSyncRetries {
				delete(pending, req.Conv)
			}
			b, _ := json.Marshal(protocol.Error{T: protocol.TypeError, Message: "sync failed, retry"})
			if conn.Write(ctx, websocket.MessageText, b) != nil {
				return false
			}
			continue
		}
		all := g.log[req.Conv]
		page := []protocol.Event{}
		for _, e := range all {
			if e.Seq > req.After && len(page) < g.pageSize {
				page = append(page, e)
			}
		}
		head := int64(len(all))
		if len(page) == 0 || page[len(page)-1].Seq >= head {
			delete(pending, req.Conv)
		}
		b, _ := json.Marshal(protocol.Events{T: protocol.TypeEvents, Conv: req.Conv, Events: page, Head: head})
		if conn.Write(ctx, websocket.MessageText, b) != nil {
			return false
		}
	}
	return true
}

// refusedURL returns a loopback URL on which nothing listens.
func refusedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "ws://" + addr
}

// fakeClock starts at a whole second, records every sleep and advances by
// it at once.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(max(d, 0))
	return nil
}

func (c *fakeClock) waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// recorder is an Observer that keeps every event.
type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) observe(ev Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
}

func (r *recorder) of(kind EventKind) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Event
	for _, ev := range r.events {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}
