package sim

import "time"

// waitLine is one gateway's handshakes that are booked but have not had
// their turn yet, as their turns' start times. A first-in, first-out
// gateway books turns in non-decreasing order, so the handshakes still
// waiting at time t are those at the line's end whose turn starts after t.
//
// Turns that follow one another at a constant step (a queue of claims,
// each 1/admit_per_s) are kept as one run, so a queue of millions of
// handshakes in a storm that never ends costs a few words, not millions.
type waitLine struct {
	runs []turnRun
	head int   // first run still holding a waiting handshake
	n    int64 // handshakes waiting
	// sampled is the end of the last window whose waiting count was taken,
	// next the end of the one after it when windows are width long.
	sampled, next, width time.Duration
}

// turnRun is count turns starting at first, first+step, ... (step >= 0).
type turnRun struct {
	first, step time.Duration
	count       int64
}

func (r *turnRun) last() time.Duration { return r.first + time.Duration(r.count-1)*r.step }

// advance forgets the handshakes whose turn has started by t.
func (l *waitLine) advance(t time.Duration) {
	for l.head < len(l.runs) {
		r := &l.runs[l.head]
		if r.first > t {
			break
		}
		if r.last() <= t {
			l.n -= r.count
			l.head++
			continue
		}
		// Here step > 0: a run of one, or of equal turns, ends where it starts.
		started := int64((t-r.first)/r.step) + 1
		r.first += time.Duration(started) * r.step
		r.count -= started
		l.n -= started
		break
	}
	if l.head == len(l.runs) {
		l.runs, l.head = l.runs[:0], 0
	} else if l.head > 64 && l.head > len(l.runs)/2 {
		k := copy(l.runs, l.runs[l.head:])
		l.runs, l.head = l.runs[:k], 0
	}
}

// len is the number of handshakes waiting after the last advance.
func (l *waitLine) len() int64 { return l.n }

// add books a handshake whose turn starts at start, after every earlier one.
func (l *waitLine) add(start time.Duration) {
	l.n++
	if k := len(l.runs); k > l.head {
		r := &l.runs[k-1]
		switch {
		case r.count == 1:
			r.step, r.count = start-r.first, 2
			return
		case r.count > 1 && start-r.last() == r.step:
			r.count++
			return
		}
	}
	l.runs = append(l.runs, turnRun{first: start, count: 1})
}
