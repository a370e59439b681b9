package budget

import (
	"math"
	"runtime"
	"testing"
	"time"

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

// boundedStorms are storms of every model path, each with whether the
// attempts bound says more than one attempt a client: the storms of the
// lower-bound tests (attempts and time).
var boundedStorms = []struct {
	name, yaml    string
	beyondOneEach bool
}{
	{"core, too short to say more", "clients: 1000\nadmission: {kind: slots, slot: 10ms, per_slot: 5}\npolicies: [{name: exponential, base: 100ms, cap: 3200ms}]\n", false},
	{"core, slots", "clients: 20000\nadmission: {kind: slots, slot: 10ms, per_slot: 5}\npolicies: [{name: full, base: 100ms, cap: 3200ms}]\n", true},
	{"core, bucket and retry-after", "clients: 5000\ninitial_jitter: 100ms\nadmission: {kind: token_bucket, rate: 40, burst: 10, retry_after: 1s}\npolicies: [{name: full, base: 100ms, cap: 3200ms, min_delay_after_reject: 200ms, honor_retry_after: true}]\n", true},
	{"core, no backoff", "clients: 2000\nadmission: {kind: slots, slot: 10ms, per_slot: 1}\npolicies: [{name: none, min_gap: 5ms}]\n", true},
	{"core, stateful policy", "clients: 4000\nadmission: {kind: slots, slot: 10ms, per_slot: 2}\npolicies: [{name: decorrelated, base: 100ms, cap: 1s}]\n", true},
	{"unlimited admission", "clients: 300\nadmission: {kind: unlimited}\npolicies: [{name: decorrelated, base: 100ms, cap: 1s}]\n", false},
	{"clients that give up", "clients: 3000\nadmission: {kind: slots, slot: 10ms, per_slot: 5}\npolicies: [{name: full, base: 100ms, cap: 3200ms, max_attempts: 3}]\n", false},
	{"a horizon", "clients: 20000\nadmission: {kind: slots, slot: 10ms, per_slot: 2}\npolicies: [{name: full, base: 100ms, cap: 1s}]\nhorizon: 20s\n", true},
	{"a horizon before some first attempts", "clients: 2000\ninitial_jitter: 2s\nadmission: {kind: slots, slot: 10ms, per_slot: 2}\npolicies: [{name: full, base: 100ms, cap: 1s}]\nhorizon: 1s\n", false},
	{"timeouts", "clients: 20000\ninitial_jitter: 1s\nadmission: {kind: token_bucket, rate: 300, burst: 50}\npolicies: [{name: full, base: 100ms, cap: 1s, timeout: 500ms}]\nhorizon: 30s\n", true},
	{"a capacity and timeouts: the storm that never ends", "clients: 30000\ninitial_jitter: 1s\nadmission: {kind: unlimited, retry_after: 1s}\npolicies: [{name: socketio, timeout: 2s}]\nhorizon: 60s\n" +
		"capacity: {admit_per_s: 1000, reject_per_s: 10000, decide: arrival}\n", true},
	{"a capacity at its turn, shedding and skipping", "clients: 20000\ninitial_jitter: 1s\nadmission: {kind: token_bucket, rate: 2000, burst: 100, retry_after: 1s}\npolicies: [{name: full, base: 100ms, cap: 2s, timeout: 1s, honor_retry_after: true}]\nhorizon: 30s\n" +
		"capacity: {admit_per_s: 500, reject_per_s: 20000, max_queue: 400, abandoned: skip}\n", true},
	{"a capacity without timeouts", "clients: 20000\nadmission: {kind: token_bucket, rate: 500, burst: 10}\npolicies: [{name: full, base: 100ms, cap: 1s}]\ncapacity: {admit_per_s: 400}\n", false},
	{"latency", "clients: 20000\ninitial_jitter: 100ms\nadmission: {kind: slots, slot: 10ms, per_slot: 5}\npolicies: [{name: full, base: 100ms, cap: 1s}]\nnetwork: {rtt: {dist: lognormal, median: 30ms, sigma: 0.5}}\n", true},
	{"latency with server time and timeouts", "clients: 20000\ninitial_jitter: 100ms\nadmission: {kind: token_bucket, rate: 400, burst: 40}\npolicies: [{name: full, base: 100ms, cap: 1s, timeout: 300ms}]\nhorizon: 30s\n" +
		"network: {rtt: {dist: uniform, min: 10ms, max: 50ms}, server_time: {dist: uniform, min: 2ms, max: 10ms}}\n", true},
	{"a crash, detection and a lease", "clients: 20000\nadmission: {kind: slots, slot: 10ms, per_slot: 5}\npolicies: [{name: full, base: 100ms, cap: 1s}]\nfailure: {kind: crash}\n" +
		"detection: {kind: reset, delay: {dist: uniform, min: 0s, max: 500ms}}\nlease: {duration: 10s, renew_every: 3s, sweep_every: 3s}\n", true},
	{"a hang and heartbeats", "clients: 20000\nadmission: {kind: slots, slot: 10ms, per_slot: 5}\npolicies: [{name: full, base: 100ms, cap: 1s}]\nfailure: {kind: hang}\ndetection: {kind: heartbeat, ping: 1s, idle: 3s}\n", true},
	{"a pool", "clients: 20000\nadmission: {kind: token_bucket, rate: 100, burst: 10, retry_after: 1s}\npolicies: [{name: full, base: 100ms, cap: 2s, honor_retry_after: true}]\n" +
		"gateways: {count: 4, balancer: least_connections, health_check: 2s}\n", true},
	{"a pool with its own admission, at random", "clients: 20000\nadmission: {kind: unlimited}\npolicies: [{name: full, base: 100ms, cap: 2s}]\n" +
		"gateways: {count: 3, balancer: random, health_check: 1s, admission: {kind: slots, slot: 10ms, per_slot: 2}}\n", true},
	{"a database", "clients: 20000\nadmission: {kind: slots, slot: 10ms, per_slot: 5}\npolicies: [{name: full, base: 100ms, cap: 1s}]\ndatabase: {rows_per_sync: 25, read_budget_per_s: 25000}\n", true},
	{"a spread drain and its policy", "clients: 20000\nadmission: {kind: slots, slot: 10ms, per_slot: 5, retry_after: 1s}\npolicies: [{name: full, base: 100ms, cap: 1s}]\n" +
		"failure: {kind: drain, grace: 2s, spread: true}\ndrain_policy: {name: exponential, base: 200ms, cap: 2s}\ngateways: {count: 3, health_check: 1s}\n", true},
	{"a drain afterwards", "clients: 20000\nadmission: {kind: slots, slot: 10ms, per_slot: 5}\npolicies: [{name: full, base: 100ms, cap: 1s}]\nthen_drain: {grace: 3s, admission: {kind: unlimited}}\n", true},
	{"every model at once", "clients: 20000\ninitial_jitter: 1s\nadmission: {kind: token_bucket, rate: 500, burst: 50, retry_after: 1s}\npolicies: [{name: decorrelated, base: 1s, cap: 10s, honor_retry_after: true, timeout: 3s}]\n" +
		"metrics: {window: 1s}\nhorizon: 40s\nfailure: {kind: crash}\ndetection: {kind: reset, delay: {dist: uniform, min: 0s, max: 500ms}}\nlease: {duration: 10s, renew_every: 3s, sweep_every: 3s}\n" +
		"network: {rtt: {dist: lognormal, median: 30ms, sigma: 0.5, cap: 200ms}, server_time: {dist: uniform, min: 2ms, max: 10ms}}\ncapacity: {admit_per_s: 50}\n" +
		"gateways: {count: 5, balancer: least_connections, health_check: 2s}\ndatabase: {rows_per_sync: 25, read_budget_per_s: 25000}\n", true},
}

// parseStorm is a storm of boundedStorms, and its policy.
func parseStorm(t testing.TB, yaml string) (*sim.Scenario, *policies.Backoff) {
	t.Helper()
	s, err := config.Parse("s.yaml", []byte(yaml), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := policies.New(s.Policies[0])
	if err != nil {
		t.Fatal(err)
	}
	return s, b
}

// runCounted runs one storm of s and returns its result and a lower
// bound on the attempts the engine processed: the attempts reported every
// sim.ProgressEvery, or those decided by the horizon, whichever is more.
func runCounted(s *sim.Scenario, b *policies.Backoff) (sim.Result, float64) {
	var reported int64
	r := sim.RunWithProgress(s, b, 1, func(p sim.Progress) bool {
		reported = max(reported, p.Attempts)
		return true
	})
	return r, float64(max(reported, r.Attempts))
}

// TestMinAttemptsBoundsRealStorms runs a storm of every model path and
// checks that the bound never exceeds the attempts processed, and that it
// says more than "one each" where admission or a capacity is the
// bottleneck long enough. Deterministic: no clock is read.
func TestMinAttemptsBoundsRealStorms(t *testing.T) {
	for _, tt := range boundedStorms {
		t.Run(tt.name, func(t *testing.T) {
			s, b := parseStorm(t, tt.yaml)
			_, processed := runCounted(s, b)
			bound := MinAttempts(s, b)
			if bound > processed {
				t.Errorf("bound %.0f above the %.0f attempts processed", bound, processed)
			}
			if beyond := bound > float64(s.Clients); beyond != tt.beyondOneEach {
				t.Errorf("bound %.0f for %d clients (%.0f processed): beyond one each %v, want %v", bound, s.Clients, processed, beyond, tt.beyondOneEach)
			}
			t.Logf("bound %.0f, processed at least %.0f (%.0f%%)", bound, processed, 100*bound/processed)
		})
	}
}

// BenchmarkStormsAboveTheTimeBound runs a storm of every model path and
// fails when one takes less than the time bound puts on it: when the
// engine (or the machine) has become faster than the speeds in time.go,
// which are then to be measured again. A benchmark, not a test: it reads
// the clock, and a storm of 20 us is timed over many runs. It reports the
// bound as a share of the time taken (0-35 % on this machine).
//
//	go test ./budget -run '^$' -bench StormsAboveTheTimeBound
func BenchmarkStormsAboveTheTimeBound(b *testing.B) {
	for _, tt := range boundedStorms {
		b.Run(tt.name, func(b *testing.B) {
			s, pol := parseStorm(b, tt.yaml)
			bound := StormWork(s, pol).Time(1, runtime.GOMAXPROCS(0))
			for b.Loop() {
				sim.Run(s, pol, 1)
			}
			took := b.Elapsed() / time.Duration(b.N)
			if bound > took {
				b.Errorf("bound %v, above the %v a storm took", bound, took)
			}
			b.ReportMetric(100*bound.Seconds()/took.Seconds(), "%bound")
		})
	}
}
