package models

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"stormsim/internal/param"
)

func goaways(p DrainPaceSpec, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = p.GoawayAt(i, n)
	}
	return out
}

// TestGoawayTimes pins each pace's goaway times, worked out by hand from
// its formula.
func TestGoawayTimes(t *testing.T) {
	s, ms := time.Second, time.Millisecond
	cases := []struct {
		name string
		pace DrainPaceSpec
		n    int
		want []time.Duration
	}{
		{"all at once", DrainPaceSpec{Kind: PaceAll}, 3, []time.Duration{0, 0, 0}},
		// 8 connections in batches of 3 every 2 s: 0-2 at 0, 3-5 at 2 s, 6-7 at 4 s.
		{"batches of 3 every 2s", DrainPaceSpec{Kind: PaceBatches, Size: 3, Interval: 2 * s}, 8,
			[]time.Duration{0, 0, 0, 2 * s, 2 * s, 2 * s, 4 * s, 4 * s}},
		// 4 over 5 s: i*5s/4 = 0, 1.25 s, 2.5 s, 3.75 s; the window's end is not reached.
		{"spread 4 over 5s", DrainPaceSpec{Kind: PaceSpread, Over: 5 * s}, 4,
			[]time.Duration{0, 1250 * ms, 2500 * ms, 3750 * ms}},
		// 3 over 1 s: floor(i*10^9/3) ns = 0, 333,333,333 and 666,666,666 ns.
		{"spread rounds down to the nanosecond", DrainPaceSpec{Kind: PaceSpread, Over: s}, 3,
			[]time.Duration{0, 333_333_333, 666_666_666}},
		// 5 with at most 500 ms apart and a 30 s window: W = min(30 s, 5*0.5 s) = 2.5 s, so 500 ms apart.
		{"spread capped by max_gap", DrainPaceSpec{Kind: PaceSpread, Over: 30 * s, MaxGap: 500 * ms}, 5,
			[]time.Duration{0, 500 * ms, s, 1500 * ms, 2 * s}},
		// 4 with a 30 s window and at most 10 s apart: W = min(30 s, 40 s) = 30 s, 7.5 s apart.
		{"spread by its window when the gaps fit", DrainPaceSpec{Kind: PaceSpread, Over: 30 * s, MaxGap: 10 * s}, 4,
			[]time.Duration{0, 7500 * ms, 15 * s, 22500 * ms}},
		{"spread by max_gap alone", DrainPaceSpec{Kind: PaceSpread, MaxGap: 20 * ms}, 3, []time.Duration{0, 20 * ms, 40 * ms}},
		// NATS: 10 s of grace, then 3 clients over 2 min at most 1 s apart: W = 3 s, so 10, 11, 12 s.
		{"lame duck: grace, then spread", DrainPaceSpec{Kind: PaceLameDuck, Grace: 10 * s, Over: 2 * time.Minute, MaxGap: s}, 3,
			[]time.Duration{10 * s, 11 * s, 12 * s}},
		// Phoenix: batches of 10,000 every 2 s; connection 25,000 is in the third batch.
		{"phoenix preset", DrainPaceSpec{Kind: PacePhoenix}, 25_001, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := c.pace
			if err := p.Validate(); err != nil {
				t.Fatal(err)
			}
			if c.want == nil {
				if got := p.GoawayAt(9_999, c.n); got != 0 {
					t.Errorf("connection 9,999 at %v, want 0", got)
				}
				if got := p.GoawayAt(10_000, c.n); got != 2*s {
					t.Errorf("connection 10,000 at %v, want 2s", got)
				}
				if got := p.Span(c.n); got != 4*s {
					t.Errorf("span %v, want 4s", got)
				}
				return
			}
			if got := goaways(p, c.n); !slices.Equal(got, c.want) {
				t.Errorf("goaways %v, want %v", got, c.want)
			}
			if got := p.Span(c.n); got != c.want[c.n-1] {
				t.Errorf("span %v, want %v", got, c.want[c.n-1])
			}
		})
	}
}

// TestGoawaysNeverDecrease: whatever the pace, a connection later in the
// drain's order is never told earlier, and no spread goes past its window.
func TestGoawaysNeverDecrease(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := 0; trial < 300; trial++ {
		n := 1 + r.IntN(3000)
		var p DrainPaceSpec
		switch r.IntN(3) {
		case 0:
			p = DrainPaceSpec{Kind: PaceBatches, Size: 1 + r.IntN(500), Interval: time.Duration(1+r.Int64N(1e10)) * time.Nanosecond}
		case 1:
			p = DrainPaceSpec{Kind: PaceSpread, Over: time.Duration(1 + r.Int64N(int64(MaxPaceDuration))), MaxGap: time.Duration(r.Int64N(1e10))}
		default:
			p = DrainPaceSpec{Kind: PaceLameDuck, Grace: time.Duration(r.Int64N(1e11)), Over: time.Duration(1 + r.Int64N(1e12))}
		}
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		prev := time.Duration(-1)
		for i := 0; i < n; i++ {
			at := p.GoawayAt(i, n)
			if at < prev {
				t.Fatalf("%v: connection %d of %d at %v, before %d's %v", p, i, n, at, i-1, prev)
			}
			prev = at
		}
		if p.Rule() != PaceBatches && prev >= p.Grace+p.Over {
			t.Fatalf("%v: last of %d at %v, not before the window's end %v", p, n, prev, p.Grace+p.Over)
		}
	}
}

