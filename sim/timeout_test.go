package sim

import (
	"slices"
	"testing"
	"time"

	"stormsim/models"
	"stormsim/policies"
)

// ended is what the tests below check of a run with an outcome.
type ended struct {
	attempts, accepted, rejected int64
	connected, timedOut, wasted  int64
	shed, skipped, waiting       int64
	outcome                      models.Outcome
	convergenceMs                float64 // -1: null (did not converge)
}

func endedOf(t *testing.T, r Result) ended {
	t.Helper()
	o := r.OutcomeResult
	if o == nil {
		t.Fatalf("no outcome in %+v", r)
	}
	e := ended{attempts: r.Attempts, accepted: r.Accepted, rejected: r.Rejected, connected: o.Connected, timedOut: o.TimedOut,
		wasted: o.Wasted, shed: o.Shed, skipped: o.Skipped, waiting: o.Waiting, outcome: o.Outcome, convergenceMs: -1}
	if ms, ok := r.Convergence(); ok {
		e.convergenceMs = ms
	}
	if sum := r.Accepted + r.Rejected + o.Shed + o.Skipped + o.Waiting; r.Attempts != sum {
		t.Errorf("attempts %d, but accepted + rejected + shed + skipped + waiting = %d", r.Attempts, sum)
	}
	if o.TimedOut > r.Attempts {
		t.Errorf("timed_out %d > attempts %d", o.TimedOut, r.Attempts)
	}
	if ok := r.ConvergenceMs != nil; ok != o.Converged || (o.Outcome == models.OutcomeConverged) != o.Converged {
		t.Errorf("converged %v, outcome %s, convergence_ms present %v: they must agree", o.Converged, o.Outcome, ok)
	}
	return e
}

func legs(out, back time.Duration) *models.NetworkSpec {
	return &models.NetworkSpec{OutLeg: &models.Distribution{Value: out}, BackLeg: &models.Distribution{Value: back}}
}

func fixedPolicy(base, timeout time.Duration) policies.Spec {
	return policies.Spec{Kind: "fixed", Base: base, Timeout: timeout}
}

