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

type chunk[E wheelEvent] struct {
	n      int
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

// sortBucket returns the events of chunks sorted by off, equal offsets kept
// in push (scheduling) order. It is an LSD radix sort whose first pass reads
// straight from the chunks; a and b are scratch of the events' length, and
// offBits bounds every offset.
func sortBucket[E wheelEvent](chunks []*chunk[E], a, b []E, offBits int) []E {
	passes, digit := radixDigits(offBits)
	if len(a) < 64 || passes == 0 {
		i := 0
		for _, ch := range chunks {
			i += copy(a[i:], ch.events[:ch.n])
		}
		return insertionSort(a)
	}
	mask := uint32(1)<<digit - 1
	var count [1 << maxDigitBits]int
	for _, ch := range chunks {
		for i := range ch.events[:ch.n] {
			count[head(&ch.events[i]).off&mask]++
		}
	}
	prefixSums(count[:mask+1])
	for _, ch := range chunks {
		for i := range ch.events[:ch.n] {
			d := head(&ch.events[i]).off & mask
			a[count[d]] = ch.events[i]
			count[d]++
		}
	}
	return radixPasses(a, b, 1, passes, digit)
}

// sortSlice returns a sorted by off, equal offsets kept in their order;
// b is scratch of a's length.
func sortSlice[E wheelEvent](a, b []E, offBits int) []E {
	passes, digit := radixDigits(offBits)
	if len(a) < 64 || passes == 0 {
		return insertionSort(a)
	}
	return radixPasses(a, b, 0, passes, digit)
}

// radixDigits splits offBits into passes digits of digit bits each.
func radixDigits(offBits int) (passes int, digit uint) {
	passes = (offBits + maxDigitBits - 1) / maxDigitBits
	if passes > 0 {
		digit = uint((offBits + passes - 1) / passes)
	}
	return passes, digit
}

// radixPasses runs the LSD passes from..passes-1 over a (b is scratch of
// its length) and returns the slice that holds the result.
func radixPasses[E wheelEvent](a, b []E, from, passes int, digit uint) []E {
	n := len(a)
	mask := uint32(1)<<digit - 1
	var count [1 << maxDigitBits]int
	for pass := from; pass < passes; pass++ {
		shift := uint(pass) * digit
		clear(count[:mask+1])
		for i := range a {
			count[(head(&a[i]).off>>shift)&mask]++
		}
		if count[(head(&a[0]).off>>shift)&mask] == n {
			continue // every offset shares this digit
		}
		prefixSums(count[:mask+1])
		for i := range a {
			d := (head(&a[i]).off >> shift) & mask
			b[count[d]] = a[i]
			count[d]++
		}
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

// maxDigitBits bounds a radix digit: 256 destinations keep the scatter
// within cache even for buckets of a million events.
const maxDigitBits = 8

func prefixSums(count []int) {
	sum := 0
	for d, c := range count {
		count[d] = sum
		sum += c
	}
}
