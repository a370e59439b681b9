package budget

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"stormsim/config"
	"stormsim/policies"
	"stormsim/sim"
)

// shapes are storms of each kind the estimate distinguishes, small enough
// to run in a test; attempts stay within a few per client so that the
// span (the horizon's business, not the estimate's) stays short.
var shapes = map[string]string{
	"core, slots":    "admission: {kind: slots, slot: 10ms, per_slot: 1000}\npolicies: [{name: full, base: 100ms, cap: 3200ms}]\n",
	"core, stateful": "admission: {kind: slots, slot: 10ms, per_slot: 1000}\npolicies: [{name: decorrelated, base: 100ms, cap: 3200ms}]\n",
	"core, bucket":   "initial_jitter: 1s\nadmission: {kind: token_bucket, rate: 20000, burst: 1000}\npolicies: [{name: full, base: 100ms, cap: 3200ms}]\n",
	"network":        "admission: {kind: token_bucket, rate: 20000, burst: 1000}\npolicies: [{name: full, base: 100ms, cap: 3200ms}]\nnetwork: {rtt: {dist: lognormal, median: 30ms, sigma: 0.5}}\n",
	"capacity":       "admission: {kind: token_bucket, rate: 20000, burst: 1000}\npolicies: [{name: full, base: 100ms, cap: 3200ms}]\ncapacity: {admit_per_s: 5000, reject_per_s: 50000}\n",
	"decision share": "admission: {kind: token_bucket, rate: 20000, burst: 1000}\npolicies: [{name: full, base: 100ms, cap: 3200ms, timeout: 1s}]\nhorizon: 60s\n" +
		"capacity: {admit_per_s: 20000, decide: arrival, decide_per_s: 100000, decision_share: 5us}\n",
	"deploy":              "admission: {kind: token_bucket, rate: 20000, burst: 1000, retry_after: 1s}\npolicies: [{name: full, base: 100ms, cap: 3200ms}]\nnetwork: {rtt: {dist: lognormal, median: 30ms, sigma: 0.5}}\ncapacity: {admit_per_s: 20000}\ngateways: {count: 4, balancer: round_robin, health_check: 1s}\ndatabase: {rows_per_sync: 25}\ndeploy: {startup: 2s}\ndrain: {pace: {kind: spread, over: 2s}, reconnect_hint: {kind: reserved}}\n",
	"every model at once": "initial_jitter: 1s\nadmission: {kind: token_bucket, rate: 5000, burst: 500, retry_after: 1s}\npolicies: [{name: decorrelated, base: 1s, cap: 30s, honor_retry_after: true}]\nmetrics: {window: 1s}\nfailure: {kind: crash}\ndetection: {kind: reset, delay: {dist: uniform, min: 0s, max: 500ms}}\nlease: {duration: 10s, renew_every: 3s, sweep_every: 3s}\nnetwork: {rtt: {dist: lognormal, median: 30ms, sigma: 0.5}, server_time: {dist: uniform, min: 2ms, max: 10ms}}\ncapacity: {admit_per_s: 2000}\ngateways: {count: 5, balancer: least_connections, health_check: 2s}\ndatabase: {rows_per_sync: 25, read_budget_per_s: 25000}\n",
}

