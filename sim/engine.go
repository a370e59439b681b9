package sim

import (
	"runtime"
	"time"
	"unsafe"

	"stormsim/models"
	"stormsim/policies"
)

// Run simulates one storm of s (already resolved) in which every client
// reconnects with backoff b, drawing randomness from seed.
//
// Attempts are processed in order of (time, scheduling order): among attempts
// at the same instant, the one scheduled first goes first. The engine is a
// timing wheel whose buckets are stably radix-sorted by time when reached,
// which yields exactly that order at a few nanoseconds per attempt; a plain
// priority queue in the tests checks it.
func Run(s *Scenario, b *policies.Backoff, seed uint64) Result {
	return runTraced(s, b, seed, nil, nil)
}

// Progress is where a running storm stands.
type Progress struct {
	Now       time.Duration // simulated time of the attempt being processed
	Horizon   time.Duration // when the run stops at the latest
	Attempts  int64         // attempts processed so far
	Connected int64         // clients connected so far (in a deploy, connected now)
	Clients   int
	// Placed is how many clients' first attempts are in place: below
	// Clients while the storm is set up, before any attempt is processed.
	Placed int
	// Pass is which run of a storm with a decision share this is (1 on;
	// at most MaxSharePasses: ShareResult), 0 for a storm run once. Now
	// starts again at each run.
	Pass int
}

// ProgressEvery is how many attempts RunWithProgress processes between
// two reports: how long a stop waits, a few milliseconds at the engine's speed.
const ProgressEvery = 1 << 16

// PlaceEvery is how many clients' first attempts RunWithProgress places
// between two reports while it sets a storm up: placing 10^8 clients takes
// tens of seconds, which must stop as soon as the storm itself would.
const PlaceEvery = 1 << 16

// RunWithProgress is Run, calling report every ProgressEvery attempts,
// and every PlaceEvery clients while first attempts are placed (from the
// caller's goroutine, so report must be quick). When report returns false
// the run stops at once and returns the zero Result: report is how a
// caller cancels a storm, set-up included.
func RunWithProgress(s *Scenario, b *policies.Backoff, seed uint64, report func(Progress) bool) Result {
	return runTraced(s, b, seed, nil, report)
}

func runTraced(s *Scenario, b *policies.Backoff, seed uint64, trace func(attemptTrace), report func(Progress) bool) Result {
	w := wheel{ringLimit: maxRingBuckets, minLook: minLook}
	if s.Capacity != nil && s.Capacity.Shared() {
		return runShared(s, b, seed, w, trace, report)
	}
	st := newStorm(s, b, seed)
	st.trace = trace
	if stopped := runStorm(st, w, report); stopped {
		return Result{} // a storm cut short has no result: nothing to summarise
	}
	return st.result()
}

// wheel is how the engine runs a storm: the most buckets its ring may
// have, and the smallest bucket whose next attempts' draws are made ahead
// on another core (0: none are). The results never depend on either; the
// tests vary both to exercise every path.
type wheel struct {
	ringLimit int64
	minLook   int
}

// runStorm runs st on a wheel w, with events that carry a payload when the
// storm needs one, and reports whether report stopped it.
func runStorm(st *storm, w wheel, report func(Progress) bool) (stopped bool) {
	switch {
	case st.rttInEvent:
		e := newEngine[paidEvent](st, w)
		e.report = report
		e.run()
		return e.stopped
	case st.plain:
		e := newEngine[packedEvent](st, w)
		e.report = report
		e.run()
		return e.stopped
	}
	e := newEngine[event](st, w)
	e.report = report
	e.run()
	return e.stopped
}

// Wheel geometry bounds: offsets within a bucket must fit in 32 bits, and
// the ring stays small enough to sweep quickly when sparse.
const (
	// About 8 ms: the ring's few hundred bucket tails stay in cache while
	// retries are appended, and few retries land in the bucket being
	// processed (those go through a heap).
	maxBucketWidth = time.Duration(1 << 23)
	maxRingBuckets = 1 << 16
)

