package client

import (
	"context"
	"errors"
	"maps"
	"math/bits"
	"net/http"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/coder/websocket"

	"stormsim/gateway/protocol"
	"stormsim/policies"
	"stormsim/policies/rng"
)

const (
	testSeed  = 42
	testIndex = 7
)

func backoff(t *testing.T, s policies.Spec) *policies.Backoff {
	t.Helper()
	b, err := policies.New(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// run drives one client to its end against the given gateways and returns
// Run's error, the clock and the events.
func run(t *testing.T, cfg Config) (error, *fakeClock, *recorder) {
	t.Helper()
	clock, rec := newFakeClock(), &recorder{}
	if cfg.Device.ID == "" {
		cfg.Device = Device{ID: "u-007-d1", Token: "tok-u-007-d1"}
	}
	if cfg.Clock == nil {
		cfg.Clock = clock
	}
	cfg.Seed, cfg.Index, cfg.Observer = testSeed, testIndex, rec.observe
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = c.Run(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("client did not stop within 5 s")
	}
	return err, clock, rec
}

// replayWaits is what the simulator draws for one client: the round's
// initial wait, then Next after each failed attempt with the given
// Retry-Afters.
func replayWaits(b *policies.Backoff, jitter time.Duration, retryAfters []time.Duration) []time.Duration {
	waits := []time.Duration{policies.InitialWait(testSeed, testIndex, jitter)}
	var prev time.Duration
	for i, ra := range retryAfters {
		n := i + 1
		w, raw, _ := b.Next(n, prev, ra, rng.Draw(testSeed, testIndex, uint64(n), rng.StreamBackoff))
		prev = raw
		waits = append(waits, w)
	}
	return waits
}

var (
	acceptThenDrop = step{status: 101, then: closeAs, code: protocol.CloseLeaseLost}
	acceptThenKick = step{status: 101, then: closeAs, code: protocol.CloseReplaced}
)

func TestWaitsReplayTheSimulatorsDraws(t *testing.T) {
	tests := []struct {
		name   string
		spec   policies.Spec
		jitter time.Duration
		// failures between the drop and the final accept, and the
		// Retry-After each one carries as the client parses it
		failures    []step
		retryAfters []time.Duration
	}{
		{
			name:   "full jitter honouring Retry-After",
			spec:   policies.Spec{Kind: "full", Base: 100 * time.Millisecond, Cap: 3200 * time.Millisecond, HonorRetryAfter: true},
			jitter: 100 * time.Millisecond,
			failures: []step{
				{status: 429, retryAfter: "1"}, {status: 429, retryAfter: "1"}, {status: 503, retryAfter: "2"},
				{status: 429}, {status: 429, retryAfter: "0"}, {status: 429, retryAfter: "1"},
			},
			retryAfters: []time.Duration{time.Second, time.Second, 2 * time.Second, 0, 0, time.Second},
		},
		{
			name:        "full jitter ignoring Retry-After, lab floor 200ms",
			spec:        policies.Spec{Kind: "full", Base: 100 * time.Millisecond, Cap: 3200 * time.Millisecond, MinDelayAfterReject: 200 * time.Millisecond},
			jitter:      100 * time.Millisecond,
			failures:    []step{{status: 429, retryAfter: "5"}, {status: 429, retryAfter: "5"}, {status: 503, retryAfter: "5"}, {status: 429, retryAfter: "5"}, {status: 429, retryAfter: "5"}},
			retryAfters: []time.Duration{5 * time.Second, 5 * time.Second, 5 * time.Second, 5 * time.Second, 5 * time.Second},
		},
		{
			name:        "decorrelated threads its previous delay",
			spec:        policies.Spec{Kind: "decorrelated", Base: 50 * time.Millisecond, Cap: 2 * time.Second},
			jitter:      time.Second,
			failures:    []step{{status: 429}, {status: 503}, {status: 429}, {status: 429}, {status: 429}, {status: 429}},
			retryAfters: make([]time.Duration, 6),
		},
		{
			name:        "equal jitter, other HTTP errors back off too",
			spec:        policies.Spec{Kind: "equal", Base: 10 * time.Millisecond, Cap: 80 * time.Millisecond},
			failures:    []step{{status: 500}, {status: 400}, {status: 429}, {status: 429}, {status: 429}},
			retryAfters: make([]time.Duration, 5),
		},
		{
			name:        "max_attempts is not reached before the accept",
			spec:        policies.Spec{Kind: "fixed", Base: 30 * time.Millisecond, MaxAttempts: 3},
			failures:    []step{{status: 429}, {status: 429}},
			retryAfters: make([]time.Duration, 2),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := backoff(t, tt.spec)
			steps := append([]step{acceptThenDrop}, tt.failures...)
			g := newFakeGateway(t, append(steps, acceptThenKick)...)
			err, clock, rec := run(t, Config{Gateways: []string{g.url()}, Drop: Reconnect{Backoff: b, InitialJitter: tt.jitter}})
			if !errors.Is(err, ErrReplaced) {
				t.Fatalf("Run = %v, want ErrReplaced", err)
			}
			want := append([]time.Duration{0}, replayWaits(b, tt.jitter, tt.retryAfters)...)
			if got := clock.waits(); !slices.Equal(got, want) {
				t.Errorf("waits\n got %v\nwant %v", got, want)
			}
			// Attempt events carry the same waits and the round numbering.
			var attempts []int
			for _, ev := range rec.of(EventAttempt) {
				if ev.Round == 2 {
					attempts = append(attempts, ev.Attempt)
				}
			}
			wantAttempts := make([]int, len(tt.failures)+1)
			for i := range wantAttempts {
				wantAttempts[i] = i + 1
			}
			if !slices.Equal(attempts, wantAttempts) {
				t.Errorf("round 2 attempt numbers = %v, want %v", attempts, wantAttempts)
			}
		})
	}
}

// hi64 is the high word of u*n: UniformDuration written out again.
func hi64(u uint64, n time.Duration) time.Duration {
	hi, _ := bits.Mul64(u, uint64(n))
	return time.Duration(hi)
}

// TestFullJitterWaitsByFormula checks the waits against the seed's formula
// written out by hand rather than through policies:
// initial = uniform[0, jitter), then max(uniform[0, min(cap, base*2^(n-1))), retryAfter).
func TestFullJitterWaitsByFormula(t *testing.T) {
	const base, capD, jitter = 100 * time.Millisecond, 400 * time.Millisecond, 100 * time.Millisecond
	b := backoff(t, policies.Spec{Kind: "full", Base: base, Cap: capD, HonorRetryAfter: true})
	ras := []string{"0", "0", "0", "0", "1"}
	steps := []step{acceptThenDrop}
	for _, ra := range ras {
		steps = append(steps, step{status: 429, retryAfter: ra})
	}
	g := newFakeGateway(t, append(steps, acceptThenKick)...)
	_, clock, _ := run(t, Config{Gateways: []string{g.url()}, Drop: Reconnect{Backoff: b, InitialJitter: jitter}})

	want := []time.Duration{0, hi64(rng.Draw(testSeed, testIndex, 0, rng.StreamInitial), jitter)}
	ceilings := []time.Duration{100, 200, 400, 400, 400} // ms: base*2^(n-1) capped at 400
	for i, c := range ceilings {
		w := hi64(rng.Draw(testSeed, testIndex, uint64(i+1), rng.StreamBackoff), c*time.Millisecond)
		if ras[i] == "1" {
			w = max(w, time.Second)
		}
		want = append(want, w)
	}
	if got := clock.waits(); !slices.Equal(got, want) {
		t.Errorf("waits\n got %v\nwant %v", got, want)
	}
}

func TestRetryAfterFromTheGateway(t *testing.T) {
	start := newFakeClock().Now()
	fixed10ms := policies.Spec{Kind: "fixed", Base: 10 * time.Millisecond}
	honour := fixed10ms
	honour.HonorRetryAfter = true
	tests := []struct {
		name       string
		spec       policies.Spec
		retryAfter string
		wantWait   time.Duration
		wantRA     time.Duration
		badHeader  bool
	}{
		{"seconds honoured", honour, "3", 3 * time.Second, 3 * time.Second, false},
		{"HTTP-date honoured", honour, start.Add(3 * time.Second).Format(http.TimeFormat), 3 * time.Second, 3 * time.Second, false},
		{"HTTP-date in the past is no floor", honour, start.Add(-time.Minute).Format(http.TimeFormat), 10 * time.Millisecond, 0, false},
		{"not honoured by the policy", fixed10ms, "3", 10 * time.Millisecond, 3 * time.Second, false},
		{"garbage is ignored and reported", honour, "soon", 10 * time.Millisecond, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newFakeGateway(t, step{status: 429, retryAfter: tt.retryAfter}, acceptThenKick)
			_, clock, rec := run(t, Config{Gateways: []string{g.url()}, Drop: Reconnect{Backoff: backoff(t, tt.spec)}})
			if got, want := clock.waits(), []time.Duration{0, tt.wantWait}; !slices.Equal(got, want) {
				t.Errorf("waits = %v, want %v", got, want)
			}
			ev := rec.of(EventAttempt)[0]
			if ev.Status != 429 || ev.RetryAfter != tt.wantRA || ev.Wait != tt.wantWait {
				t.Errorf("attempt event: status %d retry_after %v wait %v, want 429 %v %v", ev.Status, ev.RetryAfter, ev.Wait, tt.wantRA, tt.wantWait)
			}
			if got := errors.Is(ev.Err, ErrBadRetryAfter); got != tt.badHeader {
				t.Errorf("attempt error %v: bad Retry-After reported = %v, want %v", ev.Err, got, tt.badHeader)
			}
		})
	}
}

