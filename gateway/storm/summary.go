package storm

import (
	"slices"
	"strconv"
	"time"

	"stormsim/gateway/client"
	"stormsim/gateway/protocol"
	"stormsim/internal/quantile"
)

// Summary is what one observed phase of a storm did, measured on the
// clients. Times are milliseconds since the phase began (the trigger), so
// they line up with the simulator's t = 0 at the failure; StartMs places
// that origin on the NDJSON record's timeline.
//
// An attempt is counted in the window of (sent + answered) / 2, the
// client's estimate of when the gateway saw it: exact when the request and
// the answer take equally long, as in the simulator's rtt/2 model.
type Summary struct {
	Label    string  `json:"label"`
	Clients  int     `json:"clients"`
	StartMs  float64 `json:"start_ms"`  // phase origin, ms since the record's t0
	WindowMs float64 `json:"window_ms"` // series bucket length

	Attempts int64            `json:"attempts"`  // handshakes sent in the phase
	Accepted int64            `json:"accepted"`  // answered 101
	Rejected int64            `json:"rejected"`  // answered with another HTTP status
	Failed   int64            `json:"failed"`    // no HTTP answer (in time): refused, reset, timed out
	TimedOut int64            `json:"timed_out"` // of those, abandoned at the handshake timeout
	ByStatus map[string]int64 `json:"by_status"` // attempts per status ("0" = no answer)
	// Client429 is the client-side count of 429 answers, to compare with
	// the gateway's rejected{reason="429"} counter.
	Client429 int64 `json:"client_429"`

	Goaways    int64            `json:"goaways"`     // goaway frames received
	Closes     map[string]int64 `json:"closes"`      // connections ended, per close code ("-1" = no close frame)
	Replaced   int              `json:"replaced"`    // clients closed with 4001
	Stopped    int              `json:"stopped"`     // clients whose Run ended in the phase
	StopErrors map[string]int64 `json:"stop_errors"` // those clients per error text

	Reconnected    int     `json:"reconnected"`     // clients that got a hello in the phase
	AllReconnected bool    `json:"all_reconnected"` // every client did
	FirstDropMs    float64 `json:"first_drop_ms"`   // first connection end noticed; -1 if none
	ConvergenceMs  float64 `json:"convergence_ms"`  // last first-hello of a client; -1 if none
	SyncedMs       float64 `json:"synced_ms"`       // last sync completed; -1 if none
	AtHead         int     `json:"at_head"`         // clients whose last sync left every cursor at its head

	PeakAttemptsPerWindow int64 `json:"peak_attempts_per_window"`
	PeakAcceptsPerWindow  int64 `json:"peak_accepts_per_window"`
	FirstWindowAttempts   int64 `json:"first_window_attempts"` // attempts in the window of the first attempt

	ConnectMs   Quantiles `json:"connect_ms"`   // per client: its first hello in the phase
	HandshakeMs Quantiles `json:"handshake_ms"` // answered - sent, over attempts with an HTTP answer
	Series      Series    `json:"series"`
}

// Quantiles are nearest-rank quantiles (the ceil(q*n)-th smallest value) in
// milliseconds, all zero without values: the shape and the rule of the
// simulator's sim.Quantiles, so real and simulated connect times compare
// field by field.
type Quantiles struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// Series holds per-window values; entry i covers [i*window, (i+1)*window)
// from the phase origin, up to the last window with an attempt or a connect.
type Series struct {
	Attempts []int64 `json:"attempts"` // = accepts + rejects + failed
	Accepts  []int64 `json:"accepts"`
	Rejects  []int64 `json:"rejects"`
	Failed   []int64 `json:"failed"`
	// ConnectedFraction is the fraction of clients holding a connection
	// (hello received, not yet closed) at the end of the window.
	ConnectedFraction []float64 `json:"connected_fraction"`
	// AcceptHandshakeMaxMs is, per window, the longest handshake (answered
	// - sent, ms) of the accepts placed in it, 0 without accepts: each of
	// them was decided within half of it of the window, which bounds where
	// a window's accepts were admitted. Absent in summaries written before
	// it was kept.
	AcceptHandshakeMaxMs []float64 `json:"accept_handshake_max_ms,omitempty"`
}

// Attempt statuses the summary tells apart (HTTP statuses, and 0 for an
// attempt without an answer in time).
const (
	statusNoAnswer = 0
	statusAccepted = protocol.StatusSwitchingProtocols
	status429      = protocol.StatusTooManyRequests
)

