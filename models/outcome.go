package models

import (
	"math/bits"
	"time"
)

// Outcome is how a storm bounded by a horizon ended. The simulator and
// the lab judge their storms by one rule, Judge, fed the same quantities
// of the horizon's last tenth (TailTally).
type Outcome string

const (
	// OutcomeConverged: every client connected or gave up (max_attempts)
	// before the horizon.
	OutcomeConverged Outcome = "converged"
	// OutcomeMetastable: not converged, and over the last tenth of the
	// horizon the surviving gateways were busy at least 90 % of the time
	// while fewer than 10 % of the route claims they completed there
	// connected a client. The storm sustains itself: the work goes to
	// clients that have gone.
	OutcomeMetastable Outcome = "metastable"
	// OutcomeUnfinished: neither; the horizon cut a storm still recovering.
	OutcomeUnfinished Outcome = "unfinished"
)

// The rule's thresholds: the tail is the last 1/TailDivisor of the
// horizon; in it the survivors are busy at least BusyFloorPercent of the
// time and fewer than UsefulCeilingPercent of its claims are useful.
const (
	TailDivisor          = 10
	BusyFloorPercent     = 90
	UsefulCeilingPercent = 10
)

// TailFrom is where the tail of a storm cut at horizon begins.
func TailFrom(horizon time.Duration) time.Duration {
	return horizon - horizon/TailDivisor
}

// Tail is what the outcome rule reads of a storm's last tenth.
type Tail struct {
	Span     time.Duration // the tail's length
	Gateways int           // surviving gateways serving handshakes
	Busy     time.Duration // time the survivors were at work on handshakes within the tail, summed over them
	Claims   int64         // route claims whose work ended within the tail, before the horizon
	Useful   int64         // those whose client was still there to be connected
}

// BusyFraction is Busy over the survivors' time in the tail; 0 without
// survivors or a tail.
func (t Tail) BusyFraction() float64 {
	if t.Gateways <= 0 || t.Span <= 0 {
		return 0
	}
	return float64(t.Busy) / (float64(t.Span) * float64(t.Gateways))
}

// UsefulFraction is Useful over Claims; 0 when no claim ended in the tail.
func (t Tail) UsefulFraction() float64 {
	if t.Claims == 0 {
		return 0
	}
	return float64(t.Useful) / float64(t.Claims)
}

// Judge is the outcome of a storm that converged or not, given its tail.
// The thresholds are compared exactly, in integers: busy >= 90 % is
// 100 x Busy >= 90 x Span x Gateways.
func Judge(converged bool, t Tail) Outcome {
	switch {
	case converged:
		return OutcomeConverged
	case t.Gateways > 0 && t.Span > 0 && t.Claims > 0 &&
		!less128(uint64(t.Busy), 100, uint64(t.Span)*uint64(t.Gateways), BusyFloorPercent) &&
		t.Useful*100 < t.Claims*UsefulCeilingPercent:
		return OutcomeMetastable
	}
	return OutcomeUnfinished
}

// less128 reports whether a*x < b*y, in 128 bits.
func less128(a, x, b, y uint64) bool {
	ah, al := bits.Mul64(a, x)
	bh, bl := bits.Mul64(b, y)
	return ah < bh || ah == bh && al < bl
}

// TailTally gathers a storm's Tail from what its gateways did: the spans
// they were at work and the claims they completed. The simulator feeds it
// every handshake a gateway served, the lab every claim of the survivor's
// log; both count a claim when its work ends, as the goodput and wasted
// series do.
type TailTally struct {
	from, horizon time.Duration
	ends          []time.Duration // per gateway, the end of the work added so far
	tail          Tail
}

// NewTailTally starts the tally of a storm cut at horizon with survivors
// gateways serving handshakes.
func NewTailTally(horizon time.Duration, survivors int) *TailTally {
	from := TailFrom(horizon)
	return &TailTally{from: from, horizon: horizon, tail: Tail{Span: horizon - from, Gateways: survivors}}
}

// From is where the tail begins.
func (t *TailTally) From() time.Duration { return t.from }

// Work adds the work of gateway g (any index that names one gateway the
// same way throughout) over [start, done), the part within the tail
// counting as busy. Spans of one gateway must come in non-decreasing
// start; they may overlap (a gateway with claims in hand at once), and
// the time covered counts once.
func (t *TailTally) Work(g int, start, done time.Duration) {
	for g >= len(t.ends) {
		t.ends = append(t.ends, 0)
	}
	lo, hi := max(start, t.from, t.ends[g]), min(done, t.horizon)
	if hi > lo {
		t.tail.Busy += hi - lo
	}
	t.ends[g] = max(t.ends[g], done)
}

// Claim adds a route claim whose work ended at done; useful when its
// client was still there to get the answer.
func (t *TailTally) Claim(done time.Duration, useful bool) {
	if done < t.from || done >= t.horizon {
		return
	}
	t.tail.Claims++
	if useful {
		t.tail.Useful++
	}
}

// Tail is the tally so far.
func (t *TailTally) Tail() Tail { return t.tail }