// TestPaceLargeCounts: the products do not overflow at the largest counts
// and durations a scenario allows.
func TestPaceLargeCounts(t *testing.T) {
	const n = 1 << 31
	p := DrainPaceSpec{Kind: PaceSpread, Over: MaxPaceDuration}
	if got, want := p.GoawayAt(n-1, n), MaxPaceDuration-MaxPaceDuration/n-1; got < want || got >= MaxPaceDuration {
		t.Errorf("last goaway %v, want just under %v", got, MaxPaceDuration)
	}
	b := DrainPaceSpec{Kind: PaceBatches, Size: 1, Interval: MaxPaceDuration}
	if got := b.GoawayAt(n-1, n); got <= 0 {
		t.Errorf("batches overflowed to %v", got)
	}
}

func TestPaceValidate(t *testing.T) {
	cases := []struct {
		spec DrainPaceSpec
		key  string // "" for valid
	}{
		{DrainPaceSpec{}, ""},
		{DrainPaceSpec{Kind: PaceAll, Over: time.Second}, "over"},
		{DrainPaceSpec{Kind: PaceBatches, Size: 0, Interval: time.Second}, "size"},
		{DrainPaceSpec{Kind: PaceBatches, Size: 5}, "interval"},
		{DrainPaceSpec{Kind: PaceBatches, Size: 5, Interval: time.Second, Over: time.Second}, "over"},
		{DrainPaceSpec{Kind: PaceSpread}, "over"},
		{DrainPaceSpec{Kind: PaceSpread, Over: time.Second, Grace: time.Second}, "grace"},
		{DrainPaceSpec{Kind: PaceSpread, Over: -time.Second}, "over"},
		{DrainPaceSpec{Kind: PaceSpread, Over: 25 * time.Hour}, "over"},
		{DrainPaceSpec{Kind: PaceLameDuck, Grace: time.Second}, "over"},
		{DrainPaceSpec{Kind: PaceLameDuck, Over: time.Second, Size: 3}, "size"},
		{DrainPaceSpec{Kind: "trickle"}, "kind"},
		{DrainPaceSpec{Kind: PaceEnvoy}, ""},
		{DrainPaceSpec{Kind: PaceNATS, Over: time.Minute}, ""},
	}
	for _, c := range cases {
		spec := c.spec
		err := spec.Validate()
		var pe *param.Error
		switch {
		case c.key == "" && err != nil:
			t.Errorf("%+v: %v, want valid", c.spec, err)
		case c.key != "" && (!errors.As(err, &pe) || pe.Key != c.key):
			t.Errorf("%+v: %v, want an error on %s", c.spec, err, c.key)
		}
	}
}

func TestPresetsCarryTheirDefaults(t *testing.T) {
	for _, want := range []DrainPaceSpec{
		{Kind: PacePhoenix, Size: 10_000, Interval: 2 * time.Second},
		{Kind: PaceAnyCable, Over: 30 * time.Second, MaxGap: 500 * time.Millisecond},
		{Kind: PaceNATS, Grace: 10 * time.Second, Over: 2 * time.Minute, MaxGap: time.Second},
		{Kind: PaceEnvoy, Over: 600 * time.Second},
	} {
		got := DrainPaceSpec{Kind: want.Kind}
		if err := got.Validate(); err != nil || got != want {
			t.Errorf("%s: %+v (%v), want %+v", want.Kind, got, err, want)
		}
		if got.Shutdown() == 0 {
			t.Errorf("%s: no shutdown budget", want.Kind)
		}
	}
	// A preset's default can be overridden.
	p := DrainPaceSpec{Kind: PacePhoenix, Size: 500}
	if err := p.Validate(); err != nil || p.Size != 500 || p.Interval != 2*time.Second {
		t.Errorf("phoenix with size 500: %+v (%v)", p, err)
	}
}

func TestParseDrainPace(t *testing.T) {
	for _, c := range []struct {
		in   string
		want DrainPaceSpec
		err  string
	}{
		{"all", DrainPaceSpec{Kind: PaceAll}, ""},
		{"batches:size=1000,interval=1s", DrainPaceSpec{Kind: PaceBatches, Size: 1000, Interval: time.Second}, ""},
		{"spread:over=5s", DrainPaceSpec{Kind: PaceSpread, Over: 5 * time.Second}, ""},
		{"lame_duck:grace=1s,over=3s", DrainPaceSpec{Kind: PaceLameDuck, Grace: time.Second, Over: 3 * time.Second}, ""},
		{"phoenix", DrainPaceSpec{Kind: PacePhoenix, Size: 10_000, Interval: 2 * time.Second}, ""},
		{"spread:over=5", DrainPaceSpec{}, "over"},
		{"spread:width=5s", DrainPaceSpec{}, "width"},
		{"spread:over=1s,over=2s", DrainPaceSpec{}, "twice"},
		{"batches:size", DrainPaceSpec{}, "KEY=VALUE"},
		{"", DrainPaceSpec{}, "required"},
	} {
		got, err := ParseDrainPace(c.in)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%q: %+v (%v), want %+v", c.in, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: %v, want an error about %s", c.in, err, c.err)
		}
		if c.err == "" {
			again, err := ParseDrainPace(got.String())
			if err != nil || again != got {
				t.Errorf("%q: String %q reads back as %+v (%v)", c.in, got.String(), again, err)
			}
		}
	}
}
