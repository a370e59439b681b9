package policies

import (
	"math"
	"testing"
	"time"

	"stormsim/internal/param"
	"stormsim/policies/rng"
)

const ms = time.Millisecond

func mustNew(t *testing.T, s Spec) *Backoff {
	t.Helper()
	b, err := New(s)
	if err != nil {
		t.Fatalf("New(%+v): %v", s, err)
	}
	return b
}

// TestCeilings pins min(cap, base*multiplier^n) against hand-computed values.
func TestCeilings(t *testing.T) {
	tests := []struct {
		name       string
		base, cap  time.Duration
		multiplier float64
		want       []time.Duration
	}{
		{"seed doubling", 100 * ms, 3200 * ms, 2, []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, 1600 * ms, 3200 * ms, 3200 * ms}},
		{"cap not a power of two", 100 * ms, 1000 * ms, 2, []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, 1000 * ms, 1000 * ms}},
		// 1e9 * 1.6^n in ns, rounded down at each step: 68,719,476,736 * 1.6 = 109,951,162,777.6.
		{"grpc 1.6", time.Second, 120 * time.Second, 1.6, []time.Duration{1e9, 1.6e9, 2.56e9, 4.096e9, 6.5536e9, 10.48576e9, 16.777216e9, 26.8435456e9, 42.94967296e9, 68719476736, 109951162777, 120e9, 120e9}},
		{"multiplier one never grows", 50 * ms, 400 * ms, 1, []time.Duration{50 * ms, 50 * ms, 50 * ms}},
		{"base equals cap", 400 * ms, 400 * ms, 2, []time.Duration{400 * ms, 400 * ms}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCeilings(tt.base, tt.cap, FixedFrom(tt.multiplier))
			for n, want := range tt.want {
				if got := c.At(n); got != want {
					t.Errorf("At(%d) = %v, want %v", n, got, want)
				}
			}
		})
	}
}

// TestPolicyBounds draws many delays per policy and failure count and checks
// each lies in the range its formula allows.
func TestPolicyBounds(t *testing.T) {
	ceil := func(base, cap time.Duration, m float64, n int) time.Duration {
		return time.Duration(math.Min(float64(cap), math.Floor(float64(base)*math.Pow(m, float64(n)))))
	}
	tests := []struct {
		spec   Spec
		bounds func(n int, prev time.Duration) (lo, hi time.Duration) // inclusive lo, exclusive hi
	}{
		{Spec{Kind: "none", MinGap: 5 * ms}, func(int, time.Duration) (time.Duration, time.Duration) { return 5 * ms, 5*ms + 1 }},
		{Spec{Kind: "fixed", Base: 70 * ms}, func(int, time.Duration) (time.Duration, time.Duration) { return 70 * ms, 70*ms + 1 }},
		{Spec{Kind: "exponential", Base: 100 * ms, Cap: 3200 * ms}, func(n int, _ time.Duration) (time.Duration, time.Duration) {
			c := ceil(100*ms, 3200*ms, 2, n)
			return c, c + 1
		}},
		{Spec{Kind: "full", Base: 100 * ms, Cap: 3200 * ms}, func(n int, _ time.Duration) (time.Duration, time.Duration) {
			return 0, ceil(100*ms, 3200*ms, 2, n)
		}},
		{Spec{Kind: "equal", Base: 100 * ms, Cap: 3200 * ms}, func(n int, _ time.Duration) (time.Duration, time.Duration) {
			c := ceil(100*ms, 3200*ms, 2, n)
			return c / 2, c
		}},
		{Spec{Kind: "decorrelated", Base: 100 * ms, Cap: 3200 * ms}, func(_ int, prev time.Duration) (time.Duration, time.Duration) {
			return 100 * ms, min(3200*ms+1, 3*max(prev, 100*ms))
		}},
		{Spec{Kind: "grpc"}, func(n int, _ time.Duration) (time.Duration, time.Duration) {
			c := ceil(time.Second, 120*time.Second, 1.6, n)
			return c - c/5 - 2, c + c/5 + 2
		}},
		{Spec{Kind: "socketio"}, func(n int, _ time.Duration) (time.Duration, time.Duration) {
			c := float64(time.Second) * math.Pow(2, float64(n))
			return time.Duration(math.Min(5e9, c/2)) - 1, time.Duration(math.Min(5e9, 1.5*c)) + 1
		}},
		{Spec{Kind: "cenkalti"}, func(n int, _ time.Duration) (time.Duration, time.Duration) {
			c := ceil(500*ms, 60*time.Second, 1.5, n)
			return c/2 - 2, c + c/2 + 2
		}},
	}
	for _, tt := range tests {
		t.Run(string(tt.spec.Kind), func(t *testing.T) {
			b := mustNew(t, tt.spec)
			for client := uint64(0); client < 200; client++ {
				var prev time.Duration
				for n := 0; n < 20; n++ {
					u := rng.Draw(42, client, uint64(n+1), rng.StreamBackoff)
					d := b.Policy.Delay(n, prev, u)
					lo, hi := tt.bounds(n, prev)
					if d < lo || d >= hi {
						t.Fatalf("client %d n=%d prev=%v: delay %v outside [%v, %v)", client, n, prev, d, lo, hi)
					}
					if d > b.Policy.MaxDelay() {
						t.Fatalf("delay %v above MaxDelay %v", d, b.Policy.MaxDelay())
					}
					prev = d
				}
			}
		})
	}
}