type engine[E wheelEvent] struct {
	st *storm

	width     time.Duration // bucket width, 1<<shift nanoseconds
	shift     uint
	offBits   int
	ring      []bucket[E]
	mask      int64
	cur       int64 // bucket being processed
	ringCount int   // events stored in the ring
	free      []*chunk[E]
	slab      []chunk[E] // chunks allocated together, not yet used
	slabs     int        // chunks in the last slab
	soon      eventHeap  // pushed into the bucket being processed
	far       eventHeap  // beyond the ring's horizon
	seq       uint64
	pending   int
	scratch   [2][]E
	radix     radix

	report    func(Progress) bool // nil: no progress reports
	processed int64               // attempts processed
	stopped   bool                // report asked to stop

	ahead   lookahead // draws for the next bucket, made on another core
	minLook int       // the smallest bucket for ahead; 0: never

	// With packed events, the attempts of each client whose count is too
	// large for its event (packedAttMax and up); nil until one is.
	over []uint32
}

func newEngine[E wheelEvent](st *storm, w wheel) *engine[E] {
	s := st.s
	e := &engine[E]{st: st, minLook: w.minLook}
	ringLimit := w.ringLimit
	e.width = min(s.Metrics.Window, maxBucketWidth)
	if s.Admission.Kind == models.AdmissionSlots {
		e.width = min(e.width, s.Admission.Slot)
	}
	// A power-of-two width turns every bucket index into a shift; the width
	// only affects speed, never results, since buckets are sorted by time.
	e.shift = 10
	for e.shift < 31 && time.Duration(1)<<(e.shift+1) <= e.width {
		e.shift++
	}
	e.width = time.Duration(1) << e.shift
	e.offBits = int(e.shift)
	horizon := st.maxGap()/e.width + 2
	n := min(int64(64), ringLimit)
	for n < int64(horizon) && n < ringLimit {
		n *= 2
	}
	e.ring = make([]bucket[E], n)
	e.mask = n - 1
	e.soon.width, e.far.width, e.far.byBucket = e.width, e.width, true
	return e
}

func (e *engine[E]) run() {
	st := e.st
	if isPaid[E]() && e.minLook > 0 && runtime.GOMAXPROCS(0) > 1 {
		e.ahead.start(st, e.minLook, e.offBits)
		defer e.ahead.stop()
	}
	if st.deploy != nil {
		// Every client starts connected: the deploy's first step is the
		// first thing that happens.
		e.cur = int64(st.stepAt>>e.shift) - 1
		e.cur++
		e.migrate()
	} else if st.sameStart() {
		// Everyone's first attempt is at the same instant, in client order:
		// process them without storing N events.
		// They all precede anything they schedule, so the bucket they fall
		// in is left unopened (cur one before it) and collects their retries
		// like any later bucket.
		start, _ := st.firstArrival(0)
		e.cur = int64(start>>e.shift) - 1
		for c := 0; c < st.s.Clients && !e.stopped; c++ {
			e.attempt(start, uint32(c), 0, 0, 0)
		}
		e.cur++
		e.migrate()
	} else {
		// Two passes: the earliest send, which no arrival precedes, places
		// the wheel (where it starts changes no result), then every client
		// is pushed in client order (its scheduling order).
		earliest := st.firstSend(0)
		for c := 1; c < st.s.Clients; c++ {
			if c%PlaceEvery == 0 && e.placing(0) {
				return
			}
			earliest = min(earliest, st.firstSend(uint32(c)))
		}
		e.cur = int64(earliest>>e.shift) - 1 // nothing is being processed yet
		for c := 0; c < st.s.Clients; c++ {
			if c%PlaceEvery == 0 && c > 0 && e.placing(c) {
				return
			}
			if t, pay := st.firstArrival(uint32(c)); st.within(t) {
				e.push(t, uint32(c), 0, pay)
			}
		}
		e.cur++
		e.migrate()
	}
	for (e.pending > 0 || st.stepAt != never) && !e.stopped {
		if e.ringCount == 0 && len(e.soon.items) == 0 {
			next := st.stepAt
			if len(e.far.items) > 0 {
				next = min(next, e.far.items[0].t)
			}
			e.cur = max(e.cur, int64(next>>e.shift)) // jump over an empty stretch
			e.migrate()
		}
		e.processBucket()
		e.cur++
		e.migrate()
	}
}

