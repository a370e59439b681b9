package budget

import (
	"fmt"
	"math"
	"time"

	"stormsim/internal/human"
	"stormsim/policies"
	"stormsim/sim"
)

// The engine's speeds, upper bounds of what `go test ./sim -bench Storm`
// and the storms of BenchmarkStormsAboveTheTimeBound measure, so that a time
// computed from them is a lower bound. Each path has its own: a storm
// goes no faster than its Storm figure, and uses a core no faster than
// its Core figure (a storm with latency draws on a second core).
const (
	// CoreAttemptsPerSecond: without latency or a capacity; failure,
	// detection, lease, pool, drain, database, timeouts and horizons
	// included (16-23 M measured on this machine, 28 M at best).
	CoreAttemptsPerSecond = 40e6
	// QueueAttemptsPerSecond: with a capacity's queues, on one core
	// (5.4-8.3 M measured).
	QueueAttemptsPerSecond = 16e6
	// NetworkStormAttemptsPerSecond: with latency, a storm with a second
	// core for its draws (11.6-12.9 M measured); NetworkCoreAttemptsPerSecond
	// what it asks of each core (5.4 M measured on one).
	NetworkStormAttemptsPerSecond = 20e6
	NetworkCoreAttemptsPerSecond  = 10e6
	// PlaceSecondsPerClient is the set-up of a storm whose first attempts
	// are spread (initial jitter, detection, latency, a spread drain):
	// each client's first attempt placed in the timing wheel (50-120 ns
	// measured), and with latency PlaceNetworkSecondsPerClient (200-290
	// ns measured).
	PlaceSecondsPerClient        = 20e-9
	PlaceNetworkSecondsPerClient = 60e-9
)

// Work is a lower bound on the computing storms take.
type Work struct {
	Solo    float64 // seconds: each storm alone at its own top speed, added up
	Core    float64 // core-seconds: what they ask of the cores at the top speed of each
	Longest float64 // seconds: the longest storm alone
}

// StormWork is a lower bound on the computing of one storm of s in which
// every client uses backoff b: MinAttempts at the speeds of its path, and
// the placing of its first attempts.
func StormWork(s *sim.Scenario, b *policies.Backoff) Work {
	storm, core := CoreAttemptsPerSecond, CoreAttemptsPerSecond
	if s.Capacity != nil {
		storm, core = QueueAttemptsPerSecond, QueueAttemptsPerSecond
	}
	if s.Network != nil && !s.Network.IsZero() {
		storm, core = min(storm, NetworkStormAttemptsPerSecond), min(core, NetworkCoreAttemptsPerSecond)
	}
	place := 0.0
	switch {
	case s.Network != nil && !s.Network.IsZero():
		place = PlaceNetworkSecondsPerClient
	case spreadStart(s):
		place = PlaceSecondsPerClient
	}
	attempts, setUp := MinAttempts(s, b), place*float64(s.Clients)
	if s.Capacity != nil && s.Capacity.Shared() {
		// A decision or claim share's fixed point takes two runs at the least
		// (sim.ShareResult), each placing its first attempts again.
		attempts, setUp = 2*attempts, 2*setUp
	}
	solo := attempts/storm + setUp
	return Work{Solo: solo, Core: attempts/core + setUp, Longest: solo}
}

// spreadStart reports whether a storm's first attempts come at different
// instants, which the engine places one by one before it starts.
func spreadStart(s *sim.Scenario) bool {
	return s.InitialJitter > 0 || s.Detection != nil || s.Network != nil || s.Failure != nil && s.Failure.Spread
}

// Add is w and o together.
func (w Work) Add(o Work) Work {
	return Work{Solo: w.Solo + o.Solo, Core: w.Core + o.Core, Longest: max(w.Longest, o.Longest)}
}

// Times is w k times over (k replications), or a share of it (a shard:
// its longest storm stays).
func (w Work) Times(k float64) Work {
	return Work{Solo: w.Solo * k, Core: w.Core * k, Longest: w.Longest}
}

// Time is the least computing time of w with storms storms at once on
// cores cores: each storm takes a worker for its Solo time, the cores
// share Core, and no storm is quicker than the longest.
func (w Work) Time(storms, cores int) time.Duration {
	seconds := max(w.Solo/float64(max(1, storms)), w.Core/float64(max(1, cores)), w.Longest)
	if seconds > float64(math.MaxInt64/int64(time.Second)) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(seconds * float64(time.Second))
}

// DefaultMaxTime is the longest computing, as the lower bound says, that
// run and check take on without --max-time: a run of a few minutes is
// interactive, one the bound puts beyond this is a sweep's or a batch
// job's, started on purpose.
const DefaultMaxTime = 10 * time.Minute

// MaxTimeFlag is the flag that sets Limits.MaxTime.
const MaxTimeFlag = "--max-time"

// WithMaxTime returns l with the time limit set by the user (0: none).
func (l Limits) WithMaxTime(d time.Duration) Limits {
	l.MaxTime = d
	return l
}

// CheckTime refuses an estimate whose computing time passes the limit,
// naming the key that drives it: the horizon when clients that never
// connect try until it, else clients.
func (e Estimate) CheckTime(limits Limits, s *sim.Scenario) error {
	if limits.MaxTime <= 0 || e.MinTime <= limits.MaxTime {
		return nil
	}
	key := "clients"
	if s.Horizon > 0 {
		key = "horizon"
	}
	need := "needs"
	if e.Storms > 1 {
		need = "need"
	}
	return &OverError{Key: key, Time: true, Message: fmt.Sprintf("%s storm%s of %s clients %s at least %s of computing, over the limit of %s: lower %s, or allow it with %s %s",
		human.Count(e.Storms), plural(int(min(e.Storms, 2))), human.Count(int64(e.Clients)), need, human.Duration(e.MinTime), human.Duration(limits.MaxTime),
		map[string]string{"clients": "clients", "horizon": "the horizon or clients"}[key], MaxTimeFlag, roundUp(e.MinTime))}
}

// roundUp is d rounded up to a whole minute, or hour beyond two, as
// --max-time takes it: "15m", "22h".
func roundUp(d time.Duration) string {
	if d > 2*time.Hour {
		return fmt.Sprintf("%dh", (d+time.Hour-1)/time.Hour)
	}
	return fmt.Sprintf("%dm", (d+time.Minute-1)/time.Minute)
}