func TestConflictRetriesWithTheNextCounterAtOnce(t *testing.T) {
	b := backoff(t, policies.Spec{Kind: "fixed", Base: time.Second})
	tests := []struct {
		name         string
		steps        []step
		maxConflicts int
		wantErr      error
		wantAttempts []int64 // counter values the gateway saw
	}{
		{"two conflicts then accepted", []step{{status: 409}, {status: 409}, acceptThenKick}, 0, ErrReplaced, []int64{42, 43, 44}},
		{"persistent conflicts give up", []step{{status: 409}, {status: 409}, {status: 409}, {status: 409}}, 3, ErrConflict, []int64{42, 43, 44}},
		{"a 429 between conflicts resets the count", []step{{status: 409}, {status: 409}, {status: 429}, {status: 409}, {status: 409}, acceptThenKick}, 3, ErrReplaced, []int64{42, 43, 44, 45, 46, 47}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newFakeGateway(t, tt.steps...)
			dev := Device{ID: "u-007-d1", Token: "tok-u-007-d1", InstallEpoch: 3, Attempts: NewMemoryCounter(41)}
			err, clock, _ := run(t, Config{Device: dev, Gateways: []string{g.url()}, Drop: Reconnect{Backoff: b}, MaxConflicts: tt.maxConflicts})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Run = %v, want %v", err, tt.wantErr)
			}
			var got []int64
			for _, r := range g.requests() {
				got = append(got, r.attempt)
				if r.epoch != 3 {
					t.Errorf("install_epoch = %d, want 3", r.epoch)
				}
			}
			if !slices.Equal(got, tt.wantAttempts) {
				t.Errorf("attempts sent = %v, want %v", got, tt.wantAttempts)
			}
			// The start round's 0, then one wait per 429 and none per 409.
			want := []time.Duration{0}
			for _, s := range tt.steps {
				if s.status == 429 {
					want = append(want, time.Second)
				}
			}
			if got := clock.waits(); !slices.Equal(got, want) {
				t.Errorf("waits = %v, want %v", got, want)
			}
		})
	}
}