func shape(tb testing.TB, name string, clients int) *sim.Scenario {
	tb.Helper()
	s, err := config.Parse(name, []byte(fmt.Sprintf("clients: %d\n", clients)+shapes[name]), nil)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// allocated runs one storm of s and returns the bytes it allocated, a
// run's on the average for a storm with a decision share, which runs it
// again and again and holds one run and two runs' decisions at a time.
func allocated(tb testing.TB, s *sim.Scenario) int64 {
	b, err := policies.New(s.Policies[0])
	if err != nil {
		tb.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := sim.Run(s, b, 1)
	runtime.ReadMemStats(&after)
	runs := int64(1)
	if r.Share != nil {
		runs = int64(r.Share.Passes)
	}
	return int64(after.TotalAlloc-before.TotalAlloc) / runs
}

// TestEstimateBoundsAllocation keeps the measured constants honest: a
// storm of each shape allocates (an upper bound on its peak heap) no more
// than StormBytes says. An engine change that needs more per client fails
// here, not on a user's machine.
func TestEstimateBoundsAllocation(t *testing.T) {
	for name := range shapes {
		t.Run(name, func(t *testing.T) {
			s := shape(t, name, 200_000)
			got, bound := allocated(t, s), StormBytes(s)
			if got > bound {
				t.Errorf("allocated %d B (%.1f a client), estimate %d B", got, float64(got)/float64(s.Clients), bound)
			}
		})
	}
}

// BenchmarkEngineBytes reports what each shape allocates per client, the
// figure CoreBytesPerClient and ModelBytesPerClient round up:
//
//	go test ./budget -run '^$' -bench EngineBytes -benchtime 1x
func BenchmarkEngineBytes(b *testing.B) {
	for name := range shapes {
		b.Run(name, func(b *testing.B) {
			s := shape(b, name, 1_000_000)
			var total int64
			for range b.N {
				total += allocated(b, s)
			}
			b.ReportMetric(float64(total)/float64(b.N)/float64(s.Clients), "bytes/client")
		})
	}
}

func TestRunEstimate(t *testing.T) {
	limits := Limits{MemoryBytes: 8 << 30, MemoryFrom: "test", Cores: 2}
	s := shape(t, "core, slots", 1000)
	s.Replications = 10
	e := Run(s, append(s.Policies, s.Policies[0]), limits, 0)
	values := int64(MetricsPerResult(s))
	// 2 policies x 10 replications; 2 at once on 2 cores.
	if e.Storms != 20 || e.Concurrent != 2 || e.Clients != 1000 {
		t.Errorf("storms %d concurrent %d clients %d", e.Storms, e.Concurrent, e.Clients)
	}
	if want := int64(1000*CoreBytesPerClient + StormOverheadBytes); e.StormBytes != want {
		t.Errorf("storm bytes %d, want %d", e.StormBytes, want)
	}
	if want := 20 * values * ValueBytes; e.KeptBytes != want {
		t.Errorf("kept %d, want %d", e.KeptBytes, want)
	}
	if want := int64(64<<10) + 2*values*JSONValueBytes + 20*values*JSONValueBytes; e.OutputBytes != want {
		t.Errorf("output %d, want %d", e.OutputBytes, want)
	}
	if want := ProcessBytes + 2*e.StormBytes + e.KeptBytes + 3*e.OutputBytes; e.MemoryBytes != want {
		t.Errorf("memory %d, want %d", e.MemoryBytes, want)
	}
	// 20 storms x 1000 clients = 20,000 attempts at least, on 2 cores,
	// with nothing to place (every first attempt at t = 0).
	if want := time.Duration(250_000); e.MinTime != want { // 20,000 / (40e6 x 2) s
		t.Errorf("time %v, want %v", e.MinTime, want)
	}
	if err := e.CheckRun(limits, 10); err != nil {
		t.Errorf("a small run refused: %v", err)
	}
	if e := Run(s, append(s.Policies, s.Policies[0]), limits, 1); e.Concurrent != 1 {
		t.Errorf("--workers 1: %d at once", e.Concurrent)
	}
}

func TestCheckRunNamesTheKeyToChange(t *testing.T) {
	limits := Limits{MemoryBytes: 1 << 30, MemoryFrom: "budget from the test", Cores: 2}
	huge := shape(t, "core, slots", 1000)
	huge.Clients = 2_000_000_000
	err := Run(huge, append(huge.Policies, huge.Policies[0]), limits, 0).CheckRun(limits, 1)
	// 2e9 clients x 32 B + 4 MiB = 59.6 GiB a storm, two at once, plus 64
	// MiB for the process and a few KiB of values: 119 GiB.
	oe, ok := err.(*OverError)
	if !ok || oe.Key != "clients" || oe.Message != "2,000,000,000 clients need about 119 GiB of memory (2 storms at once, 59.6 GiB each), over the budget of 1.00 GiB (budget from the test): lower clients, or run fewer storms at once (--workers; 2 now)" {
		t.Errorf("clients: %v", err)
	}
	many := shape(t, "core, slots", 1000)
	many.Replications = 1_000_000_000
	err = Run(many, append(many.Policies, many.Policies[0]), limits, 0).CheckRun(limits, many.Replications)
	if oe, ok := err.(*OverError); !ok || oe.Key != "replications" || !strings.HasPrefix(oe.Message, "1,000,000,000 replications (2,000,000,000 storms) keep about ") ||
		!strings.HasSuffix(oe.Message, ": lower replications") {
		t.Errorf("replications: %v", err)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"8GiB": 8 << 30, "512MiB": 512 << 20, "2G": 2 << 30, "500MB": 500e6, "1e9": 1e9, " 1.5 GiB ": 3 << 29} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "lots", "-1GiB", "1KiB", "0", "1e30"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
	}
}

func TestMachineLimits(t *testing.T) {
	l := Machine()
	if l.MemoryBytes < 1<<20 || l.Cores < 1 || !strings.HasPrefix(l.MemoryFrom, "half of this machine's ") {
		t.Errorf("%+v", l)
	}
}

func TestWatchCallsOverOnce(t *testing.T) {
	called := make(chan int64, 2)
	stop := Watch(1<<20, func(used int64) { called <- used })
	defer stop()
	select {
	case used := <-called:
		if used <= 1<<20 {
			t.Errorf("over called at %d bytes, under the limit", used)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a process over a 1 MiB limit was not reported")
	}
}

// TestCheckSweepNamesTheKeyToChange pins which key a sweep's refusal
// names: the memory first, then the disk, blamed on replications when one
// replication a point would fit, else on the grid.
func TestCheckSweepNamesTheKeyToChange(t *testing.T) {
	limits := Limits{MemoryBytes: 1 << 30, MemoryFrom: "test", Cores: 2}
	sh := SweepShape{Points: 25, Storms: 50, ClientStorms: 3000, MaxClients: 60, MaxStormBytes: 1 << 20, PointValues: 60, OutputBytes: 10 << 30}
	for _, tt := range []struct {
		name         string
		change       func(sh *SweepShape)
		replications int
		free         int64
		key          string
	}{
		{"fits", func(*SweepShape) {}, 2, 100 << 30, ""},
		{"unknown free disk", func(*SweepShape) {}, 2, -1, ""},
		{"the grid fills the disk", func(*SweepShape) {}, 1, 1 << 30, "axes"},
		{"replications fill the disk", func(*SweepShape) {}, 100, 1 << 30, "replications"},
		{"replications fill memory before the disk", func(sh *SweepShape) { sh.PointValues = 1 << 40 }, 100, 1 << 20, "replications"},
		{"clients fill memory", func(sh *SweepShape) { sh.MaxStormBytes = 1 << 40 }, 1, 100 << 30, "clients"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := sh
			tt.change(&s)
			err := Sweep(s, limits, 0).CheckSweep(limits, tt.free, tt.replications, "out")
			key := ""
			if oe, ok := err.(*OverError); ok {
				key = oe.Key
			}
			if key != tt.key {
				t.Errorf("error %v, want key %q", err, tt.key)
			}
		})
	}
}

// TestWorkTime: storms take a worker each for their Solo time, share the
// cores for their Core time, and none is quicker than the longest.
func TestWorkTime(t *testing.T) {
	w := Work{Solo: 4, Core: 6, Longest: 1.5}
	for _, c := range []struct {
		storms, cores int
		want          float64
	}{
		{1, 1, 6}, // one core does it all
		{1, 8, 4}, // one worker runs the storms one after another
		{2, 2, 3}, // the cores are the limit
		{4, 8, 1.5},
		{8, 8, 1.5}, // the longest storm
	} {
		if got := w.Time(c.storms, c.cores); got != time.Duration(c.want*float64(time.Second)) {
			t.Errorf("%d storms on %d cores: %v, want %vs", c.storms, c.cores, got, c.want)
		}
	}
	// A storm with latency goes at most its own speed with a second core,
	// and asks each core for twice the time.
	s, b := parseStorm(t, "clients: 1000\nadmission: {kind: unlimited}\npolicies: [{name: full, base: 100ms, cap: 1s}]\nnetwork: {rtt: {value: 10ms}}\n")
	got := StormWork(s, b)
	n, storm, core := 1000.0, NetworkStormAttemptsPerSecond, NetworkCoreAttemptsPerSecond // variables: float64 arithmetic, as StormWork's
	place := PlaceNetworkSecondsPerClient * n
	if want := (Work{Solo: n/storm + place, Core: n/core + place, Longest: n/storm + place}); got != want {
		t.Errorf("a storm with latency: %+v, want %+v", got, want)
	}
	if sum := got.Add(got).Times(2); sum.Solo != 4*got.Solo || sum.Core != 4*got.Core || sum.Longest != got.Longest {
		t.Errorf("two of them twice over: %+v", sum)
	}
}
