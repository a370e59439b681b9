package sim

import (
	"time"
	"unsafe"
)

// The timing wheel's storage: events, the chunks and buckets that hold
// them, and the two small heaps beside the ring (engine.go runs it).

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

// packedEvent is a plain storm's event in 8 bytes, the storms every sweep
// and solve is made of: the offset in the top packedOffBits bits (bucket
// widths are at most 2^23 ns), the attempts made before it in the
// packedAttBits below them and the client in the low 32. A count too
// large for its bits is kept per client by the engine (a client has one
// pending event at a time) and packedAttMax stands for it. Two thirds of
// the bytes of an event make every append, every pass of the radix sort
// and the wheel's memory two thirds as dear.
type packedEvent uint64

const (
	packedOffBits  = 23
	packedOffShift = 64 - packedOffBits
	packedAttBits  = packedOffShift - 32
	packedAttMax   = 1<<packedAttBits - 1
)

// wheelEvent is what a wheel stores. The engine is instantiated for one
// kind and reaches the shared fields through the event prefix (or the
// packed word), which keeps the hot loops free of method calls on a type
// parameter (Go calls those through a dictionary, several times slower).
type wheelEvent interface {
	event | paidEvent | packedEvent
}

// head is e's common part: paidEvent embeds event first, so both kinds
// start with it. Not for a packedEvent (offOf and the engine's unpack).
func head[E wheelEvent](e *E) *event { return (*event)(unsafe.Pointer(e)) }

// isPacked reports whether events of kind E are packedEvents.
func isPacked[E wheelEvent]() bool {
	var e E
	return unsafe.Sizeof(e) == unsafe.Sizeof(packedEvent(0))
}

// offOf is e's offset in its bucket, in nanoseconds.
func offOf[E wheelEvent](e *E) uint32 {
	// Not isPacked: a generic call inside this one, in the sort's loops,
	// would cost a load of its dictionary at every event.
	if unsafe.Sizeof(*e) == unsafe.Sizeof(packedEvent(0)) {
		return uint32(*(*uint64)(unsafe.Pointer(e)) >> packedOffShift)
	}
	return head(e).off
}

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

// makeEvent builds an event of kind E; a plain event drops pay. A
// packedEvent keeps at most packedAttMax attempts (see the engine's pack).
func makeEvent[E wheelEvent](ev event, pay uint32) E {
	var e E
	if isPacked[E]() {
		*(*uint64)(unsafe.Pointer(&e)) = uint64(ev.off)<<packedOffShift | uint64(min(ev.attempts, packedAttMax))<<32 | uint64(ev.client)
		return e
	}
	*head(&e) = ev
	if isPaid[E]() {
		(*paidEvent)(unsafe.Pointer(&e)).pay = pay
	}
	return e
}

// unpacked is a packedEvent's fields; attempts is packedAttMax when the
// count is kept elsewhere.
func unpacked(p packedEvent) event {
	return event{off: uint32(p >> packedOffShift), client: uint32(p), attempts: uint32(p>>32) & packedAttMax}
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
