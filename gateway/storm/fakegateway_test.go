package storm

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"stormsim/gateway/protocol"
	"stormsim/models"
)

// fakeGateway admits through the models token bucket (as the real gateway
// does), serves one conversation of three events, and can be killed
// (connections dropped, then refused) or drained (503, goaway, 1001).
type fakeGateway struct {
	t     *testing.T
	id    string
	srv   *httptest.Server
	start time.Time

	mu       sync.Mutex
	bucket   models.Admission
	conns    map[*websocket.Conn]bool
	draining bool
	dead     bool

	handshakes, tooMany, unavailable atomic.Int64
}

// convEvents is the log of conversation "room" every gateway serves.
var convEvents = []protocol.Event{{Seq: 1, Body: "a"}, {Seq: 2, Body: "b"}, {Seq: 3, Body: "c"}}

func newFakeGateway(t *testing.T, id string, admission models.AdmissionSpec) *fakeGateway {
	g := &fakeGateway{t: t, id: id, start: time.Now(), bucket: admission.New(), conns: map[*websocket.Conn]bool{}}
	g.srv = httptest.NewServer(http.HandlerFunc(g.serveHTTP))
	t.Cleanup(g.kill)
	return g
}

func (g *fakeGateway) url() string { return "ws" + strings.TrimPrefix(g.srv.URL, "http") }

func (g *fakeGateway) serveHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	dead, draining := g.dead, g.draining
	admitted := !dead && !draining && g.bucket.Admit(time.Since(g.start))
	g.mu.Unlock()
	if dead { // a killed process: the connection just dies
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
		return
	}
	g.handshakes.Add(1)
	w.Header().Set(protocol.HeaderGateway, g.id)
	switch {
	case draining:
		g.unavailable.Add(1)
		w.Header().Set(protocol.HeaderRetryAfter, "1")
		w.WriteHeader(protocol.StatusServiceUnavailable)
		return
	case !admitted:
		g.tooMany.Add(1)
		w.Header().Set(protocol.HeaderRetryAfter, "1")
		w.WriteHeader(protocol.StatusTooManyRequests)
		return
	}
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer conn.CloseNow()
	g.mu.Lock()
	g.conns[conn] = true
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		delete(g.conns, conn)
		g.mu.Unlock()
	}()
	ctx := r.Context()
	b, _ := json.Marshal(protocol.Hello{T: protocol.TypeHello, Gateway: g.id, Conn: g.id + "-" + strconv.FormatInt(g.handshakes.Load(), 10), RouteVersion: 1})
	if conn.Write(ctx, websocket.MessageText, b) != nil {
		return
	}
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			return
		}
		var req protocol.Sync
		json.Unmarshal(data, &req)
		var page []protocol.Event
		for _, e := range convEvents {
			if e.Seq > req.After {
				page = append(page, e)
			}
		}
		b, _ := json.Marshal(protocol.Events{T: protocol.TypeEvents, Conv: req.Conv, Events: page, Head: int64(len(convEvents))})
		if conn.Write(ctx, websocket.MessageText, b) != nil {
			return
		}
	}
}

func (g *fakeGateway) live() []*websocket.Conn {
	var out []*websocket.Conn
	for c := range g.conns {
		out = append(out, c)
	}
	return out
}

// kill drops every connection without a close frame and refuses from then on.
func (g *fakeGateway) kill() {
	g.mu.Lock()
	if g.dead {
		g.mu.Unlock()
		return
	}
	g.dead = true
	conns := g.live()
	g.mu.Unlock()
	for _, c := range conns {
		c.CloseNow()
	}
	g.srv.Close()
}

// drain answers 503 from now on and sends goaway then 1001 to everyone.
func (g *fakeGateway) drain() {
	g.mu.Lock()
	g.draining = true
	conns := g.live()
	g.mu.Unlock()
	goaway, _ := json.Marshal(protocol.Goaway{T: protocol.TypeGoaway, Reason: "drain"})
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() {
			ctx := g.t.Context()
			c.Write(ctx, websocket.MessageText, goaway)
			c.Close(protocol.CloseGoingAway, "drain")
		})
	}
	wg.Wait()
}