func TestTerminalOutcomes(t *testing.T) {
	b := backoff(t, policies.Spec{Kind: "fixed", Base: time.Millisecond, MaxAttempts: 2})
	tests := []struct {
		name     string
		steps    []step
		wantErr  error
		wantReqs int
		wantKind EventKind // lifecycle event that must have been reported
	}{
		{"401 stops with an error", []step{{status: 401}}, ErrUnauthorized, 1, EventAttempt},
		{"4001 stops without reconnecting", []step{acceptThenKick, acceptThenKick}, ErrReplaced, 1, EventReplaced},
		{"max_attempts gives up", []step{{status: 503}, {status: 503}, acceptThenKick}, ErrGaveUp, 2, EventAttempt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newFakeGateway(t, tt.steps...)
			err, _, rec := run(t, Config{Gateways: []string{g.url()}, Drop: Reconnect{Backoff: b}})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Run = %v, want %v", err, tt.wantErr)
			}
			if n := len(g.requests()); n != tt.wantReqs {
				t.Errorf("gateway saw %d handshakes, want %d", n, tt.wantReqs)
			}
			if len(rec.of(tt.wantKind)) == 0 {
				t.Errorf("no %s event", tt.wantKind)
			}
			stops := rec.of(EventStopped)
			if len(stops) != 1 || !errors.Is(stops[0].Err, tt.wantErr) {
				t.Errorf("stopped events = %+v, want one carrying %v", stops, tt.wantErr)
			}
			if got := g.requests()[0].auth; got != "Bearer u-007-d1:tok-u-007-d1" {
				t.Errorf("Authorization = %q", got)
			}
		})
	}
}

