package sim

import "unsafe"

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
	if !r.plan(offOf(&chunks[0].events[0])) {
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
	if len(a) == 0 || !r.plan(offOf(&a[0])) {
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
	if isPacked[E]() {
		countPacked(r, asPacked(evs))
		return
	}
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
	if isPacked[E]() {
		scatterPacked(r, p, asPacked(src), asPacked(dst))
		return
	}
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
	if isPacked[E]() {
		insertionPacked(asPacked(a))
		return a
	}
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

// The sort's loops for packed events, apart: in the generic ones a test
// of the event's kind would cost a load of the instantiation's dictionary
// at every event, for every kind.

// asPacked is evs, of kind packedEvent, as such.
func asPacked[E wheelEvent](evs []E) []packedEvent {
	return unsafe.Slice((*packedEvent)(unsafe.Pointer(unsafe.SliceData(evs))), len(evs))
}

// countPacked is countOffsets for packed events.
func countPacked(r *radix, evs []packedEvent) {
	m, d := r.mask, r.digit
	c0, c1, c2 := &r.count[0], &r.count[1], &r.count[2]
	switch r.passes {
	case 2:
		for _, ev := range evs {
			off := uint32(ev >> packedOffShift)
			c0[off&m]++
			c1[off>>d&m]++
		}
	case 3:
		for _, ev := range evs {
			off := uint32(ev >> packedOffShift)
			c0[off&m]++
			c1[off>>d&m]++
			c2[off>>(2*d)&m]++
		}
	default:
		for _, ev := range evs {
			off := uint32(ev >> packedOffShift)
			for p := range r.passes {
				r.count[p][off>>(uint(p)*d)&m]++
			}
		}
	}
	r.n += len(evs)
}

// scatterPacked is scatter for packed events.
func scatterPacked(r *radix, p int, src, dst []packedEvent) {
	c, shift, m := &r.count[p], packedOffShift+uint(p)*r.digit, uint64(r.mask)
	for _, ev := range src {
		d := ev >> shift & packedEvent(m)
		dst[c[d]] = ev
		c[d]++
	}
}

// insertionPacked is insertionSort for packed events: by offset, stably.
func insertionPacked(a []packedEvent) {
	for i := 1; i < len(a); i++ {
		x := a[i]
		j := i
		for ; j > 0 && x>>packedOffShift < a[j-1]>>packedOffShift; j-- {
			a[j] = a[j-1]
		}
		a[j] = x
	}
}
