package storm

import (
	"math"
	"slices"
	"strconv"
	"time"

	"stormsim/gateway/client"
	"stormsim/sim"
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
	Failed   int64            `json:"failed"`    // no HTTP answer: refused, reset, timeout
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

// Quantiles are the simulator's: nearest-rank quantiles (the ceil(q*n)-th
// smallest value) in milliseconds, all zero without values. Sharing the type
// keeps real and simulated connect times directly comparable.
type Quantiles = sim.Quantiles

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
}

// Summarize measures the phase that began at from: events before from only
// establish who was connected then. events may come in any order; t0 is the
// record's origin (for StartMs); window must be > 0.
func Summarize(label string, events []client.Event, t0, from time.Time, clients int, window time.Duration) Summary {
	evs := slices.Clone(events)
	slices.SortStableFunc(evs, func(a, b client.Event) int { return a.Time.Compare(b.Time) })
	s := Summary{Label: label, Clients: clients, StartMs: ms(from.Sub(t0)), WindowMs: ms(window),
		ByStatus: map[string]int64{}, Closes: map[string]int64{}, StopErrors: map[string]int64{},
		FirstDropMs: -1, ConvergenceMs: -1, SyncedMs: -1}
	w := windows{window: window}

	// Who holds a connection at the origin.
	connected := make([]bool, clients)
	first := len(evs)
	for i, ev := range evs {
		if !ev.Time.Before(from) {
			first = i
			break
		}
		if ev.Client >= 0 && ev.Client < clients {
			switch ev.Kind {
			case client.EventConnected:
				connected[ev.Client] = true
			case client.EventClosed:
				connected[ev.Client] = false
			}
		}
	}
	up := 0
	for _, c := range connected {
		if c {
			up++
		}
	}
	upAtOrigin := up

	reconnected := make([]bool, clients)
	syncedAtHead := map[int]bool{} // per client: its last sync in the phase
	var connects, handshakes []float64
	type change struct {
		at time.Duration
		up bool
	}
	var changes []change // connection count steps, for the connected fraction
	for _, ev := range evs[first:] {
		at := ev.Time.Sub(from)
		known := ev.Client >= 0 && ev.Client < clients
		switch ev.Kind {
		case client.EventAttempt:
			if ev.Sent.Before(from) {
				continue // sent before the phase, answered in it
			}
			mid := ev.Sent.Sub(from) + ev.Answered.Sub(ev.Sent)/2
			s.Attempts++
			s.ByStatus[strconv.Itoa(ev.Status)]++
			w.add(&w.attempts, mid)
			switch ev.Status {
			case 101:
				s.Accepted++
				w.add(&w.accepts, mid)
			case 0:
				s.Failed++
				w.add(&w.failed, mid)
			default:
				s.Rejected++
				w.add(&w.rejects, mid)
			}
			if ev.Status == 429 {
				s.Client429++
			}
			if ev.Status != 0 {
				handshakes = append(handshakes, ms(ev.Answered.Sub(ev.Sent)))
			}
		case client.EventConnected:
			if !known {
				continue
			}
			if !connected[ev.Client] {
				connected[ev.Client] = true
				changes = append(changes, change{at, true})
			}
			if !reconnected[ev.Client] {
				reconnected[ev.Client] = true
				connects = append(connects, ms(at))
				s.ConvergenceMs = max(s.ConvergenceMs, ms(at))
				w.add(&w.connects, at)
			}
		case client.EventClosed:
			s.Closes[strconv.Itoa(ev.CloseCode)]++
			if s.FirstDropMs < 0 {
				s.FirstDropMs = ms(at)
			}
			if known && connected[ev.Client] {
				connected[ev.Client] = false
				changes = append(changes, change{at, false})
			}
		case client.EventGoaway:
			s.Goaways++
		case client.EventReplaced:
			s.Replaced++
		case client.EventStopped:
			s.Stopped++
			if ev.Err != nil {
				s.StopErrors[ev.Err.Error()]++
			}
		case client.EventSynced:
			s.SyncedMs = max(s.SyncedMs, ms(at))
			syncedAtHead[ev.Client] = atHead(ev)
		}
	}
	s.Reconnected = len(connects)
	s.AllReconnected = clients > 0 && s.Reconnected == clients
	for _, ok := range syncedAtHead {
		if ok {
			s.AtHead++
		}
	}
	s.ConnectMs = quantiles(connects)
	s.HandshakeMs = quantiles(handshakes)

	n := max(len(w.attempts), len(w.connects))
	s.Series = Series{Attempts: pad(w.attempts, n), Accepts: pad(w.accepts, n), Rejects: pad(w.rejects, n),
		Failed: pad(w.failed, n), ConnectedFraction: make([]float64, n)}
	up, k := upAtOrigin, 0
	for i := range n {
		end := time.Duration(i+1) * window
		for ; k < len(changes) && changes[k].at < end; k++ {
			if changes[k].up {
				up++
			} else {
				up--
			}
		}
		if clients > 0 {
			s.Series.ConnectedFraction[i] = float64(up) / float64(clients)
		}
	}
	for i, a := range s.Series.Attempts {
		s.PeakAttemptsPerWindow = max(s.PeakAttemptsPerWindow, a)
		s.PeakAcceptsPerWindow = max(s.PeakAcceptsPerWindow, s.Series.Accepts[i])
		if s.FirstWindowAttempts == 0 {
			s.FirstWindowAttempts = a
		}
	}
	return s
}

// windows counts events per window from the phase origin.
type windows struct {
	window                                       time.Duration
	attempts, accepts, rejects, failed, connects []int64
}

func (w *windows) add(series *[]int64, at time.Duration) {
	i := int(at / w.window)
	for len(*series) <= i {
		*series = append(*series, 0)
	}
	(*series)[i]++
}

// pad returns s extended with zeros to length n.
func pad(s []int64, n int) []int64 {
	out := make([]int64, n)
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

// quantiles returns nearest-rank quantiles of values (ms).
func quantiles(values []float64) Quantiles {
	if len(values) == 0 {
		return Quantiles{}
	}
	v := slices.Sorted(slices.Values(values))
	rank := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(v)))) - 1
		return v[max(i, 0)]
	}
	return Quantiles{P50: rank(0.5), P90: rank(0.9), P99: rank(0.99), Max: v[len(v)-1]}
}

// ms converts d to float milliseconds with nanosecond precision.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
