// Package budget estimates what a run or a sweep will ask of the machine
// (memory, computing time, disk) before anything runs, so that a config
// asking for more than the machine has is refused with the estimate and
// the key to change, instead of dying minutes later out of memory.
//
// The memory estimate is an upper estimate of the process's peak:
//
//	base + workers x (clients x bytes per client + storm overhead)
//	     + storms x metrics x value bytes           (per-run values kept)
//	     + 3 x document bytes                        (the JSON being written)
//
// with the per-client bytes measured by the engine's benchmarks (see the
// constants); the time is a lower bound, the attempts MinAttempts bounds
// at the engine's top speed on the storm's path (time.go). A run whose
// simulated span grows its series is bounded by the scenario's horizon,
// not here.
package budget

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"stormsim/internal/human"
	"stormsim/policies"
	"stormsim/results"
	"stormsim/sim"
)

// Engine constants, measured with `go test ./sim -run '^$' -bench Storm`
// and this package's BenchmarkEngineBytes (allocated bytes per client, an
// upper bound on a storm's peak heap); TestEstimateBoundsAllocation fails
// when the engine outgrows them.
const (
	// CoreBytesPerClient bounds a storm without latency, capacity or pool:
	// 21-27 B a client measured (pending event, connect time, windows).
	CoreBytesPerClient = 32
	// ModelBytesPerClient bounds a storm with the failure and load models:
	// 80-100 B measured at a million clients (connect times kept in full,
	// handshake queues, 20-byte events).
	ModelBytesPerClient = 112
	// DeployBytesPerClient is what a rolling deploy adds to a storm with
	// models: each client's gateway, goaways and last goaway (11 B), and
	// a drained gateway's goaways held as events until they are due
	// (129 B a client in all measured at a million clients, 4 gateways).
	DeployBytesPerClient = 48
	// StormOverheadBytes is a storm's memory besides its clients: the
	// timing wheel's ring and scratch, the copies in which the next bucket
	// is sorted ahead (at most 3.3 MB), a short storm's series.
	StormOverheadBytes = 8 << 20
	// ProcessBytes is the process itself: runtime, fonts, charts.
	ProcessBytes = 64 << 20
	// ValueBytes is one metric value of one run, kept in memory until the
	// summary over replications is written.
	ValueBytes = 8
	// JSONValueBytes is one metric value of one run in a result document
	// ("1234.5678901234, ").
	JSONValueBytes = 20
	// TextValueBytes is one value in a sweep's line or CSV cell, on
	// average: counts are short, times have a few decimals ("219.979471,").
	TextValueBytes = 12
	// NameBytes is one metric name in a sweep's line.
	NameBytes = 24
)

// Limits are what a command may ask of the machine.
type Limits struct {
	MemoryBytes int64         // the process's peak memory
	MemoryFrom  string        // where MemoryBytes comes from, for messages
	Cores       int           // CPUs that run storms at once
	MaxTime     time.Duration // the longest computing a run may ask for, as MinTime bounds it; 0: any
}

// MemoryFlag is the flag that sets Limits.MemoryBytes.
const MemoryFlag = "--max-memory"

// Machine returns the default limits: half of this machine's memory (the
// smaller of physical memory and a cgroup's limit), leaving the rest to
// the system and to whatever else runs, every CPU, and DefaultMaxTime.
func Machine() Limits {
	total := machineMemory()
	return Limits{MemoryBytes: total / 2, Cores: runtime.GOMAXPROCS(0), MaxTime: DefaultMaxTime,
		MemoryFrom: "half of this machine's " + human.Bytes(total) + "; " + MemoryFlag + " SIZE sets it"}
}

// WithMemory returns l with the memory budget set by the user.
func (l Limits) WithMemory(bytes int64) Limits {
	l.MemoryBytes = bytes
	l.MemoryFrom = "set by " + MemoryFlag
	return l
}

