package storm

import (
	"bufio"
	"encoding/json"
	"io"
	"maps"
	"sync"
	"time"

	"stormsim/gateway/client"
)

// Line is one NDJSON record: a client event, or a storm marker (client -1).
// Times are milliseconds since the storm's t0, read on the monotonic clock.
type Line struct {
	TMs    float64 `json:"t_ms"`
	Event  string  `json:"event"` // a client.EventKind, or "header", "phase", "settled"
	Client int     `json:"client"`
	Device string  `json:"device,omitempty"`

	Round         int    `json:"round,omitempty"`
	RoundKind     string `json:"round_kind,omitempty"`
	Attempt       int    `json:"attempt,omitempty"`
	DeviceAttempt int64  `json:"device_attempt,omitempty"`
	Gateway       string `json:"gateway,omitempty"`

	SentMs       *float64 `json:"sent_ms,omitempty"`     // attempt
	AnsweredMs   *float64 `json:"answered_ms,omitempty"` // attempt
	Status       *int     `json:"status,omitempty"`      // attempt: 101, 429, ..., 0 = no HTTP answer
	RetryAfterMs *float64 `json:"retry_after_ms,omitempty"`
	WaitMs       *float64 `json:"wait_ms,omitempty"`   // round: initial wait; attempt: wait before the next
	TimedOut     bool     `json:"timed_out,omitempty"` // attempt: abandoned at the handshake timeout
	Error        string   `json:"error,omitempty"`

	CloseCode   *int   `json:"close_code,omitempty"`
	CloseReason string `json:"close_reason,omitempty"`

	GatewayID    string           `json:"gateway_id,omitempty"` // hello
	Conn         string           `json:"conn,omitempty"`
	RouteVersion int64            `json:"route_version,omitempty"`
	Cursors      map[string]int64 `json:"cursors,omitempty"` // synced
	Heads        map[string]int64 `json:"heads,omitempty"`

	Label    string   `json:"label,omitempty"`    // phase, settled
	Clients  int      `json:"clients,omitempty"`  // header
	Seed     uint64   `json:"seed,omitempty"`     // header
	Gateways []string `json:"gateways,omitempty"` // header
	WindowMs float64  `json:"window_ms,omitempty"`
}

func ptr[T any](v T) *T { return &v }

// lineOf renders ev on the timeline that starts at t0.
func lineOf(ev client.Event, t0 time.Time) Line {
	l := Line{TMs: ms(ev.Time.Sub(t0)), Event: string(ev.Kind), Client: ev.Client, Device: ev.Device,
		Round: ev.Round, RoundKind: string(ev.RoundKind), Attempt: ev.Attempt, DeviceAttempt: ev.DeviceAttempt,
		Gateway: ev.Gateway, CloseReason: ev.CloseReason}
	if ev.Err != nil {
		l.Error = ev.Err.Error()
	}
	switch ev.Kind {
	case client.EventRound:
		l.WaitMs = ptr(ms(ev.Wait))
	case client.EventAttempt:
		l.SentMs, l.AnsweredMs = ptr(ms(ev.Sent.Sub(t0))), ptr(ms(ev.Answered.Sub(t0)))
		l.Status, l.RetryAfterMs, l.WaitMs = ptr(ev.Status), ptr(ms(ev.RetryAfter)), ptr(ms(ev.Wait))
		l.TimedOut = ev.TimedOut
	case client.EventConnected:
		l.GatewayID, l.Conn, l.RouteVersion = ev.Hello.Gateway, ev.Hello.Conn, ev.Hello.RouteVersion
	case client.EventSynced:
		l.Cursors, l.Heads = maps.Clone(ev.Cursors), maps.Clone(ev.Heads)
	case client.EventClosed, client.EventReplaced:
		l.CloseCode = ptr(ev.CloseCode)
	}
	return l
}

// recorder keeps every event for the summaries and streams them as NDJSON.
type recorder struct {
	t0 time.Time

	mu     sync.Mutex
	events []client.Event
	out    *bufio.Writer // nil without a record writer
	enc    *json.Encoder
	err    error // first write error
}

func newRecorder(t0 time.Time, w io.Writer) *recorder {
	r := &recorder{t0: t0}
	if w != nil {
		r.out = bufio.NewWriterSize(w, 64<<10)
		r.enc = json.NewEncoder(r.out)
	}
	return r
}

// event records a client event; it runs on the client's goroutine.
func (r *recorder) event(ev client.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
	r.writeLocked(lineOf(ev, r.t0))
}

// marker records a storm-level line.
func (r *recorder) marker(l Line) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l.Client = -1
	r.writeLocked(l)
}

func (r *recorder) writeLocked(l Line) {
	if r.enc != nil && r.err == nil {
		r.err = r.enc.Encode(l)
	}
}

func (r *recorder) snapshot() []client.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]client.Event(nil), r.events...)
}

func (r *recorder) flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.out != nil && r.err == nil {
		r.err = r.out.Flush()
	}
	return r.err
}