// TestTimeoutRules pins each rule of the handshake timeout on storms
// worked by hand. An attempt sent at s is answered in time when its answer
// reaches the client by s + timeout; otherwise the client gives up at
// s + timeout, and its backoff starts then, with no Retry-After.
func TestTimeoutRules(t *testing.T) {
	cases := []struct {
		name string
		s    Scenario
		want ended
	}{{
		// Sent at 0, decided at 400 ms, answered at 1000 ms: exactly at
		// the deadline, which is in time.
		name: "answer exactly at the deadline is in time",
		s: Scenario{Clients: 1, Admission: models.AdmissionSpec{Kind: "unlimited"},
			Policies: []policies.Spec{fixedPolicy(100*time.Millisecond, time.Second)},
			Network:  legs(400*time.Millisecond, 600*time.Millisecond)},
		want: ended{attempts: 1, accepted: 1, connected: 1, outcome: models.OutcomeConverged, convergenceMs: 1000},
	}, {
		// The same a nanosecond late: given up at T = 999.999999 ms, a
		// wasted claim each time, retries sent at k*(T + 100 ms). With a
		// 3 s horizon three arrive (0.4, 1.5, 2.6 s), two deadlines pass
		// before it (1.0, 2.1 s), the third (3.2 s) after it.
		name: "one nanosecond late is abandoned; the claim still happens",
		s: Scenario{Clients: 1, Admission: models.AdmissionSpec{Kind: "unlimited"}, Horizon: 3 * time.Second,
			Policies: []policies.Spec{fixedPolicy(100*time.Millisecond, time.Second-1)},
			Network:  legs(400*time.Millisecond, 600*time.Millisecond)},
		want: ended{attempts: 3, accepted: 3, wasted: 3, timedOut: 2, outcome: models.OutcomeUnfinished, convergenceMs: -1},
	}, {
		// c0 is admitted at 400 ms and answered at 1000 ms, in time. c1 is
		// rejected (Retry-After 5 s), its 429 due at 1100 ms (100 ms of
		// reject time): it gives up at 1000 ms and retries 100 ms later,
		// ignoring the Retry-After it never got: arrivals 1.5 and 2.6 s,
		// rejected; deadlines 2.1 s (counted) and 3.2 s (after the
		// horizon). Honouring the 5 s would leave it 2 attempts.
		name: "backoff starts at the deadline without Retry-After",
		s: Scenario{Clients: 2, Horizon: 3 * time.Second,
			Admission: models.AdmissionSpec{Kind: "token_bucket", Rate: 0.001, Burst: 1, RetryAfter: 5 * time.Second},
			Policies:  []policies.Spec{{Kind: "fixed", Base: 100 * time.Millisecond, Timeout: time.Second, HonorRetryAfter: true}},
			Network: func() *models.NetworkSpec {
				n := legs(400*time.Millisecond, 600*time.Millisecond)
				n.RejectTime = &models.Distribution{Value: 100 * time.Millisecond}
				return n
			}()},
		want: ended{attempts: 4, accepted: 1, rejected: 3, connected: 1, timedOut: 2, outcome: models.OutcomeUnfinished, convergenceMs: -1},
	}, {
		// Three clients at 0; claims take 100 ms, rejections 10 ms;
		// timeout 150 ms, retry after 1 s, horizon 2 s. Serve:
		//   c0 turn 0, done 100: connected.
		//   c1 turn 100, done 200 > 150: wasted; gives up at 150.
		//   c2 turn 200 (gone since 150), done 300: wasted; gives up at 150.
		//   c1, c2 back at 1150: c1 turn 1150, done 1250: connected;
		//   c2 turn 1250, done 1350 > 1300: wasted; gives up at 1300,
		//   its retry (2300) beyond the horizon.
		name: "serve: the gateway claims for clients that have gone",
		s: Scenario{Clients: 3, Horizon: 2 * time.Second, Admission: models.AdmissionSpec{Kind: "unlimited"},
			Policies: []policies.Spec{fixedPolicy(time.Second, 150*time.Millisecond)},
			Capacity: &models.CapacitySpec{AdmitPerS: 10, RejectPerS: 100}},
		want: ended{attempts: 5, accepted: 5, connected: 2, wasted: 3, timedOut: 3, outcome: models.OutcomeUnfinished, convergenceMs: -1},
	}, {
		// The same with skip: c2's turn at 200 finds it gone and drops it
		// (10 ms, no admission decision: skipped, neither accepted nor
		// rejected). c1's turn
		// at 100 came before its deadline, so its claim is still wasted.
		// At 1150: c1 connected at 1250, c2's turn 1250 < 1300 so it is
		// served, done 1350: wasted.
		name: "skip: a handshake whose client has gone is dropped at its turn",
		s: Scenario{Clients: 3, Horizon: 2 * time.Second, Admission: models.AdmissionSpec{Kind: "unlimited"},
			Policies: []policies.Spec{fixedPolicy(time.Second, 150*time.Millisecond)},
			Capacity: &models.CapacitySpec{AdmitPerS: 10, RejectPerS: 100, Abandoned: models.AbandonedSkip}},
		want: ended{attempts: 5, accepted: 4, connected: 2, wasted: 2, skipped: 1, timedOut: 3,
			outcome: models.OutcomeUnfinished, convergenceMs: -1},
	}, {
		// The same, with the gateway learning of a departure 60 ms after
		// the client's deadline (network.gone): c2 gave up at 150, but its
		// turn at 200 comes before 210, so it is claimed (100 ms, done
		// 300): wasted, as with serve. At 1150 c1 is connected at 1250
		// and c2's turn 1250 < 1300 is wasted again. Nothing is skipped.
		name: "skip with network.gone: a turn before the gateway knows is claimed",
		s: Scenario{Clients: 3, Horizon: 2 * time.Second, Admission: models.AdmissionSpec{Kind: "unlimited"},
			Policies: []policies.Spec{fixedPolicy(time.Second, 150*time.Millisecond)},
			Network:  &models.NetworkSpec{GoneLeg: &models.Distribution{Dist: models.DistFixed, Value: 60 * time.Millisecond}},
			Capacity: &models.CapacitySpec{AdmitPerS: 10, RejectPerS: 100, Abandoned: models.AbandonedSkip}},
		want: ended{attempts: 5, accepted: 5, connected: 2, wasted: 3, timedOut: 3, outcome: models.OutcomeUnfinished, convergenceMs: -1},
	}, {
		// With the departure known 40 ms after the deadline (190), c2's
		// turn at 200 finds it gone: dropped as without network.gone.
		name: "skip with network.gone: a turn after the gateway knows is dropped",
		s: Scenario{Clients: 3, Horizon: 2 * time.Second, Admission: models.AdmissionSpec{Kind: "unlimited"},
			Policies: []policies.Spec{fixedPolicy(time.Second, 150*time.Millisecond)},
			Network:  &models.NetworkSpec{GoneLeg: &models.Distribution{Dist: models.DistFixed, Value: 40 * time.Millisecond}},
			Capacity: &models.CapacitySpec{AdmitPerS: 10, RejectPerS: 100, Abandoned: models.AbandonedSkip}},
		want: ended{attempts: 5, accepted: 4, connected: 2, wasted: 2, skipped: 1, timedOut: 3,
			outcome: models.OutcomeUnfinished, convergenceMs: -1},
	}, {
		// Three clients at 0; useful claims take 100 ms, a claim whose
		// client had gone before its turn 10 ms; timeout 150 ms, retry
		// 50 ms after giving up, horizon 1 s:
		//   c0 turn 0, done 100: connected.
		//   c1 turn 100 (still there), done 200: wasted at full cost;
		//   gives up at 150, back at 200.
		//   c2 turn 200 (gone since 150): 10 ms, done 210; back at 200.
		//   c1 turn 210, done 310 <= 350: connected. c2 turn 310, done 410
		//   > 350: wasted; gives up at 350, back at 400; turn 410, done 510
		//   <= 550: connected. Six attempts, three wasted claims, three
		//   timeouts. At one rate, c2's first claim would end at 300 and
		//   both retries would miss their deadlines.
		name: "serve: a claim for a client gone before its turn takes 1/wasted_per_s",
		s: Scenario{Clients: 3, Horizon: time.Second, Admission: models.AdmissionSpec{Kind: "unlimited"},
			Policies: []policies.Spec{fixedPolicy(50*time.Millisecond, 150*time.Millisecond)},
			Capacity: &models.CapacitySpec{AdmitPerS: 10, WastedPerS: 100}},
		want: ended{attempts: 6, accepted: 6, connected: 3, wasted: 3, timedOut: 3, outcome: models.OutcomeConverged, convergenceMs: 510},
	}, {
		name: "serve, decided on arrival: the same claims at the same rates",
		s: Scenario{Clients: 3, Horizon: time.Second, Admission: models.AdmissionSpec{Kind: "unlimited"},
			Policies: []policies.Spec{fixedPolicy(50*time.Millisecond, 150*time.Millisecond)},
			Capacity: &models.CapacitySpec{AdmitPerS: 10, WastedPerS: 100, Decide: models.DecideOnArrival}},
		want: ended{attempts: 6, accepted: 6, connected: 3, wasted: 3, timedOut: 3, outcome: models.OutcomeConverged, convergenceMs: 510},
	}, {
		// Four clients at 0, claims of 100 ms, at most 2 waiting. c0's turn
		// is at once; c1 and c2 wait (turns 100, 200); c3 finds 2 waiting
		// and is shed: 503 at once with Retry-After 500 ms, honoured. Back
		// at 500 nobody waits: turn 500, done 600. Connects at 100, 200,
		// 300 and 600 ms.
		name: "shed: a full queue answers 503 with Retry-After at once",
		s: Scenario{Clients: 4, Admission: models.AdmissionSpec{Kind: "unlimited", RetryAfter: 500 * time.Millisecond},
			Policies: []policies.Spec{{Kind: "fixed", Base: 100 * time.Millisecond, HonorRetryAfter: true}},
			Capacity: &models.CapacitySpec{AdmitPerS: 10, MaxQueue: 2}},
		want: ended{attempts: 5, accepted: 4, connected: 4, shed: 1, outcome: models.OutcomeConverged, convergenceMs: 600},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := resolved(t, &c.s)
			got := endedOf(t, runFirst(t, s))
			if got != c.want {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// metastableStorm is the reference storm: 1,000 clients at t = 0, one
// surviving gateway serving 100 handshakes a second first in first out,
// unlimited admission decided at the turn, no network, a fixed 100 ms
// backoff, a 1 s timeout and a 60 s horizon.
func metastableStorm(t *testing.T, capacity models.CapacitySpec, admission models.AdmissionSpec) *Scenario {
	return resolved(t, &Scenario{Clients: 1000, Horizon: time.Minute, Admission: admission,
		Policies: []policies.Spec{fixedPolicy(100*time.Millisecond, time.Second)},
		Metrics:  Metrics{Window: time.Second}, Capacity: &capacity})
}

// TestMetastableStormServe: handshake k's turn is at 10k ms and its answer
// at 10(k+1) ms, in time for k < 100: exactly the first 100 connect. The
// other 900 give up at 1 s and come back every 1.1 s, 818 a second
// against 100 served: the queue only grows, every later answer is late,
// and the gateway is busy to the horizon with claims nobody waits for.
//
// Counted by hand, at the 60 s horizon:
//   - attempts: the 1,000 at 0, and the 900 back at 1.1j s for j = 1..54
//     (54 x 1.1 = 59.4 s; the 55th would arrive at 60.5 s): 1,000 + 900 x
//     54 = 49,600, every one of them reaching the gateway before 60 s;
//   - timed_out: each of the 900 gives up on its attempts sent at 0, 1.1,
//     ..., 58.3 s (deadlines 1.0 to 59.3 s): 54 times; the one sent at
//     59.4 s would give up at 60.4 s, after the horizon: 900 x 54 = 48,600;
//   - accepted: answers leave at 10(k+1) ms, 5,999 of them before 60 s:
//     100 useful and 5,899 wasted claims;
//   - waiting: 49,600 - 5,999 = 43,601: the claim whose turn came at
//     59.99 s is in service at the horizon, and 43,600 (every arrival but
//     the 6,000 whose turn came before 60 s) wait for their turn;
//   - so attempts = accepted + rejected + shed + skipped + waiting:
//     49,600 = 5,999 + 0 + 0 + 0 + 43,601.
func TestMetastableStormServe(t *testing.T) {
	s := metastableStorm(t, models.CapacitySpec{AdmitPerS: 100}, models.AdmissionSpec{Kind: "unlimited"})
	r := runFirst(t, s)
	const attempts, accepted, waiting = 1000 + 900*54, 5999, 1000 + 900*54 - 5999
	want := ended{attempts: attempts, accepted: accepted, connected: 100, wasted: 5899, timedOut: 900 * 54, waiting: waiting,
		outcome: models.OutcomeMetastable, convergenceMs: -1}
	if got := endedOf(t, r); got != want {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if r.TailBusy != 1 || r.TailUseful != 0 {
		t.Errorf("last 6 s: busy %v, useful %v; want 1, 0", r.TailBusy, r.TailUseful)
	}
	// Every series runs to the horizon: 60 windows of 1 s.
	series := map[string][]int64{"attempts": r.Series.Attempts, "accepts": r.Series.Accepts, "rejects": r.Series.Rejects,
		"goodput": r.Series.Goodput, "wasted": r.Series.Wasted, "queue": r.Series.Queue}
	for name, v := range series {
		if len(v) != 60 {
			t.Errorf("series.%s has %d windows, want 60 (to the horizon)", name, len(v))
		}
	}
	// Attempts by arrival: 1,000 in the first second, then 900 in the
	// second that holds 1.1j s, down to 59.4 s in the last one.
	wantAttempts := make([]int64, 60)
	wantAttempts[0] = 1000
	for j := 1; j <= 54; j++ {
		wantAttempts[1100*j/1000] += 900
	}
	if !slices.Equal(r.Series.Attempts, wantAttempts) {
		t.Errorf("attempts per second %v, want %v", r.Series.Attempts, wantAttempts)
	}
	// Accepts by decision: 100 a second (turns 10 ms apart), but of the
	// last second's only the 99 answered before 60 s.
	if a := r.Series.Accepts; len(a) == 60 && (a[0] != 100 || a[58] != 100 || a[59] != 99) {
		t.Errorf("accepts per second %v, want 100 a second and 99 in the last", a)
	}
	// Goodput: the 100 useful claims end at 10, 20, ..., 1000 ms: 99 in
	// the first second, the last at 1 s. Every later claim is wasted, one
	// per 10 ms: 100 a second from then on.
	if g := r.Series.Goodput; len(g) < 2 || g[0] != 99 || g[1] != 1 || sum(g) != 100 {
		t.Errorf("goodput per second %v, want 99, 1 and nothing more", g)
	}
	if w := r.Series.Wasted; len(w) != 60 || w[0] != 0 || w[1] != 99 || w[30] != 100 || w[59] != 100 || sum(w) != 5899 {
		t.Errorf("wasted per second %v, want 0, 99, then 100 a second", w)
	}
	// Waiting at 1 s: 1,000 arrived, turns at 0, 10, ..., 1000 ms started
	// (101): 899. At 2 s: 900 more arrived at 1.1 s, 201 turns started:
	// 1,699. At the horizon: 43,600, its true last value.
	if q := r.Series.Queue; len(q) != 60 || q[0] != 899 || q[1] != 1699 || q[59] != waiting-1 {
		t.Errorf("queue at the window ends %v, want 899, 1699, ..., %d", q, waiting-1)
	}
	// The longest wait, counted to the horizon for those still waiting:
	// the 900 back at 1.1j s have turns at 10 s + 9(j-1) s + 10i ms (i <
	// 900), so 500 of those back at 6.6 s still wait at 60 s: 53.4 s, and
	// no handshake whose turn came waited as long.
	if w := r.QueueWaitMs; w.Max != 53400 || w.P99 > w.Max {
		t.Errorf("queue waits %+v, want a max of 53,400 ms, within the horizon", w)
	}
}

// TestMetastableStormSkip: the same storm with skip. Round r (sent at
// 1.1r s, deadline 1.1r + 1 s) has 1000 - 100r clients; turns 10 ms apart
// serve 100 in time, and the turn of the 101st is at the deadline, so it
// and every later one are dropped at no cost. Ten rounds connect
// everyone, the last at 9.9 + 1.0 = 10.9 s; decisions 1000 + 900 + ... +
// 100 = 5,500, of which 4,500 skipped (each a timeout), the rest accepted.
func TestMetastableStormSkip(t *testing.T) {
	s := metastableStorm(t, models.CapacitySpec{AdmitPerS: 100, Abandoned: models.AbandonedSkip}, models.AdmissionSpec{Kind: "unlimited"})
	want := ended{attempts: 5500, accepted: 1000, connected: 1000, skipped: 4500, timedOut: 4500,
		outcome: models.OutcomeConverged, convergenceMs: 10900}
	if got := endedOf(t, runFirst(t, s)); got != want {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// TestMetastableStormBucket: the same storm behind a token bucket of 90/s,
// burst 10, taken on arrival. Round k arrives at 0.1k s: 10 admitted at 0,
// then 9 a round (exactly 90/s * 0.1 s), whose claims take 90 ms of each
// 100 ms: nothing waits past its timeout. Round k >= 1 has 999 - 9k
// clients; the last, k = 110, admits the final 9 at 11.0 s, their claims
// done at 11.09 s. Attempts 1000 + sum(999 - 9k, k = 1..110) = 55,945.
func TestMetastableStormBucket(t *testing.T) {
	s := metastableStorm(t, models.CapacitySpec{AdmitPerS: 100, Decide: models.DecideOnArrival},
		models.AdmissionSpec{Kind: "token_bucket", Rate: 90, Burst: 10})
	want := ended{attempts: 55945, accepted: 1000, rejected: 54945, connected: 1000, outcome: models.OutcomeConverged, convergenceMs: 11090}
	if got := endedOf(t, runFirst(t, s)); got != want {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func sum(s []int64) int64 {
	var n int64
	for _, v := range s {
		n += v
	}
	return n
}