func TestEndOfConnectionPicksTheRound(t *testing.T) {
	drop := Reconnect{Backoff: backoff(t, policies.Spec{Kind: "fixed", Base: 700 * time.Millisecond}), InitialJitter: time.Second}
	drain := Reconnect{Backoff: backoff(t, policies.Spec{Kind: "fixed", Base: 50 * time.Millisecond}), InitialJitter: 30 * time.Millisecond}
	tests := []struct {
		name      string
		end       step
		wantKind  RoundKind
		wantCode  int
		wantWaits []time.Duration // after the start round's 0: initial wait, then the wait after one 503
	}{
		{"goaway then 1001 uses the drain policy", step{status: 101, then: goaway}, RoundDrain, 1001,
			[]time.Duration{policies.InitialWait(testSeed, testIndex, 30*time.Millisecond), 50 * time.Millisecond}},
		{"1001 without goaway is a drop", step{status: 101, then: closeAs, code: websocket.StatusGoingAway}, RoundDrop, 1001,
			[]time.Duration{policies.InitialWait(testSeed, testIndex, time.Second), 700 * time.Millisecond}},
		{"4003 lease lost reconnects", step{status: 101, then: closeAs, code: protocol.CloseLeaseLost}, RoundDrop, 4003,
			[]time.Duration{policies.InitialWait(testSeed, testIndex, time.Second), 700 * time.Millisecond}},
		{"reset without a close frame reconnects", step{status: 101, then: reset}, RoundDrop, -1,
			[]time.Duration{policies.InitialWait(testSeed, testIndex, time.Second), 700 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newFakeGateway(t, tt.end, step{status: 503, retryAfter: "1"}, acceptThenKick)
			err, clock, rec := run(t, Config{Gateways: []string{g.url()}, Drop: drop, Drain: drain})
			if !errors.Is(err, ErrReplaced) {
				t.Fatalf("Run = %v, want ErrReplaced", err)
			}
			if got, want := clock.waits(), append([]time.Duration{0}, tt.wantWaits...); !slices.Equal(got, want) {
				t.Errorf("waits = %v, want %v", got, want)
			}
			rounds := rec.of(EventRound)
			if len(rounds) != 2 || rounds[1].RoundKind != tt.wantKind {
				t.Fatalf("rounds = %+v, want start then %s", rounds, tt.wantKind)
			}
			if closed := rec.of(EventClosed); closed[0].CloseCode != tt.wantCode {
				t.Errorf("first close code = %d, want %d", closed[0].CloseCode, tt.wantCode)
			}
			if got, want := len(rec.of(EventGoaway)), map[bool]int{true: 1}[tt.wantKind == RoundDrain]; got != want {
				t.Errorf("goaway events = %d, want %d", got, want)
			}
		})
	}
}

