package models

import (
	"testing"
	"time"
)

// TestJudge pins the rule at its thresholds: a tail of 1 s on 2
// survivors (2 s of gateway time), busy at least 1.8 s, and fewer than 1
// in 10 of its claims useful.
func TestJudge(t *testing.T) {
	tail := func(busy time.Duration, claims, useful int64) Tail {
		return Tail{Span: time.Second, Gateways: 2, Busy: busy, Claims: claims, Useful: useful}
	}
	for _, c := range []struct {
		name      string
		converged bool
		tail      Tail
		want      Outcome
	}{
		{"busy exactly 90 %, 9 useful of 100 claims", false, tail(1800*time.Millisecond, 100, 9), OutcomeMetastable},
		{"a nanosecond under 90 % busy", false, tail(1800*time.Millisecond-1, 100, 9), OutcomeUnfinished},
		{"useful exactly 10 % is not under it", false, tail(2*time.Second, 100, 10), OutcomeUnfinished},
		{"no claim ended in the tail", false, tail(2*time.Second, 0, 0), OutcomeUnfinished},
		{"no survivors", false, Tail{Span: time.Second, Busy: time.Second, Claims: 10}, OutcomeUnfinished},
		{"converged whatever the tail", true, tail(2*time.Second, 100, 0), OutcomeConverged},
	} {
		if got := Judge(c.converged, c.tail); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	if f := tail(1800*time.Millisecond, 100, 9); f.BusyFraction() != 0.9 || f.UsefulFraction() != 0.09 {
		t.Errorf("fractions %v and %v, want 0.9 and 0.09", f.BusyFraction(), f.UsefulFraction())
	}
}

// TestTailTally: a horizon of 10 s puts the tail at [9, 10) s. Gateway 0
// works [8.5, 9.2) (0.2 s inside), then [9.1, 9.5) and [9.3, 9.6), which
// overlap (0.4 s more covered, to 9.6), and [9.9, 10.5), cut at the
// horizon (0.1 s); gateway 1 works [9.0, 9.5) (0.5 s). Busy 1.2 s of 2 s.
// Claims ending at 8.9 s and at the horizon fall outside; those at 9.0,
// 9.5 and 9.99 s count, one useful.
func TestTailTally(t *testing.T) {
	s := func(x float64) time.Duration { return time.Duration(x * float64(time.Second)) }
	tt := NewTailTally(10*time.Second, 2)
	if tt.From() != 9*time.Second {
		t.Fatalf("tail from %v, want 9s", tt.From())
	}
	for _, w := range []struct {
		g          int
		start, end float64
	}{{0, 8.5, 9.2}, {0, 9.1, 9.5}, {0, 9.3, 9.6}, {0, 9.9, 10.5}, {1, 9.0, 9.5}} {
		tt.Work(w.g, s(w.start), s(w.end))
	}
	tt.Claim(s(8.9), true)
	tt.Claim(s(9.0), false)
	tt.Claim(s(9.5), true)
	tt.Claim(s(9.99), false)
	tt.Claim(s(10), true)
	want := Tail{Span: time.Second, Gateways: 2, Busy: 1200 * time.Millisecond, Claims: 3, Useful: 1}
	if got := tt.Tail(); got != want {
		t.Errorf("tail %+v, want %+v", got, want)
	}
}
