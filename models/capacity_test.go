package models

import (
	"strings"
	"testing"
	"time"

	"stormsim/policies"
)

// TestCapacityStallEnd: a fixed stall ends at its value on every gateway;
// a uniform one is the draw of StreamStall keyed by the gateway index,
// mapped to [min, max) by hand (min + the high word of u*(max-min)); no
// stall ends at 0.
func TestCapacityStallEnd(t *testing.T) {
	const seed = 5
	uniform := Distribution{Dist: "uniform", Min: 50 * time.Millisecond, Max: 250 * time.Millisecond}
	byHand := func(g uint64) time.Duration {
		u := policies.Draw(seed, g, 0, policies.StreamStall)
		return 50*time.Millisecond + policies.UniformDuration(u, 200*time.Millisecond)
	}
	for _, c := range []struct {
		name  string
		stall *Distribution
		g     int
		want  time.Duration
	}{
		{"none", nil, 1, 0},
		{"zero", &Distribution{}, 1, 0},
		{"fixed g0", &Distribution{Value: 120 * time.Millisecond}, 0, 120 * time.Millisecond},
		{"fixed g3", &Distribution{Value: 120 * time.Millisecond}, 3, 120 * time.Millisecond},
		{"uniform g1", &uniform, 1, byHand(1)},
		{"uniform g2", &uniform, 2, byHand(2)},
	} {
		spec := CapacitySpec{AdmitPerS: 100, Stall: c.stall}
		if got := spec.StallEnd(seed, c.g); got != c.want {
			t.Errorf("%s: StallEnd = %v, want %v", c.name, got, c.want)
		}
	}
	if byHand(1) == byHand(2) {
		t.Error("two gateways drew the same stall: the draw is not keyed by gateway")
	}
}

// TestHandshakeQueueStall: with a 100 ms stall and 10 ms per handshake, a
// handshake arriving at 30 ms is decided at 100 (on arrival) or starts at
// 100 (at its turn); one arriving at 150 is decided at 150, or starts at
// 150 if the queue is free by then.
func TestHandshakeQueueStall(t *testing.T) {
	spec := CapacitySpec{AdmitPerS: 100, RejectPerS: 100, Decide: DecideOnArrival}
	q := NewHandshakeQueue(&spec, 100*time.Millisecond)
	for _, c := range []struct{ arrival, decided, answered time.Duration }{
		{30 * time.Millisecond, 100 * time.Millisecond, 110 * time.Millisecond},
		{150 * time.Millisecond, 150 * time.Millisecond, 160 * time.Millisecond},
	} {
		d := q.Decision(c.arrival)
		if a := q.Book(d, true); d != c.decided || a != c.answered {
			t.Errorf("on arrival, arrival %v: decided %v answered %v, want %v, %v", c.arrival, d, a, c.decided, c.answered)
		}
	}
	spec.Decide = DecideAtTurn
	q = NewHandshakeQueue(&spec, 100*time.Millisecond)
	for _, c := range []struct{ arrival, start, done time.Duration }{
		{30 * time.Millisecond, 100 * time.Millisecond, 110 * time.Millisecond},
		{40 * time.Millisecond, 110 * time.Millisecond, 120 * time.Millisecond},
		{150 * time.Millisecond, 150 * time.Millisecond, 160 * time.Millisecond},
	} {
		s := q.Start(c.arrival)
		if d := q.Finish(s, false); s != c.start || d != c.done {
			t.Errorf("at turn, arrival %v: start %v done %v, want %v, %v", c.arrival, s, d, c.start, c.done)
		}
	}
}

// TestCapacityStallValidate: a bad stall is reported under its key.
func TestCapacityStallValidate(t *testing.T) {
	spec := CapacitySpec{AdmitPerS: 100, Stall: &Distribution{Dist: "uniform", Min: time.Second, Max: time.Second}}
	if err := spec.Validate(); err == nil || !strings.HasPrefix(err.Error(), "stall.max:") {
		t.Errorf("Validate = %v, want a stall.max error", err)
	}
	spec.Stall = &Distribution{Value: time.Second}
	if err := spec.Validate(); err != nil {
		t.Errorf("fixed stall: Validate = %v", err)
	}
}

// TestHandshakeQueueDecisionStage: a 50 ms stall, 10 ms per decision,
// 100 ms per claim. Worked by hand: arrivals at 0, 0, 0 and 200 ms are
// decided at 60, 70, 80 (the stage free from 50) and 210; admitted at 60
// and 80, their claims end at 160 and 260; the rejection at 70 is answered
// at 70 and does not hold the claims up; the admission at 210 waits for
// the claim ending at 260 and ends at 360.
func TestHandshakeQueueDecisionStage(t *testing.T) {
	spec := CapacitySpec{AdmitPerS: 10, Decide: DecideOnArrival, DecidePerS: 100}
	q := NewHandshakeQueue(&spec, 50*time.Millisecond)
	for _, c := range []struct {
		arrival, decided, answered time.Duration
		admitted                   bool
	}{
		{0, 60 * time.Millisecond, 160 * time.Millisecond, true},
		{0, 70 * time.Millisecond, 70 * time.Millisecond, false},
		{0, 80 * time.Millisecond, 260 * time.Millisecond, true},
		{200 * time.Millisecond, 210 * time.Millisecond, 360 * time.Millisecond, true},
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
	} {
		err := c.spec.Validate()
		if (c.key == "") != (err == nil) || (err != nil && !strings.HasPrefix(err.Error(), c.key)) {
			t.Errorf("%+v: Validate = %v, want %q", c.spec, err, c.key)
		}
	}
}