func TestGatewayChoice(t *testing.T) {
	b := backoff(t, policies.Spec{Kind: "fixed", Base: 10 * time.Millisecond})
	t.Run("refused moves round robin to the next gateway", func(t *testing.T) {
		dead := refusedURL(t)
		g := newFakeGateway(t, step{status: 429}, acceptThenKick)
		// index 7 of a 3-gateway list starts at element 1 (7 mod 3).
		err, clock, rec := run(t, Config{Gateways: []string{g.url(), dead, g.url()}, Drop: Reconnect{Backoff: b}})
		if !errors.Is(err, ErrReplaced) {
			t.Fatalf("Run = %v", err)
		}
		var got []string
		var statuses []int
		for _, ev := range rec.of(EventAttempt) {
			got = append(got, ev.Gateway)
			statuses = append(statuses, ev.Status)
		}
		if want := []string{dead, g.url(), g.url()}; !slices.Equal(got, want) {
			t.Errorf("gateways = %v, want %v", got, want)
		}
		if want := []int{0, 429, 101}; !slices.Equal(statuses, want) {
			t.Errorf("statuses = %v, want %v", statuses, want)
		}
		if ev := rec.of(EventAttempt)[0]; ev.Err == nil {
			t.Error("refused attempt carries no error")
		}
		if got, want := clock.waits(), []time.Duration{0, 10 * time.Millisecond, 10 * time.Millisecond}; !slices.Equal(got, want) {
			t.Errorf("waits = %v, want %v", got, want)
		}
	})
	t.Run("chooser sees each attempt", func(t *testing.T) {
		g := newFakeGateway(t, acceptThenDrop, step{status: 429}, acceptThenKick)
		var picks []Pick
		choose := func(p Pick) string { p.Gateways = nil; picks = append(picks, p); return g.url() }
		if err, _, _ := run(t, Config{Choose: choose, Drop: Reconnect{Backoff: b}}); !errors.Is(err, ErrReplaced) {
			t.Fatalf("Run = %v", err)
		}
		want := []Pick{
			{Client: testIndex, Round: 1, RoundKind: RoundStart, Attempt: 1},
			{Client: testIndex, Round: 2, RoundKind: RoundDrop, Attempt: 1, Previous: g.url(), PreviousFailed: true},
			{Client: testIndex, Round: 2, RoundKind: RoundDrop, Attempt: 2, Previous: g.url(), PreviousFailed: true},
		}
		if !reflect.DeepEqual(picks, want) {
			t.Errorf("picks\n got %+v\nwant %+v", picks, want)
		}
	})
}

func TestSyncCatchesUpFromCursors(t *testing.T) {
	g := newFakeGateway(t, acceptThenDrop, acceptThenKick)
	g.pageSize = 2
	for seq := int64(1); seq <= 5; seq++ {
		g.log["a"] = append(g.log["a"], protocol.Event{Seq: seq, Body: "m"})
	}
	g.log["b"] = []protocol.Event{{Seq: 1, Body: "m"}}
	b := backoff(t, policies.Spec{Kind: "fixed", Base: time.Millisecond})
	err, _, rec := run(t, Config{Gateways: []string{g.url()}, Drop: Reconnect{Backoff: b}, Conversations: []string{"b", "a"}})
	if !errors.Is(err, ErrReplaced) {
		t.Fatalf("Run = %v", err)
	}
	want := []protocol.Sync{
		{T: "sync", Conv: "a", After: 0}, {T: "sync", Conv: "a", After: 2}, {T: "sync", Conv: "a", After: 4}, {T: "sync", Conv: "b", After: 0},
		// after the reconnect, from the cursors
		{T: "sync", Conv: "a", After: 5}, {T: "sync", Conv: "b", After: 1},
	}
	if got := g.syncRequests(); !slices.Equal(got, want) {
		t.Errorf("syncs\n got %v\nwant %v", got, want)
	}
	synced := rec.of(EventSynced)
	if len(synced) != 2 {
		t.Fatalf("synced events = %d, want 2", len(synced))
	}
	atHead := map[string]int64{"a": 5, "b": 1}
	if !reflect.DeepEqual(synced[1].Cursors, atHead) || !reflect.DeepEqual(synced[1].Heads, atHead) {
		t.Errorf("cursors %v heads %v, want both %v", synced[1].Cursors, synced[1].Heads, atHead)
	}
}