// placing reports, during set-up, that placed clients' first attempts
// are in place, and whether report asked to stop.
func (e *engine[E]) placing(placed int) (stop bool) {
	if e.report != nil {
		e.stopped = !e.report(Progress{Horizon: e.st.horizon, Clients: e.st.s.Clients, Placed: placed})
	}
	return e.stopped
}

// migrate moves events from beyond the horizon into the ring slots that have
// come within it. They were pushed before anything now in those slots, so
// appending keeps each slot in scheduling order.
func (e *engine[E]) migrate() {
	limit := e.cur + int64(len(e.ring))
	for len(e.far.items) > 0 {
		bi := int64(e.far.items[0].t >> e.shift)
		if bi >= limit {
			return
		}
		te := e.far.pop()
		e.appendTo(bi, e.pack(event{off: uint32(te.t - time.Duration(bi)*e.width), client: te.client, attempts: te.attempts}, te.pay))
	}
}

func (e *engine[E]) push(t time.Duration, c, attempts, pay uint32) {
	e.pending++
	bi := int64(t >> e.shift)
	switch {
	case bi <= e.cur:
		e.seq++
		e.soon.push(timedEvent{t: t, seq: e.seq, client: c, attempts: attempts, pay: pay})
	case bi < e.cur+int64(len(e.ring)):
		e.appendTo(bi, e.pack(event{off: uint32(t - time.Duration(bi)*e.width), client: c, attempts: attempts}, pay))
	default:
		e.seq++
		e.far.push(timedEvent{t: t, seq: e.seq, client: c, attempts: attempts, pay: pay})
	}
}

// pack makes ev (and pay) an event of kind E, keeping aside an attempts
// count too large for a packed event.
func (e *engine[E]) pack(ev event, pay uint32) E {
	if isPacked[E]() && ev.attempts >= packedAttMax {
		if e.over == nil {
			e.over = make([]uint32, e.st.s.Clients)
		}
		e.over[ev.client] = ev.attempts
	}
	return makeEvent[E](ev, pay)
}

// unpack is pack undone: the event's common fields.
func (e *engine[E]) unpack(p *E) event {
	if isPacked[E]() {
		ev := unpacked(*(*packedEvent)(unsafe.Pointer(p)))
		if ev.attempts == packedAttMax {
			ev.attempts = e.over[ev.client]
		}
		return ev
	}
	return *head(p)
}

func (e *engine[E]) appendTo(bi int64, ev E) {
	b := &e.ring[bi&e.mask]
	at := b.n % chunkLen
	if at == 0 {
		var ch *chunk[E]
		if n := len(e.free); n > 0 {
			ch, e.free = e.free[n-1], e.free[:n-1]
		} else {
			ch = e.newChunk()
		}
		b.chunks = append(b.chunks, ch)
		b.tail = ch
	}
	b.tail.events[at] = ev
	b.n++
	e.ringCount++
}

// newChunk is a chunk never used: chunks are allocated in slabs that
// double up to maxSlab chunks, so that a storm of a million clients makes
// a few dozen allocations for its thousands of chunks, and a small one
// allocates little more than it uses.
func (e *engine[E]) newChunk() *chunk[E] {
	if len(e.slab) == 0 {
		e.slabs = min(maxSlab, max(minSlab, 2*e.slabs))
		e.slab = make([]chunk[E], e.slabs)
	}
	ch := &e.slab[0]
	e.slab = e.slab[1:]
	return ch
}

// The smallest and largest slab of chunks.
const (
	minSlab = 4
	maxSlab = 64
)

