package sim

import "time"

// waitLine is one gateway's handshakes that are booked but have not had
// their turn yet, as their turns' start times. A first-in, first-out
// gateway books turns in non-decreasing order, so the line is sorted and
// the handshakes still waiting at time t are those whose turn starts after
// t.
type waitLine struct {
	starts []time.Duration
	head   int
	// sampled is the end of the last window whose waiting count was taken.
	sampled time.Duration
}

// advance forgets the handshakes whose turn has started by t.
func (l *waitLine) advance(t time.Duration) {
	for l.head < len(l.starts) && l.starts[l.head] <= t {
		l.head++
	}
	if l.head == len(l.starts) {
		l.starts, l.head = l.starts[:0], 0
	} else if l.head > 1024 && l.head > len(l.starts)/2 {
		n := copy(l.starts, l.starts[l.head:])
		l.starts, l.head = l.starts[:n], 0
	}
}

// len is the number of handshakes waiting after the last advance.
func (l *waitLine) len() int { return len(l.starts) - l.head }

// add books a handshake whose turn starts at start, after every earlier one.
func (l *waitLine) add(start time.Duration) { l.starts = append(l.starts, start) }