// machineMemory is physical memory, or a smaller cgroup limit; 8 GiB
// when neither can be read.
func machineMemory() int64 {
	total := int64(0)
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
				if err == nil {
					total = kb << 10
				}
			}
		}
	}
	if total <= 0 {
		total = 8 << 30
	}
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if data, err := os.ReadFile(f); err == nil {
			if n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64); err == nil && n > 0 && n < total {
				total = n
			}
		}
	}
	return total
}

// ParseSize reads a size such as 8GiB, 512MiB, 2G, 500MB or 1e9 (bytes);
// the binary and decimal prefixes mean what they say.
func ParseSize(s string) (int64, error) {
	text := strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   float64
	}{
		{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
		{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1},
	}
	mult := 1.0
	for _, u := range units {
		if rest, ok := strings.CutSuffix(text, u.suffix); ok {
			text, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || !(f*mult >= 1<<20) || f*mult > math.MaxInt64/2 {
		return 0, fmt.Errorf("want a size of at least 1MiB such as 8GiB or 500MB (got %q)", s)
	}
	return int64(f * mult), nil
}

// Estimate is what a run or a sweep asks of the machine.
type Estimate struct {
	Storms      int64         // storms to run
	Clients     int           // clients in the largest storm
	Concurrent  int           // storms run at once
	StormBytes  int64         // the largest storm's memory
	KeptBytes   int64         // per-run values kept until they are written
	OutputBytes int64         // what is written (the document, or the sweep's files)
	MemoryBytes int64         // the process's peak, an upper estimate
	MinTime     time.Duration // computing time, a lower bound
}

// Run estimates stormsim run (and check) of s with the selected policies
// (specs), on workers goroutines (0: every core).
func Run(s *sim.Scenario, specs []policies.Spec, limits Limits, workers int) Estimate {
	reps := int64(max(1, s.Replications))
	n := len(specs)
	e := Estimate{Storms: int64(n) * reps, Clients: s.Clients, StormBytes: StormBytes(s)}
	e.Concurrent = concurrent(e.Storms, limits, workers)
	values := int64(MetricsPerResult(s))
	e.KeptBytes = e.Storms * values * ValueBytes
	e.OutputBytes = 64<<10 + int64(n)*values*JSONValueBytes
	if reps > 1 {
		e.OutputBytes += e.Storms * values * JSONValueBytes
	}
	// The document is built in memory, indented into a second buffer and
	// written from it: three copies at the peak.
	e.MemoryBytes = ProcessBytes + int64(e.Concurrent)*e.StormBytes + e.KeptBytes + 3*e.OutputBytes
	var w Work
	for _, spec := range specs {
		if b, err := policies.New(spec); err == nil {
			w = w.Add(StormWork(s, b))
		}
	}
	e.MinTime = w.Times(float64(reps)).Time(e.Concurrent, limits.Cores)
	return e
}

func concurrent(storms int64, limits Limits, workers int) int {
	if workers <= 0 {
		workers = max(1, limits.Cores)
	}
	return int(min(int64(workers), max(1, storms)))
}

// StormBytes is one storm of s's memory.
func StormBytes(s *sim.Scenario) int64 {
	perClient := int64(CoreBytesPerClient)
	if hasModels(s) {
		perClient = ModelBytesPerClient
	}
	if s.Deploy != nil {
		perClient += DeployBytesPerClient
	}
	return int64(s.Clients)*perClient + StormOverheadBytes + shareBytes(s)
}

// DecisionBytes is one decision's or one claim's time kept by a storm
// with a decision or a claim share: this run's and the previous run's
// (sim.ShareResult), 8 B each, each list up to twice its length while it
// grows by appending.
const DecisionBytes = 32

// shareBytes bounds the decisions and claims a storm with a decision or a
// claim share keeps: each gateway's decision stage makes one decision every
// 1/decide_per_s at most, and its claim stage ends one claim every
// 1/max(admit_per_s, wasted_per_s) at most, up to the horizon, whatever the
// storm does. Claims are kept with a claim share only.
func shareBytes(s *sim.Scenario) int64 {
	c := s.Capacity
	if c == nil || !c.Shared() || c.DecidePerS <= 0 {
		return 0
	}
	gateways := 1
	if s.Gateways != nil {
		gateways = s.Gateways.Count
	}
	horizon := s.EffectiveHorizon().Seconds()
	perGateway := horizon*c.DecidePerS + 1
	if c.ClaimShare > 0 {
		perGateway += horizon*max(c.AdmitPerS, c.WastedPerS) + 1
	}
	return int64(math.Min(float64(gateways)*perGateway*DecisionBytes, math.MaxInt64/4))
}

// hasModels reports whether s turns on a model that stores per-client state.
func hasModels(s *sim.Scenario) bool {
	return s.Network != nil || s.Capacity != nil || s.Gateways != nil || s.Lease != nil ||
		s.Detection != nil || s.Database != nil || s.ThenDrain != nil || s.Failure != nil ||
		s.Drain != nil || s.Deploy != nil
}

// MetricsPerResult bounds the metrics one result of s has: every numeric
// field of a result that its models produce, the per-gateway ones once
// per gateway.
func MetricsPerResult(s *sim.Scenario) int {
	gateways := 0
	if s.Gateways != nil {
		gateways = s.Gateways.Count
	}
	on := map[string]bool{}
	for _, k := range results.ModelsOn(s) {
		on[k] = true
	}
	n := 0
	for _, name := range results.ResultFieldNames() {
		keys := results.ModelKeys(name)
		if keys != nil && !slices.ContainsFunc(keys, func(k string) bool { return on[k] }) {
			continue
		}
		if strings.Contains(name, "[]") {
			n += gateways
		} else {
			n++
		}
	}
	return n
}

// OverError is an estimate beyond the limits: Key is the config key (or
// flag) to change, Message says by how much and what to do. Time: the
// time limit was passed (the memory budget otherwise).
type OverError struct {
	Key     string
	Message string
	Time    bool
}

func (e *OverError) Error() string { return e.Key + ": " + e.Message }

// CheckRun refuses a run estimate beyond the memory budget, naming the key
// that drives it: clients for the storms in memory at once, replications
// for the values kept over them.
func (e Estimate) CheckRun(limits Limits, replications int) error {
	if e.MemoryBytes <= limits.MemoryBytes {
		return nil
	}
	engine := int64(e.Concurrent) * e.StormBytes
	if engine >= e.KeptBytes+3*e.OutputBytes {
		fix := "lower clients"
		if e.Concurrent > 1 {
			fix += fmt.Sprintf(", or run fewer storms at once (--workers; %d now)", e.Concurrent)
		}
		return &OverError{Key: "clients", Message: fmt.Sprintf("%s clients need about %s of memory (%d storm%s at once, %s each), over the budget of %s (%s): %s",
			human.Count(int64(e.Clients)), human.Bytes(e.MemoryBytes), e.Concurrent, plural(e.Concurrent), human.Bytes(e.StormBytes),
			human.Bytes(limits.MemoryBytes), limits.MemoryFrom, fix)}
	}
	return &OverError{Key: "replications", Message: fmt.Sprintf("%s replications (%s storms) keep about %s of per-run values and write a %s document, about %s of memory in all, over the budget of %s (%s), and need at least %s of computing: lower replications",
		human.Count(int64(replications)), human.Count(e.Storms), human.Bytes(e.KeptBytes), human.Bytes(e.OutputBytes),
		human.Bytes(e.MemoryBytes), human.Bytes(limits.MemoryBytes), limits.MemoryFrom, human.Duration(e.MinTime))}
}

// Summary is the estimate in one line, for validate and for a sweep's
// announcement.
func (e Estimate) Summary(limits Limits) string {
	return fmt.Sprintf("%s storm%s of up to %s clients: about %s of memory (budget %s), at least %s of computing on %d core%s",
		human.Count(e.Storms), plural(int(min(e.Storms, 2))), human.Count(int64(e.Clients)), human.Bytes(e.MemoryBytes),
		human.Bytes(limits.MemoryBytes), human.Duration(e.MinTime), min(e.Concurrent, limits.Cores), plural(min(e.Concurrent, limits.Cores)))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