// TestJitterMeans checks each jittered policy's mean against its closed form
// (uniform draws: full c/2, equal 3c/4, grpc and cenkalti c) within 2%.
func TestJitterMeans(t *testing.T) {
	const draws = 200_000
	tests := []struct {
		spec Spec
		n    int
		want float64 // ms
	}{
		{Spec{Kind: "full", Base: 100 * ms, Cap: 3200 * ms}, 3, 400},
		{Spec{Kind: "equal", Base: 100 * ms, Cap: 3200 * ms}, 3, 600},
		{Spec{Kind: "grpc"}, 2, 2560},
		{Spec{Kind: "cenkalti"}, 1, 750},
		// socket.io: one r sizes the deviation (r*ms/2) and picks its sign
		// (odd decile of r: +). E[sign*r] = sum over deciles k of
		// (-1)^(k+1) * (2k+1)/200 = 10/200, so the mean is ms*(1 + 0.5*0.05).
		{Spec{Kind: "socketio", Cap: time.Hour}, 1, 2050},
	}
	for _, tt := range tests {
		b := mustNew(t, tt.spec)
		sum := 0.0
		for i := uint64(0); i < draws; i++ {
			sum += float64(b.Policy.Delay(tt.n, 0, rng.Draw(1, i, 7, rng.StreamBackoff))) / float64(ms)
		}
		if mean := sum / draws; math.Abs(mean-tt.want) > 0.02*tt.want {
			t.Errorf("%s n=%d: mean %.1f ms, want %.1f ms", string(tt.spec.Kind), tt.n, mean, tt.want)
		}
	}
}

// TestNextClientRules pins max_attempts, honor_retry_after and the client floor.
func TestNextClientRules(t *testing.T) {
	b := mustNew(t, Spec{Kind: "exponential", Base: 100 * ms, Cap: time.Second, MaxAttempts: 3, HonorRetryAfter: true, MinDelayAfterReject: 150 * ms})
	tests := []struct {
		attempts   int
		retryAfter time.Duration
		wait       time.Duration
		giveUp     bool
	}{
		{1, 0, 150 * ms, false},              // raw 100 ms, floor 150 ms
		{2, 0, 200 * ms, false},              // raw 200 ms above the floor
		{2, time.Second, time.Second, false}, // Retry-After is a floor too
		{3, 0, 0, true},                      // third attempt failed: give up
	}
	for _, tt := range tests {
		wait, _, giveUp := b.Next(tt.attempts, 0, tt.retryAfter, 0)
		if wait != tt.wait || giveUp != tt.giveUp {
			t.Errorf("Next(%d, ra=%v) = %v, %v; want %v, %v", tt.attempts, tt.retryAfter, wait, giveUp, tt.wait, tt.giveUp)
		}
	}
	ignoring := mustNew(t, Spec{Kind: "fixed", Base: 100 * ms})
	if wait, _, _ := ignoring.Next(1, 0, time.Second, 0); wait != 100*ms {
		t.Errorf("without honor_retry_after the wait is %v, want 100ms", wait)
	}
}

