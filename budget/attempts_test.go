package budget

import (
	"fmt"
	"math"
	"testing"

	"stormsim/config"
	"stormsim/policies"
	"stormsim/sim"
)

// TestWaitIntegralAgainstASum checks the closed form against the plain
// sum over clients it bounds from below: for the nondecreasing wait of the
// k-th client admitted, the sum over k = 1..N lies between the integral
// over [0, N] and the integral plus one client's longest wait.
func TestWaitIntegralAgainstASum(t *testing.T) {
	for _, tt := range []struct{ n, bias, r, t0, h float64 }{
		{1000, 10, 500, 0, 86400},
		{1000, 10, 5, 0, 60},
		{5000, 0, 40, 0.1, 30},
		{300, 200, 1, 2, 100},
		{300, 500, 1, 0, 100}, // every client in with the first windows
		{10, 0, 1, 50, 40},    // a horizon before the first attempt
	} {
		sum := 0.0
		for k := 1; k <= int(tt.n); k++ {
			sum += math.Max(0, math.Min((float64(k)-tt.bias)/tt.r, tt.h)-tt.t0)
		}
		got := waitIntegral(tt.n, tt.bias, tt.r, tt.t0, tt.h)
		slack := math.Max(0, tt.h-tt.t0)
		if got > sum+1e-6 || got < sum-slack-1e-6 {
			t.Errorf("%+v: integral %v, sum %v (slack %v)", tt, got, sum, slack)
		}
	}
}

// TestMinAttemptsBoundsRealStorms runs core storms and checks that the
// bound never exceeds the attempts they made, and that it says more than
// "one each" when admission is the bottleneck.
func TestMinAttemptsBoundsRealStorms(t *testing.T) {
	tests := []struct {
		yaml          string
		beyondOneEach bool
	}{
		{"clients: 1000\nadmission: {kind: slots, slot: 10ms, per_slot: 5}\npolicies: [{name: exponential, base: 100ms, cap: 3200ms}]\n", false}, // 2 s of admissions: too short to say more
		{"clients: 20000\nadmission: {kind: slots, slot: 10ms, per_slot: 5}\npolicies: [{name: full, base: 100ms, cap: 3200ms}]\n", true},
		{"clients: 5000\ninitial_jitter: 100ms\nadmission: {kind: token_bucket, rate: 40, burst: 10, retry_after: 1s}\npolicies: [{name: full, base: 100ms, cap: 3200ms, min_delay_after_reject: 200ms, honor_retry_after: true}]\n", true},
		{"clients: 2000\nadmission: {kind: slots, slot: 10ms, per_slot: 1}\npolicies: [{name: none, min_gap: 5ms}]\n", true},
		{"clients: 300\nadmission: {kind: unlimited}\npolicies: [{name: decorrelated, base: 100ms, cap: 1s}]\n", false},
		{"clients: 3000\nadmission: {kind: slots, slot: 10ms, per_slot: 5}\npolicies: [{name: full, base: 100ms, cap: 3200ms, max_attempts: 3}]\n", false},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			s, err := config.Parse("s.yaml", []byte(tt.yaml), nil)
			if err != nil {
				t.Fatal(err)
			}
			b, err := policies.New(s.Policies[0])
			if err != nil {
				t.Fatal(err)
			}
			bound, got := MinAttempts(s, b), float64(sim.Run(s, b, 1).Attempts)
			if bound > got {
				t.Errorf("bound %.0f above the %.0f attempts made", bound, got)
			}
			if beyond := bound > float64(s.Clients); beyond != tt.beyondOneEach {
				t.Errorf("bound %.0f for %d clients (%.0f made): beyond one each %v, want %v", bound, s.Clients, got, beyond, tt.beyondOneEach)
			}
		})
	}
}
