package models

import (
	"strings"
	"testing"
	"time"
)

// TestHandshakeQueueDecisionStage: 10 ms per decision, 100 ms per claim.
// Worked by hand: arrivals at 0, 0, 0 and 200 ms are decided at 10, 20,
// 30 and 210; admitted at 10 and 30, their claims end at 110 and 210; the
// rejection at 20 is answered at 20 and does not hold the claims up; the
// admission at 210 waits for the claim ending at 210 and ends at 310.
func TestHandshakeQueueDecisionStage(t *testing.T) {
	spec := CapacitySpec{AdmitPerS: 10, Decide: DecideOnArrival, DecidePerS: 100}
	q := NewHandshakeQueue(&spec)
	for _, c := range []struct {
		arrival, decided, answered time.Duration
		admitted                   bool
	}{
		{0, 10 * time.Millisecond, 110 * time.Millisecond, true},
		{0, 20 * time.Millisecond, 20 * time.Millisecond, false},
		{0, 30 * time.Millisecond, 210 * time.Millisecond, true},
		{200 * time.Millisecond, 210 * time.Millisecond, 310 * time.Millisecond, true},
	} {
		d := q.Decision(c.arrival)
		if a := q.Book(d, c.admitted); d != c.decided || a != c.answered {
			t.Errorf("arrival %v: decided %v answered %v, want %v, %v", c.arrival, d, a, c.decided, c.answered)
		}
	}
}

// TestCapacityDecidePerSValidate: the decision stage needs decide: arrival
// and no separate rejection cost, and a rate in range.
func TestCapacityDecidePerSValidate(t *testing.T) {
	for _, c := range []struct {
		spec CapacitySpec
		key  string // "" = valid
	}{
		{CapacitySpec{AdmitPerS: 100, Decide: DecideOnArrival, DecidePerS: 1000}, ""},
		{CapacitySpec{AdmitPerS: 100, DecidePerS: 0}, ""},
		{CapacitySpec{AdmitPerS: 100, Decide: DecideOnArrival, DecidePerS: -1}, "decide_per_s:"},
		{CapacitySpec{AdmitPerS: 100, DecidePerS: 1000}, "decide_per_s:"},
		{CapacitySpec{AdmitPerS: 100, Decide: DecideAtTurn, DecidePerS: 1000}, "decide_per_s:"},
		{CapacitySpec{AdmitPerS: 100, RejectPerS: 5000, Decide: DecideOnArrival, DecidePerS: 1000}, "reject_per_s:"},
		{CapacitySpec{AdmitPerS: 100, Decide: DecideOnArrival, DecidePerS: 1000, ClaimShare: time.Millisecond}, ""},
		{CapacitySpec{AdmitPerS: 100, ClaimShare: time.Millisecond}, "claim_share:"},
		{CapacitySpec{AdmitPerS: 100, Decide: DecideOnArrival, DecidePerS: 1000, ClaimShare: -time.Millisecond}, "claim_share:"},
		{CapacitySpec{AdmitPerS: 100, Decide: DecideOnArrival, DecidePerS: 1000, ClaimShare: 2 * time.Second}, "claim_share:"},
	} {
		err := c.spec.Validate()
		if (c.key == "") != (err == nil) || (err != nil && !strings.HasPrefix(err.Error(), c.key)) {
			t.Errorf("%+v: Validate = %v, want %q", c.spec, err, c.key)
		}
	}
}

// TestDrainLoad: a gateway getting a goaway out every 1 ms (goaway_per_s
// 1,000) ending 5 sessions over 4 ms works at its full rate, 1; over
// 16 ms at a quarter; over 2 ms (faster than its rate cannot be) at 1.
// Without a rate, a span or a second session there is nothing to scale.
func TestDrainLoad(t *testing.T) {
	ms := time.Millisecond
	c := &CapacitySpec{GoawayPerS: 1000}
	for _, x := range []struct {
		c    *CapacitySpec
		n    int
		span time.Duration
		want float64
	}{
		{c, 5, 4 * ms, 1}, {c, 5, 16 * ms, 0.25}, {c, 5, 2 * ms, 1},
		{nil, 5, 16 * ms, 1}, {&CapacitySpec{}, 5, 16 * ms, 1}, {c, 5, 0, 1}, {c, 1, 16 * ms, 1},
	} {
		if got := x.c.DrainLoad(x.n, x.span); got != x.want {
			t.Errorf("%+v, %d sessions over %v: load %v, want %v", x.c, x.n, x.span, got, x.want)
		}
	}
}
