package storm

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"stormsim/gateway/client"
)

// TestSummarize checks a hand-built two-client storm against values worked
// out by hand (see the comments), with the events shuffled.
func TestSummarize(t *testing.T) {
	t0 := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	from := t0.Add(time.Second)
	at := func(ms int) time.Time { return from.Add(time.Duration(ms) * time.Millisecond) }
	attempt := func(c, sent, answered, status int) client.Event {
		return client.Event{Kind: client.EventAttempt, Client: c, Time: at(answered), Sent: at(sent), Answered: at(answered), Status: status}
	}
	synced := func(c, ms int, cursor, head int64) client.Event {
		return client.Event{Kind: client.EventSynced, Client: c, Time: at(ms), Cursors: map[string]int64{"room": cursor}, Heads: map[string]int64{"room": head}}
	}
	replaced := errors.New("replaced")
	tests := []struct {
		name   string
		events []client.Event
		want   Summary
	}{
		{
			name: "both dropped, one refused, both back",
			events: []client.Event{
				{Kind: client.EventConnected, Client: 0, Time: t0.Add(10 * time.Millisecond)}, // before the phase
				{Kind: client.EventConnected, Client: 1, Time: t0.Add(20 * time.Millisecond)},
				attempt(1, -10, 2, 101), // sent before the phase: not counted
				{Kind: client.EventClosed, Client: 0, Time: at(5), CloseCode: -1},
				{Kind: client.EventClosed, Client: 1, Time: at(7), CloseCode: -1},
				attempt(0, 50, 70, 429),   // mid 60: window 0
				attempt(1, 80, 140, 0),    // mid 110: window 1
				attempt(0, 150, 170, 101), // mid 160: window 1
				{Kind: client.EventConnected, Client: 0, Time: at(170)},
				synced(0, 175, 3, 3),
				attempt(1, 190, 230, 503), // mid 210: window 2
				attempt(1, 305, 315, 101), // mid 310: window 3
				{Kind: client.EventConnected, Client: 1, Time: at(315)},
				synced(1, 320, 2, 3), // behind its head
			},
			want: Summary{
				Label: "crash", Clients: 2, StartMs: 1000, WindowMs: 100,
				Attempts: 5, Accepted: 2, Rejected: 2, Failed: 1,
				ByStatus:  map[string]int64{"0": 1, "101": 2, "429": 1, "503": 1},
				Client429: 1,
				Closes:    map[string]int64{"-1": 2}, StopErrors: map[string]int64{},
				Reconnected: 2, AllReconnected: true, FirstDropMs: 5, ConvergenceMs: 315, SyncedMs: 320, AtHead: 1,
				PeakAttemptsPerWindow: 2, PeakAcceptsPerWindow: 1, FirstWindowAttempts: 1,
				// connects [170 315]: ranks ceil(.5*2)=1, ceil(.9*2)=2, ceil(.99*2)=2
				ConnectMs: Quantiles{P50: 170, P90: 315, P99: 315, Max: 315},
				// answered-sent of answered attempts: [10 20 20 40]
				HandshakeMs: Quantiles{P50: 20, P90: 40, P99: 40, Max: 40},
				Series: Series{
					Attempts: []int64{1, 2, 1, 1}, Accepts: []int64{0, 1, 0, 1}, Rejects: []int64{1, 0, 1, 0}, Failed: []int64{0, 1, 0, 0},
					// 2 up at the origin, 0 after 7 ms, 1 at 170, 2 at 315; sampled at 100, 200, 300, 400
					ConnectedFraction: []float64{0, 0.5, 0.5, 1},
					// the accepts' answered-sent: 20 in window 1 (the unanswered 60 there is not one), 10 in 3
					AcceptHandshakeMaxMs: []float64{0, 20, 0, 10},
				},
			},
		},
		{
			name: "a timed-out attempt is a failed one, counted as timed out",
			events: []client.Event{
				{Kind: client.EventConnected, Client: 0, Time: t0},
				{Kind: client.EventClosed, Client: 0, Time: at(5), CloseCode: -1},
				{Kind: client.EventAttempt, Client: 0, Time: at(160), Sent: at(10), Answered: at(160), TimedOut: true}, // mid 85
				attempt(0, 170, 180, 101), // mid 175
				{Kind: client.EventConnected, Client: 0, Time: at(180)},
			},
			want: Summary{
				Label: "crash", Clients: 2, StartMs: 1000, WindowMs: 100,
				Attempts: 2, Accepted: 1, Failed: 1, TimedOut: 1,
				ByStatus: map[string]int64{"0": 1, "101": 1}, Closes: map[string]int64{"-1": 1}, StopErrors: map[string]int64{},
				Reconnected: 1, FirstDropMs: 5, ConvergenceMs: 180, SyncedMs: -1,
				PeakAttemptsPerWindow: 1, PeakAcceptsPerWindow: 1, FirstWindowAttempts: 1,
				ConnectMs:   Quantiles{P50: 180, P90: 180, P99: 180, Max: 180},
				HandshakeMs: Quantiles{P50: 10, P90: 10, P99: 10, Max: 10}, // the timed-out attempt had no answer
				Series: Series{Attempts: []int64{1, 1}, Accepts: []int64{0, 1}, Rejects: []int64{0, 0}, Failed: []int64{1, 0},
					// client 1 never connected; client 0 down at 5, up at 180
					ConnectedFraction: []float64{0, 0.5}, AcceptHandshakeMaxMs: []float64{0, 10}},
			},
		},
		{
			name: "one replaced, one never dropped",
			events: []client.Event{
				{Kind: client.EventConnected, Client: 0, Time: t0},
				{Kind: client.EventConnected, Client: 1, Time: t0},
				{Kind: client.EventGoaway, Client: 0, Time: at(0)},
				{Kind: client.EventClosed, Client: 0, Time: at(30), CloseCode: 4001},
				{Kind: client.EventReplaced, Client: 0, Time: at(30), CloseCode: 4001},
				{Kind: client.EventStopped, Client: 0, Time: at(31), Err: replaced},
			},
			want: Summary{
				Label: "crash", Clients: 2, StartMs: 1000, WindowMs: 100,
				ByStatus: map[string]int64{}, Closes: map[string]int64{"4001": 1}, StopErrors: map[string]int64{"replaced": 1},
				// FirstDropMs is the close, not the goaway.
				Goaways: 1, Replaced: 1, Stopped: 1, FirstDropMs: 30, ConvergenceMs: -1, SyncedMs: -1,
				Series: Series{Attempts: []int64{}, Accepts: []int64{}, Rejects: []int64{}, Failed: []int64{}, ConnectedFraction: []float64{}, AcceptHandshakeMaxMs: []float64{}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs := append([]client.Event(nil), tt.events...)
			rand.New(rand.NewPCG(1, 2)).Shuffle(len(evs), func(i, j int) { evs[i], evs[j] = evs[j], evs[i] })
			got := Summarize("crash", evs, t0, from, 2, 100*time.Millisecond)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Summarize\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestBefore: a phase cut at a horizon keeps attempts by when they were
// sent (one sent before the end and answered after it counts, as the
// simulator counts a decision before its horizon) and every other event by
// its time; an event exactly at the end is after it.
func TestBefore(t *testing.T) {
	end := time.Date(2024, 3, 1, 12, 0, 10, 0, time.UTC)
	at := func(ms int) time.Time { return end.Add(time.Duration(ms) * time.Millisecond) }
	events := []client.Event{
		{Kind: client.EventAttempt, Client: 0, Sent: at(-100), Answered: at(400), Time: at(400)}, // kept: sent before
		{Kind: client.EventAttempt, Client: 1, Sent: at(0), Answered: at(1), Time: at(1)},        // sent at the end
		{Kind: client.EventConnected, Client: 0, Time: at(-1)},                                   // kept
		{Kind: client.EventConnected, Client: 1, Time: at(0)},                                    // at the end
		{Kind: client.EventClosed, Client: 2, Time: at(5)},
	}
	got := Before(events, end)
	if len(got) != 2 || got[0].Client != 0 || got[0].Kind != client.EventAttempt || got[1].Kind != client.EventConnected || got[1].Client != 0 {
		t.Errorf("Before = %+v, want client 0's attempt and connect", got)
	}
}
