package models

import (
	"errors"
	"strings"
	"testing"
	"time"

	"stormsim/internal/param"
)

// TestReservedSlots: a bucket of burst 10 at 100/s has 10 tokens at the
// start and one more every 10 ms, so clients 0-9 may come at once, client
// 10 at 10 ms, client 19 at 100 ms.
func TestReservedSlots(t *testing.T) {
	h := ReconnectHintSpec{Kind: HintReserved, Rate: 100, Burst: 10}
	for k, want := range map[int]time.Duration{0: 0, 9: 0, 10: 10 * time.Millisecond, 11: 20 * time.Millisecond, 19: 100 * time.Millisecond} {
		if got := h.ReservedSlot(k); got != want {
			t.Errorf("slot %d: %v, want %v", k, got, want)
		}
	}
	// At 333.333/s the bucket gains 333,333 ticks a nanosecond and a token
	// is 10^12 ticks: 333,333 x 3,000,003 = 999,999,999,999, one tick short,
	// so the first slot after the burst is 3,000,004 ns.
	h = ReconnectHintSpec{Kind: HintReserved, Rate: 333.333, Burst: 1}
	if got := h.ReservedSlot(1); got != 3_000_004 {
		t.Errorf("slot 1 at 333.333/s: %v, want 3,000,004 ns", got)
	}
}

// TestReservedSlotsAreAdmitted replays clients arriving exactly at their
// slots, in order, through the token bucket itself: every one is admitted,
// and one arriving a nanosecond before its slot is not.
func TestReservedSlotsAreAdmitted(t *testing.T) {
	for _, c := range []struct {
		rate  float64
		burst int
	}{{100, 10}, {333.333, 334}, {40, 1}, {0.5, 3}, {1234.567, 7}} {
		h := ReconnectHintSpec{Kind: HintReserved, Rate: c.rate, Burst: c.burst}
		b := NewTokenBucket(c.rate, c.burst)
		for k := 0; k < 3000; k++ {
			if !b.Admit(h.ReservedSlot(k)) {
				t.Fatalf("%v/s burst %d: client %d at its slot %v rejected", c.rate, c.burst, k, h.ReservedSlot(k))
			}
		}
		early := NewTokenBucket(c.rate, c.burst)
		k := c.burst
		for j := 0; j < k; j++ {
			early.Admit(0)
		}
		if early.Admit(h.ReservedSlot(k) - 1) {
			t.Errorf("%v/s burst %d: client %d admitted a nanosecond before its slot", c.rate, c.burst, k)
		}
	}
}

func TestHints(t *testing.T) {
	ms := time.Millisecond
	reserved := ReconnectHintSpec{Kind: HintReserved, Rate: 100, Burst: 10}
	cases := []struct {
		name   string
		h      ReconnectHintSpec
		k      int
		goaway time.Duration
		u      uint64
		want   time.Duration
		ok     bool
	}{
		{"none", ReconnectHintSpec{Kind: HintNone}, 0, 0, 0, 0, false},
		{"fixed rounds up to a millisecond", ReconnectHintSpec{Kind: HintFixed, Delay: 2500 * time.Microsecond}, 5, time.Second, 0, 3 * ms, true},
		// u = 2^63 is the middle of [0, 5000) ms.
		{"uniform from its bits", ReconnectHintSpec{Kind: HintUniform, Over: 5 * time.Second}, 0, 0, 1 << 63, 2500 * ms, true},
		{"uniform's largest bits stay below over", ReconnectHintSpec{Kind: HintUniform, Over: 5 * time.Second}, 0, 0, 1<<64 - 1, 4999 * ms, true},
		// Client 19's slot is 100 ms; told at 30 ms it waits 70 ms.
		{"reserved: its slot less the goaway", reserved, 19, 30 * ms, 0, 70 * ms, true},
		{"reserved: told after its slot, at once", reserved, 19, 150 * ms, 0, 0, true},
		// Slot 3,000,004 ns, told at 1 ms: 2,000,004 ns rounded up to 3 ms.
		{"reserved rounds up", ReconnectHintSpec{Kind: HintReserved, Rate: 333.333, Burst: 1}, 1, ms, 0, 3 * ms, true},
	}
	for _, c := range cases {
		got, ok := c.h.Hint(c.k, c.goaway, c.u)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: %v %v, want %v %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func TestHintValidate(t *testing.T) {
	cases := []struct {
		h   ReconnectHintSpec
		key string
	}{
		{ReconnectHintSpec{}, ""},
		{ReconnectHintSpec{Kind: HintNone, Delay: time.Second}, "delay"},
		{ReconnectHintSpec{Kind: HintFixed}, "delay"},
		{ReconnectHintSpec{Kind: HintFixed, Delay: time.Second, Rate: 3}, "rate"},
		{ReconnectHintSpec{Kind: HintUniform, Over: time.Millisecond}, "over"},
		{ReconnectHintSpec{Kind: HintReserved}, "rate"},
		{ReconnectHintSpec{Kind: HintReserved, Rate: 10}, "burst"},
		{ReconnectHintSpec{Kind: HintReserved, Rate: 10, Burst: 1}, ""},
		{ReconnectHintSpec{Kind: "later"}, "kind"},
	}
	for _, c := range cases {
		h := c.h
		err := h.Validate()
		var pe *param.Error
		switch {
		case c.key == "" && err != nil:
			t.Errorf("%+v: %v", c.h, err)
		case c.key != "" && (!errors.As(err, &pe) || pe.Key != c.key):
			t.Errorf("%+v: %v, want an error on %s", c.h, err, c.key)
		}
	}
	h := ReconnectHintSpec{Kind: HintReserved, Burst: 4}
	h.Reserve(250, 50)
	if h.Rate != 250 || h.Burst != 4 {
		t.Errorf("Reserve: %+v, want the rate filled in and the burst kept", h)
	}
}

func TestParseReconnectHint(t *testing.T) {
	for _, c := range []struct {
		in   string
		want ReconnectHintSpec
		err  string
	}{
		{"none", ReconnectHintSpec{Kind: HintNone}, ""},
		{"fixed:delay=3s", ReconnectHintSpec{Kind: HintFixed, Delay: 3 * time.Second}, ""},
		{"reserved:rate=333.333,burst=334", ReconnectHintSpec{Kind: HintReserved, Rate: 333.333, Burst: 334}, ""},
		{"reserved", ReconnectHintSpec{Kind: HintReserved}, ""},
		{"soon", ReconnectHintSpec{}, "kind"},
		{"uniform:over=x", ReconnectHintSpec{}, "over"},
	} {
		got, err := ParseReconnectHint(c.in)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%q: %+v (%v), want %+v", c.in, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: %v, want an error about %s", c.in, err, c.err)
		}
		if c.err == "" {
			if again, err := ParseReconnectHint(got.String()); err != nil || again != got {
				t.Errorf("%q: String %q reads back as %+v (%v)", c.in, got.String(), again, err)
			}
		}
	}
}