// processBucket runs every attempt of bucket cur in (time, scheduling order),
// merging in the attempts that are scheduled into it while it runs.
func (e *engine[E]) processBucket() {
	e.ahead.wait()
	b := &e.ring[e.cur&e.mask]
	n := b.n
	if cap(e.scratch[0]) < n {
		e.scratch[0] = make([]E, n, n+n/4)
		e.scratch[1] = make([]E, n, n+n/4)
	}
	var evs []E
	if first, ok := e.ahead.sortedFor(e.cur); ok {
		evs = e.mergeLater(b, any(first).([]E))
	} else {
		evs = sortBucket(&e.radix, b.chunks, n, e.scratch[0][:n], e.scratch[1][:n], e.offBits)
	}
	e.free = append(e.free, b.chunks...)
	b.chunks, b.tail, b.n = b.chunks[:0], nil, 0
	e.ringCount -= n
	if e.ahead.on {
		next, after := &e.ring[(e.cur+1)&e.mask], &e.ring[(e.cur+2)&e.mask]
		e.ahead.begin(e.cur+1, next.chunks, next.n, after.chunks, after.n)
	}
	base := time.Duration(e.cur) * e.width
	end := base + e.width
	i := 0
	for !e.stopped {
		if e.st.stepAt < end && e.stepDue(evs, i, n, base) {
			e.st.step(e.push)
			continue
		}
		if i < n && (len(e.soon.items) == 0 || base+time.Duration(offOf(&evs[i])) <= e.soon.items[0].t) {
			ev, pay, ahead := e.unpack(&evs[i]), payOf(&evs[i]), aheadOf(&evs[i])
			i++
			e.pending--
			e.attempt(base+time.Duration(ev.off), ev.client, ev.attempts, pay, ahead)
			continue
		}
		if len(e.soon.items) == 0 {
			return
		}
		te := e.soon.pop()
		e.pending--
		e.attempt(te.t, te.client, te.attempts, te.pay, 0)
	}
}

// stepDue reports whether the deploy's next step comes before the
// bucket's next attempt (evs from i, or the soon heap): a step goes first
// at the same instant.
func (e *engine[E]) stepDue(evs []E, i, n int, base time.Duration) bool {
	next := never
	if i < n {
		next = base + time.Duration(offOf(&evs[i]))
	}
	if len(e.soon.items) > 0 {
		next = min(next, e.soon.items[0].t)
	}
	return e.st.stepAt <= next
}

// mergeLater returns bucket b's events sorted, given its first
// len(first) events sorted ahead of time: the events pushed since are
// sorted here and merged in.
func (e *engine[E]) mergeLater(b *bucket[E], first []E) []E {
	n, k := b.n, len(first)
	later := e.scratch[1][:n-k]
	for i := k; i < n; {
		ch := b.chunks[i/chunkLen]
		i += copy(later[i-k:], ch.events[i%chunkLen:chunkFill(n, i/chunkLen)])
	}
	later = sortSlice(&e.radix, later, e.scratch[0][:n-k], e.offBits)
	if len(later) > 0 && &later[0] == &e.scratch[0][0] { // sorted into the other scratch: merge into this one
		return mergeSorted(e.scratch[1][:n], first, later)
	}
	return mergeSorted(e.scratch[0][:n], first, later)
}

// attempt is client c's handshake number attempts+1, arriving at time t
// with the storm's payload pay, and ahead as drawn ahead of time for its
// next attempt (0: nothing).
func (e *engine[E]) attempt(t time.Duration, c, attempts, pay, ahead uint32) {
	if next, nextPay, again := e.st.handle(t, c, attempts, pay, ahead); again {
		e.push(next, c, attempts+1, nextPay)
	}
	e.processed++
	if e.report != nil && e.processed%ProgressEvery == 0 {
		connected := e.st.rec.count
		if d := e.st.deploy; d != nil {
			connected = d.online // a deploy's clients connect again and again
		}
		p := Progress{Now: t, Horizon: e.st.horizon, Attempts: e.processed, Connected: connected, Clients: e.st.s.Clients, Placed: e.st.s.Clients}
		e.stopped = !e.report(p)
	}
}
