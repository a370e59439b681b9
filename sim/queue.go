package sim

import (
	"time"
	"unsafe"
)

// event is one pending handshake: client c makes its attempt number
// attempts+1 at time t. In a wheel bucket t is stored as an offset from the
// bucket's start, so an event costs 12 bytes.
type event struct {
	off      uint32 // nanoseconds since the bucket's start
	client   uint32
	attempts uint32 // attempts made before this one
}

// paidEvent is an event that carries the storm's payload from an attempt's
// send to its arrival (its rtt, so that it is drawn once), and room for a
// draw made ahead of time for the client's next attempt (its rtt, 0 until
// drawn): 20 bytes. Only storms that need them pay for the larger event.
type paidEvent struct {
	event
	pay   uint32
	ahead uint32
}

// wheelEvent is what a wheel stores. The engine is instantiated for one or
// the other and reaches the shared fields through the event prefix, which
// keeps the hot loops free of method calls on a type parameter (Go calls
// those through a dictionary, several times slower).
type wheelEvent interface{ event | paidEvent }

// head is e's common part: paidEvent embeds event first, so both kinds
// start with it.
func head[E wheelEvent](e *E) *event { return (*event)(unsafe.Pointer(e)) }

// isPaid reports whether events of kind E carry a payload.
func isPaid[E wheelEvent]() bool {
	var e E
	return unsafe.Sizeof(e) == unsafe.Sizeof(paidEvent{})
}

// payOf is e's payload, 0 for a plain event.
func payOf[E wheelEvent](e *E) uint32 {
	if isPaid[E]() {
		return (*paidEvent)(unsafe.Pointer(e)).pay
	}
	return 0
}

// aheadOf is what was drawn ahead of time for e's next attempt, 0 if
// nothing was (or for a plain event).
func aheadOf[E wheelEvent](e *E) uint32 {
	if isPaid[E]() {
		return (*paidEvent)(unsafe.Pointer(e)).ahead
	}
	return 0
}

// makeEvent builds an event of kind E; a plain event drops pay.
func makeEvent[E wheelEvent](ev event, pay uint32) E {
	var e E
	*head(&e) = ev
	if isPaid[E]() {
		(*paidEvent)(unsafe.Pointer(&e)).pay = pay
	}
	return e
}

// chunkLen events make one chunk; buckets are lists of chunks drawn from a
// free list, so memory tracks the number of pending events, not the history
// of the largest bucket.
const chunkLen = 256

// A chunk keeps no count of its own: every chunk of a bucket but the last
// is full (chunkFill), so an append touches only the bucket and the event.
type chunk[E wheelEvent] struct {
	events [chunkLen]E
}

// bucket holds the events of one wheel slot in push order, which is their
// scheduling order.
type bucket[E wheelEvent] struct {
	chunks []*chunk[E]
	tail   *chunk[E]
	n      int
}

// timedEvent is an event with an absolute time and a push sequence number,
// for the two small heaps: events pushed into the bucket being processed, and
// events beyond the wheel's horizon.
type timedEvent struct {
	t        time.Duration
	seq      uint64
	client   uint32
	attempts uint32
	pay      uint32
}

// eventHeap is a binary min-heap ordered by (t, seq), or by (bucket of t,
// seq) when byBucket is set.
type eventHeap struct {
	items    []timedEvent
	width    time.Duration
	byBucket bool
}

func (h *eventHeap) less(a, b timedEvent) bool {
	if h.byBucket {
		ba, bb := a.t/h.width, b.t/h.width
		if ba != bb {
			return ba < bb
		}
		return a.seq < b.seq
	}
	if a.t != b.t {
		return a.t < b.t
	}
	return a.seq < b.seq
}