func TestSyncRetriesAfterAnErrorFrame(t *testing.T) {
	b := backoff(t, policies.Spec{Kind: "fixed", Base: time.Millisecond})
	tests := []struct {
		name       string
		syncErrors int
		wantSyncs  int              // requests the gateway saw on the first connection
		wantCursor map[string]int64 // after the first connection's sync
		wantHeads  map[string]int64
	}{
		{"retried until answered", 3, 4, map[string]int64{"a": 2}, map[string]int64{"a": 2}},
		{"left behind after the retries", 4, 4, map[string]int64{"a": 0}, map[string]int64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The gateway waits for the sync to reach the head before the kick,
			// so the second case is kicked by a client-side drop instead.
			g := newFakeGateway(t, step{status: 101, then: closeAs, code: protocol.CloseReplaced})
			g.log["a"] = []protocol.Event{{Seq: 1}, {Seq: 2}}
			g.syncErrors = tt.syncErrors
			cfg := Config{Gateways: []string{g.url()}, Drop: Reconnect{Backoff: b}, Conversations: []string{"a"}, SyncTimeout: time.Second}
			err, _, rec := run(t, cfg)
			synced := rec.of(EventSynced)
			if len(synced) == 0 {
				t.Fatalf("no synced event (Run = %v)", err)
			}
			if !reflect.DeepEqual(synced[0].Cursors, tt.wantCursor) || !reflect.DeepEqual(synced[0].Heads, tt.wantHeads) {
				t.Errorf("cursors %v heads %v, want %v %v", synced[0].Cursors, synced[0].Heads, tt.wantCursor, tt.wantHeads)
			}
			if got := len(g.syncRequests()); got != tt.wantSyncs {
				t.Errorf("gateway saw %d syncs, want %d", got, tt.wantSyncs)
			}
		})
	}
}