// TestNextFull: where FullJitterOnly holds, NextFull gives Next's wait
// for every attempt and draw (and Next never gives up); each client rule
// and every other policy turns it off.
func TestNextFull(t *testing.T) {
	only := []struct {
		spec       Spec
		retryAfter time.Duration
		want       bool
	}{
		{Spec{Kind: "full", Base: 100 * ms, Cap: 3200 * ms}, time.Second, true},
		{Spec{Kind: "full", Base: 100 * ms, Cap: 3200 * ms, HonorRetryAfter: true}, 0, true},
		{Spec{Kind: "full", Base: 100 * ms, Cap: 3200 * ms, HonorRetryAfter: true}, time.Second, false},
		{Spec{Kind: "full", Base: 100 * ms, Cap: 3200 * ms, MaxAttempts: 4}, 0, false},
		{Spec{Kind: "full", Base: 100 * ms, Cap: 3200 * ms, MinDelayAfterReject: ms}, 0, false},
		{Spec{Kind: "equal", Base: 100 * ms, Cap: 3200 * ms}, 0, false},
		{Spec{Kind: "exponential", Base: 100 * ms, Cap: 3200 * ms}, 0, false},
	}
	for _, tt := range only {
		b := mustNew(t, tt.spec)
		if got := b.FullJitterOnly(tt.retryAfter); got != tt.want {
			t.Errorf("%+v, Retry-After %v: FullJitterOnly %v, want %v", tt.spec, tt.retryAfter, got, tt.want)
		}
		if !tt.want {
			continue
		}
		for a := 1; a <= 40; a++ {
			for i := uint64(0); i < 50; i++ {
				u := rng.Draw(3, i, uint64(a), rng.StreamBackoff)
				wait, _, giveUp := b.Next(a, 0, tt.retryAfter, u)
				if got := b.NextFull(a, u); got != wait || giveUp {
					t.Fatalf("%+v attempt %d: NextFull %v, Next %v (give up %v)", tt.spec, a, got, wait, giveUp)
				}
			}
		}
	}
}

// TestSpecErrors pins each parameter rule and the key it names.
func TestSpecErrors(t *testing.T) {
	tests := []struct {
		spec Spec
		key  string
	}{
		{Spec{Kind: "bogus"}, "name"},
		{Spec{Kind: "none"}, "min_gap"},
		{Spec{Kind: "fixed"}, "base"},
		{Spec{Kind: "full", Base: 100 * ms, Cap: 50 * ms}, "cap"},
		{Spec{Kind: "full", Cap: 50 * ms}, "base"},
		{Spec{Kind: "exponential", Base: ms, Cap: 2 * ms, Multiplier: 0.5}, "multiplier"},
		{Spec{Kind: "grpc", Jitter: 1.5}, "jitter"},
		{Spec{Kind: "full", Base: ms, Cap: ms, MaxAttempts: -1}, "max_attempts"},
		{Spec{Kind: "full", Base: ms, Cap: ms, MinDelayAfterReject: -ms}, "min_delay_after_reject"},
	}
	for _, tt := range tests {
		_, err := New(tt.spec)
		pe, ok := err.(*param.Error)
		if !ok || pe.Key != tt.key {
			t.Errorf("New(%+v) = %v, want an error on %q", tt.spec, err, tt.key)
		}
	}
}