// Summarize measures the phase that began at from: events before from only
// establish who was connected then. events may come in any order; t0 is the
// record's origin (for StartMs); window must be > 0.
func Summarize(label string, events []client.Event, t0, from time.Time, clients int, window time.Duration) Summary {
	evs := slices.Clone(events)
	slices.SortStableFunc(evs, func(a, b client.Event) int { return a.Time.Compare(b.Time) })
	first, _ := slices.BinarySearchFunc(evs, from, func(e client.Event, t time.Time) int { return e.Time.Compare(t) })
	p := newPhase(label, clients, t0, from, window, evs[:first])
	for _, ev := range evs[first:] {
		p.add(ev)
	}
	return p.summary()
}

// Before returns the events that happened before end: attempts sent
// before it (whenever answered), every other event by its time. It is what
// a phase cut at a horizon saw, as the simulator counts nothing sent at or
// after its horizon.
func Before(events []client.Event, end time.Time) []client.Event {
	var out []client.Event
	for _, ev := range events {
		at := ev.Time
		if ev.Kind == client.EventAttempt {
			at = ev.Sent
		}
		if at.Before(end) {
			out = append(out, ev)
		}
	}
	return out
}

// phase accumulates one phase's events into its Summary.
type phase struct {
	s           Summary
	from        time.Time
	window      time.Duration
	w           windows
	connected   []bool // per client, now
	upAtOrigin  int
	reconnected []bool         // per client: got a hello in the phase
	atHead      map[int]bool   // per client: its last sync in the phase left it at head
	connects    []float64      // per client, its first hello in the phase, ms
	handshakes  []float64      // answered - sent of attempts with an answer, ms
	changes     []connectivity // steps of the connection count, for the connected fraction
}

// connectivity is one client connecting (up) or losing its connection.
type connectivity struct {
	at time.Duration
	up bool
}

// newPhase starts a phase whose earlier events are before: they only say
// who held a connection at the origin.
func newPhase(label string, clients int, t0, from time.Time, window time.Duration, before []client.Event) *phase {
	p := &phase{from: from, window: window, w: windows{window: window},
		connected: make([]bool, clients), reconnected: make([]bool, clients), atHead: map[int]bool{},
		s: Summary{Label: label, Clients: clients, StartMs: ms(from.Sub(t0)), WindowMs: ms(window),
			ByStatus: map[string]int64{}, Closes: map[string]int64{}, StopErrors: map[string]int64{},
			FirstDropMs: -1, ConvergenceMs: -1, SyncedMs: -1}}
	for _, ev := range before {
		if p.known(ev) {
			switch ev.Kind {
			case client.EventConnected:
				p.connected[ev.Client] = true
			case client.EventClosed:
				p.connected[ev.Client] = false
			}
		}
	}
	for _, c := range p.connected {
		if c {
			p.upAtOrigin++
		}
	}
	return p
}

func (p *phase) known(ev client.Event) bool { return ev.Client >= 0 && ev.Client < len(p.connected) }

// add accounts for one event of the phase.
func (p *phase) add(ev client.Event) {
	at := ev.Time.Sub(p.from)
	switch ev.Kind {
	case client.EventAttempt:
		p.attempt(ev)
	case client.EventConnected:
		p.connectedAt(ev, at)
	case client.EventClosed:
		p.s.Closes[strconv.Itoa(ev.CloseCode)]++
		if p.s.FirstDropMs < 0 {
			p.s.FirstDropMs = ms(at)
		}
		if p.known(ev) && p.connected[ev.Client] {
			p.connected[ev.Client] = false
			p.changes = append(p.changes, connectivity{at, false})
		}
	case client.EventGoaway:
		p.s.Goaways++
	case client.EventReplaced:
		p.s.Replaced++
	case client.EventStopped:
		p.s.Stopped++
		if ev.Err != nil {
			p.s.StopErrors[ev.Err.Error()]++
		}
	case client.EventSynced:
		p.s.SyncedMs = max(p.s.SyncedMs, ms(at))
		p.atHead[ev.Client] = atHead(ev)
	}
}

// attempt counts a handshake sent in the phase in the window of the
// midpoint of its sending and its answer.
func (p *phase) attempt(ev client.Event) {
	if ev.Sent.Before(p.from) {
		return // sent before the phase, answered in it
	}
	mid := ev.Sent.Sub(p.from) + ev.Answered.Sub(ev.Sent)/2
	p.s.Attempts++
	p.s.ByStatus[strconv.Itoa(ev.Status)]++
	p.w.add(&p.w.attempts, mid)
	switch ev.Status {
	case statusAccepted:
		p.s.Accepted++
		p.w.add(&p.w.accepts, mid)
		p.w.longest(mid, ms(ev.Answered.Sub(ev.Sent)))
	case statusNoAnswer:
		p.s.Failed++
		p.w.add(&p.w.failed, mid)
	default:
		p.s.Rejected++
		p.w.add(&p.w.rejects, mid)
	}
	if ev.Status == status429 {
		p.s.Client429++
	}
	if ev.TimedOut {
		p.s.TimedOut++
	}
	if ev.Status != statusNoAnswer {
		p.handshakes = append(p.handshakes, ms(ev.Answered.Sub(ev.Sent)))
	}
}