func (h *eventHeap) push(e timedEvent) {
	h.items = append(h.items, e)
	i := len(h.items) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(h.items[i], h.items[p]) {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *eventHeap) pop() timedEvent {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items = h.items[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= last {
			break
		}
		m := l
		if r := l + 1; r < last && h.less(h.items[r], h.items[l]) {
			m = r
		}
		if !h.less(h.items[m], h.items[i]) {
			break
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
	return top
}

// sortBucket returns the n events of a bucket's chunks sorted by off,
// equal offsets kept in push (scheduling) order. It is an LSD radix sort
// whose first pass reads straight from the chunks; a and b are scratch of
// length n, offBits bounds every offset and r holds the digit counts.
func sortBucket[E wheelEvent](r *radix, chunks []*chunk[E], n int, a, b []E, offBits int) []E {
	if n < 64 || offBits == 0 {
		for i, ch := range chunks {
			copy(a[i*chunkLen:], ch.events[:chunkFill(n, i)])
		}
		return insertionSort(a)
	}
	r.reset(offBits)
	for i, ch := range chunks {
		countOffsets(r, ch.events[:chunkFill(n, i)])
	}
	if !r.plan(head(&chunks[0].events[0]).off) {
		for i, ch := range chunks {
			copy(a[i*chunkLen:], ch.events[:chunkFill(n, i)])
		}
		return a
	}
	for i, ch := range chunks {
		scatter(r, r.order[0], ch.events[:chunkFill(n, i)], a)
	}
	return finishPasses(r, a, b)
}

// chunkFill is how many of a bucket's n events its chunk i holds: every
// chunk but the last is full.
func chunkFill(n, i int) int { return min(chunkLen, n-i*chunkLen) }

// sortSlice returns a sorted by off, equal offsets kept in their order;
// b is scratch of a's length.
func sortSlice[E wheelEvent](r *radix, a, b []E, offBits int) []E {
	if len(a) < 64 || offBits == 0 {
		return insertionSort(a)
	}
	r.reset(offBits)
	countOffsets(r, a)
	return sortCounted(r, a, b)
}

// sortCounted is sortSlice once r holds the counts of a's offsets.
func sortCounted[E wheelEvent](r *radix, a, b []E) []E {
	if len(a) == 0 || !r.plan(head(&a[0]).off) {
		return a
	}
	scatter(r, r.order[0], a, b)
	return finishPasses(r, b, a)
}

// maxDigitBits bounds a radix digit: 256 destinations keep the scatter
// within cache even for buckets of a million events. maxPasses digits
// cover any 32-bit offset.
const (
	maxDigitBits = 8
	maxPasses    = 4
)

// radix is the state of one LSD radix sort by offset: the histogram of
// every digit, all taken in one read of the events (countOffsets), then
// turned into each pass's next positions (plan).
type radix struct {
	passes int
	digit  uint
	mask   uint32
	n      int            // events counted
	used   int            // passes that move anything
	order  [maxPasses]int // those passes, lowest digit first
	count  [maxPasses][1 << maxDigitBits]uint32
}

// reset prepares r to count offsets below 2^offBits.
func (r *radix) reset(offBits int) {
	r.passes = (offBits + maxDigitBits - 1) / maxDigitBits
	r.digit = uint((offBits + r.passes - 1) / r.passes)
	r.mask = uint32(1)<<r.digit - 1
	r.n = 0
	for p := range r.passes {
		clear(r.count[p][:r.mask+1])
	}
}

// countOffsets adds evs' offsets to r's histograms.
func countOffsets[E wheelEvent](r *radix, evs []E) {
	m, d := r.mask, r.digit
	c0, c1, c2 := &r.count[0], &r.count[1], &r.count[2]
	switch r.passes {
	case 2:
		for i := range evs {
			off := head(&evs[i]).off
			c0[off&m]++
			c1[off>>d&m]++
		}
	case 3:
		for i := range evs {
			off := head(&evs[i]).off
			c0[off&m]++
			c1[off>>d&m]++
			c2[off>>(2*d)&m]++
		}
	default:
		for i := range evs {
			off := head(&evs[i]).off
			for p := range r.passes {
				r.count[p][off>>(uint(p)*d)&m]++
			}
		}
	}
	r.n += len(evs)
}

// plan turns the histograms into each pass's first positions and lists
// the passes that move anything: a digit that every event shares (as
// any, one event's offset, has it) leaves the order as it is. It reports
// whether any pass is left.
func (r *radix) plan(any uint32) bool {
	r.used = 0
	for p := range r.passes {
		c := &r.count[p]
		if int(c[any>>(uint(p)*r.digit)&r.mask]) == r.n {
			continue
		}
		sum := uint32(0)
		for d, k := range c[:r.mask+1] {
			c[d], sum = sum, sum+k
		}
		r.order[r.used] = p
		r.used++
	}
	return r.used > 0
}

// scatter moves src's events to their places in dst by pass p's digit,
// in order, so that equal digits keep their order.
func scatter[E wheelEvent](r *radix, p int, src, dst []E) {
	c, shift, m := &r.count[p], uint(p)*r.digit, r.mask
	for i := range src {
		d := head(&src[i]).off >> shift & m
		dst[c[d]] = src[i]
		c[d]++
	}
}

// finish runs the passes after the first, whose result is in a (b is
// scratch of its length), and returns the slice holding the sorted events.
func finishPasses[E wheelEvent](r *radix, a, b []E) []E {
	for _, p := range r.order[1:r.used] {
		scatter(r, p, a, b)
		a, b = b, a
	}
	return a
}

// insertionSort sorts a few events by off, stably.
func insertionSort[E wheelEvent](a []E) []E {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && head(&a[j]).off < head(&a[j-1]).off; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
	return a
}

// mergeSorted merges two slices sorted by off into out (of their joint
// length): on equal offsets first's events come first, so merging a
// bucket's sorted first events with its sorted later ones keeps push order
// among equals, as sorting the whole bucket would.
func mergeSorted[E wheelEvent](out, first, later []E) []E {
	i, j, k := 0, 0, 0
	for i < len(first) && j < len(later) {
		if head(&later[j]).off < head(&first[i]).off {
			out[k] = later[j]
			j++
		} else {
			out[k] = first[i]
			i++
		}
		k++
	}
	k += copy(out[k:], first[i:])
	copy(out[k:], later[j:])
	return out
}