func TestHeartbeatNoticesAHungGateway(t *testing.T) {
	g := newFakeGateway(t, step{status: 101, then: mute}, acceptThenKick)
	b := backoff(t, policies.Spec{Kind: "fixed", Base: time.Millisecond})
	err, _, rec := run(t, Config{Gateways: []string{g.url()}, Drop: Reconnect{Backoff: b},
		Clock: SystemClock, PingEvery: 20 * time.Millisecond})
	if !errors.Is(err, ErrReplaced) {
		t.Fatalf("Run = %v", err)
	}
	closed := rec.of(EventClosed)
	if closed[0].CloseCode != -1 || closed[0].CloseReason != "heartbeat lost" {
		t.Errorf("first close = %d %q, want -1 \"heartbeat lost\"", closed[0].CloseCode, closed[0].CloseReason)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	b := backoff(t, policies.Spec{Kind: "fixed", Base: time.Millisecond})
	dev := Device{ID: "d", Token: "t"}
	tests := []struct {
		name string
		cfg  Config
	}{
		{"no device id", Config{Gateways: []string{"ws://127.0.0.1:1"}, Drop: Reconnect{Backoff: b}}},
		{"no gateways", Config{Device: dev, Drop: Reconnect{Backoff: b}}},
		{"no backoff", Config{Device: dev, Gateways: []string{"ws://127.0.0.1:1"}}},
		{"negative jitter", Config{Device: dev, Gateways: []string{"ws://127.0.0.1:1"}, Drop: Reconnect{Backoff: b, InitialJitter: -1}}},
		{"negative index", Config{Device: dev, Index: -1, Gateways: []string{"ws://127.0.0.1:1"}, Drop: Reconnect{Backoff: b}}},
	}
	for _, tt := range tests {
		if _, err := New(tt.cfg); err == nil {
			t.Errorf("%s: New accepted it", tt.name)
		}
	}
}

// TestTimeoutIsAFailedAttempt: with the policy's timeout set, an attempt
// whose answer (for a 101, its hello) has not arrived by sent + timeout is
// abandoned then: its connection closed, recorded as timed out with status
// 0 and answered = sent + timeout, and followed by the backoff the
// simulator draws for a failed attempt without Retry-After, even though
// the late answer carries one. An answer within the timeout counts as usual.
func TestTimeoutIsAFailedAttempt(t *testing.T) {
	const timeout = 150 * time.Millisecond
	b := backoff(t, policies.Spec{Kind: "full", Base: 100 * time.Millisecond, Cap: 800 * time.Millisecond,
		HonorRetryAfter: true, Timeout: timeout})
	steps := []step{
		acceptThenDrop,
		{status: 429, retryAfter: "1", delay: 4 * timeout}, // refusal too late
		{status: 101, helloDelay: 4 * timeout},             // accepted, hello too late
		{status: 429, retryAfter: "1", delay: timeout / 5}, // refusal in time
		acceptThenKick,
	}
	g := newFakeGateway(t, steps...)
	err, clock, rec := run(t, Config{Gateways: []string{g.url()}, Drop: Reconnect{Backoff: b, InitialJitter: 100 * time.Millisecond}})
	if !errors.Is(err, ErrReplaced) {
		t.Fatalf("Run = %v, want ErrReplaced", err)
	}
	want := append([]time.Duration{0}, replayWaits(b, 100*time.Millisecond, []time.Duration{0, 0, time.Second})...)
	if got := clock.waits(); !slices.Equal(got, want) {
		t.Errorf("waits\n got %v\nwant %v", got, want)
	}
	var timedOut []bool
	for _, ev := range rec.of(EventAttempt) {
		if ev.Round != 2 {
			continue
		}
		timedOut = append(timedOut, ev.TimedOut)
		if ev.TimedOut && (ev.Status != 0 || ev.RetryAfter != 0 || ev.Answered.Sub(ev.Sent) != timeout || !errors.Is(ev.Err, ErrTimedOut)) {
			t.Errorf("timed-out attempt %d: status %d retry-after %v answered after %v err %v; want 0, 0, %v, ErrTimedOut",
				ev.Attempt, ev.Status, ev.RetryAfter, ev.Answered.Sub(ev.Sent), ev.Err, timeout)
		}
	}
	if wantTO := []bool{true, true, false, false}; !slices.Equal(timedOut, wantTO) {
		t.Errorf("round 2 timed out %v, want %v", timedOut, wantTO)
	}
	g.mu.Lock()
	left := maps.Clone(g.leftEarly)
	g.mu.Unlock()
	for _, i := range []int{1, 2} {
		if d, ok := left[i]; !ok || d > 3*timeout {
			t.Errorf("handshake %d: the gateway saw the client leave after %v (seen: %v), want soon after %v", i, d, ok, timeout)
		}
	}
}

// TestTimeoutFallsBackToTheConfig: without a policy timeout,
// Config.HandshakeTimeout bounds the handshake.
func TestTimeoutFallsBackToTheConfig(t *testing.T) {
	b := backoff(t, policies.Spec{Kind: "fixed", Base: time.Millisecond})
	g := newFakeGateway(t, step{status: 429, delay: time.Second}, acceptThenKick)
	_, _, rec := run(t, Config{Gateways: []string{g.url()}, Drop: Reconnect{Backoff: b}, HandshakeTimeout: 100 * time.Millisecond})
	if ev := rec.of(EventAttempt)[0]; !ev.TimedOut || ev.Answered.Sub(ev.Sent) != 100*time.Millisecond {
		t.Errorf("first attempt timed out %v after %v, want true after 100ms", ev.TimedOut, ev.Answered.Sub(ev.Sent))
	}
}

// TestStartRoundTakesItsOwnSettings: a harness connects its clients with
// Config.Start, patient where the storm's policy is not. The hello comes
// 400 ms after the 101: in time for the start round's 10 s default, too
// late for the drop policy's 100 ms, which the start round uses without
// Start.
func TestStartRoundTakesItsOwnSettings(t *testing.T) {
	impatient := backoff(t, policies.Spec{Kind: "fixed", Base: time.Millisecond, Timeout: 100 * time.Millisecond})
	patient := backoff(t, policies.Spec{Kind: "fixed", Base: time.Millisecond})
	slowHello := step{status: 101, helloDelay: 400 * time.Millisecond, then: closeAs, code: protocol.CloseReplaced}
	for _, c := range []struct {
		name     string
		start    Reconnect
		timedOut bool
	}{{"with Start", Reconnect{Backoff: patient}, false}, {"without", Reconnect{}, true}} {
		g := newFakeGateway(t, slowHello, acceptThenKick)
		_, _, rec := run(t, Config{Gateways: []string{g.url()}, Start: c.start, Drop: Reconnect{Backoff: impatient}})
		if ev := rec.of(EventAttempt)[0]; ev.TimedOut != c.timedOut || ev.RoundKind != RoundStart {
			t.Errorf("%s: first attempt (round %s) timed out %v, want %v", c.name, ev.RoundKind, ev.TimedOut, c.timedOut)
		}
	}
}