// connectedAt counts a hello: a connection, and the client's first in the
// phase.
func (p *phase) connectedAt(ev client.Event, at time.Duration) {
	if !p.known(ev) {
		return
	}
	if !p.connected[ev.Client] {
		p.connected[ev.Client] = true
		p.changes = append(p.changes, connectivity{at, true})
	}
	if !p.reconnected[ev.Client] {
		p.reconnected[ev.Client] = true
		p.connects = append(p.connects, ms(at))
		p.s.ConvergenceMs = max(p.s.ConvergenceMs, ms(at))
		p.w.add(&p.w.connects, at)
	}
}

// summary finishes the Summary: counts, quantiles, series and peaks.
func (p *phase) summary() Summary {
	s := p.s
	s.Reconnected = len(p.connects)
	s.AllReconnected = len(p.connected) > 0 && s.Reconnected == len(p.connected)
	for _, ok := range p.atHead {
		if ok {
			s.AtHead++
		}
	}
	s.ConnectMs = quantiles(p.connects)
	s.HandshakeMs = quantiles(p.handshakes)
	s.Series = p.series()
	for i, a := range s.Series.Attempts {
		s.PeakAttemptsPerWindow = max(s.PeakAttemptsPerWindow, a)
		s.PeakAcceptsPerWindow = max(s.PeakAcceptsPerWindow, s.Series.Accepts[i])
		if s.FirstWindowAttempts == 0 {
			s.FirstWindowAttempts = a
		}
	}
	return s
}

// series pads the per-window counts to a common length and samples the
// connected fraction at the end of every window.
func (p *phase) series() Series {
	w := p.w
	n := max(len(w.attempts), len(w.connects))
	out := Series{Attempts: pad(w.attempts, n), Accepts: pad(w.accepts, n), Rejects: pad(w.rejects, n),
		Failed: pad(w.failed, n), ConnectedFraction: make([]float64, n), AcceptHandshakeMaxMs: pad(w.acceptHandshakeMax, n)}
	clients := len(p.connected)
	up, k := p.upAtOrigin, 0
	for i := range n {
		end := time.Duration(i+1) * p.window
		for ; k < len(p.changes) && p.changes[k].at < end; k++ {
			if p.changes[k].up {
				up++
			} else {
				up--
			}
		}
		if clients > 0 {
			out.ConnectedFraction[i] = float64(up) / float64(clients)
		}
	}
	return out
}

// windows counts events per window from the phase origin.
type windows struct {
	window                                       time.Duration
	attempts, accepts, rejects, failed, connects []int64
	acceptHandshakeMax                           []float64 // per window, ms (Series.AcceptHandshakeMaxMs)
}

func (w *windows) add(series *[]int64, at time.Duration) {
	i := int(at / w.window)
	grow(series, i)
	(*series)[i]++
}

// longest keeps handshakeMs if it is the longest of the accepts placed at
// at's window.
func (w *windows) longest(at time.Duration, handshakeMs float64) {
	i := int(at / w.window)
	grow(&w.acceptHandshakeMax, i)
	w.acceptHandshakeMax[i] = max(w.acceptHandshakeMax[i], handshakeMs)
}

// grow extends *series with zeros until it holds index i.
func grow[T int64 | float64](series *[]T, i int) {
	for len(*series) <= i {
		*series = append(*series, 0)
	}
}

// pad returns s extended with zeros to length n.
func pad[T int64 | float64](s []T, n int) []T {
	out := make([]T, n)
	copy(out, s)
	return out
}

// atHead reports whether a sync left every conversation's cursor at its
// head; a conversation whose head never arrived is not.
func atHead(ev client.Event) bool {
	for conv, cursor := range ev.Cursors {
		if head, ok := ev.Heads[conv]; !ok || cursor < head {
			return false
		}
	}
	return true
}

// quantiles returns the nearest-rank quantiles of values (ms).
func quantiles(values []float64) Quantiles {
	if len(values) == 0 {
		return Quantiles{}
	}
	v := slices.Sorted(slices.Values(values))
	return Quantiles{P50: quantile.NearestRank(v, 0.5), P90: quantile.NearestRank(v, 0.9),
		P99: quantile.NearestRank(v, 0.99), Max: v[len(v)-1]}
}

// ms converts d to float milliseconds with nanosecond precision.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
