package models

import (
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// randomArrivals returns n sorted arrival times within span, with repeats.
func randomArrivals(r *rand.Rand, n int, span time.Duration) []time.Duration {
	ts := make([]time.Duration, n)
	for i := range ts {
		ts[i] = time.Duration(r.Int64N(int64(span)))
		if i > 0 && r.IntN(5) == 0 {
			ts[i] = ts[i-1] // simultaneous arrivals
		}
	}
	slices.Sort(ts)
	return ts
}

// TestTokenBucketMatchesRational replays random arrivals through the bucket
// and through an exact rational-number oracle of the seed's formula:
// tokens = min(burst, tokens + elapsed_s*rate); admit if tokens >= 1.
func TestTokenBucketMatchesRational(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 300; trial++ {
		rateMilli := 1 + r.Int64N(500_000) // 0.001 .. 500 tokens/s
		rate := float64(rateMilli) / 1000
		burst := 1 + r.IntN(30)
		b := NewTokenBucket(rate, burst)
		tokens := big.NewRat(int64(burst), 1)
		full := big.NewRat(int64(burst), 1)
		one := big.NewRat(1, 1)
		perNano := big.NewRat(rateMilli, 1000*int64(time.Second))
		var last time.Duration
		for i, at := range randomArrivals(r, 400, 5*time.Second) {
			elapsed := new(big.Rat).Mul(perNano, big.NewRat(int64(at-last), 1))
			tokens.Add(tokens, elapsed)
			if tokens.Cmp(full) > 0 {
				tokens.Set(full)
			}
			last = at
			want := tokens.Cmp(one) >= 0
			if want {
				tokens.Sub(tokens, one)
			}
			if got := b.Admit(at); got != want {
				t.Fatalf("trial %d (rate %v, burst %d) arrival %d at %v: admit %v, oracle %v", trial, rate, burst, i, at, got, want)
			}
		}
	}
}

// TestAdmissionWindowBound checks V4 on random arrivals: in every window of
// length T, a token bucket admits at most burst + rate*T, and slots at most
// per_slot per slot.
func TestAdmissionWindowBound(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 200; trial++ {
		var adm Admission
		if trial%2 == 0 {
			adm = NewTokenBucket(1+r.Float64()*200, 1+r.IntN(20))
		} else {
			adm = NewSlots(time.Duration(1+r.IntN(50))*time.Millisecond, 1+r.IntN(10))
		}
		var admitted []time.Duration
		for _, at := range randomArrivals(r, 2000, 3*time.Second) {
			if adm.Admit(at) {
				admitted = append(admitted, at)
			}
		}
		for _, w := range []time.Duration{time.Millisecond, 10 * time.Millisecond, 250 * time.Millisecond, time.Second} {
			bound := adm.WindowBound(w)
			if s, ok := adm.(*Slots); ok {
				// A window not aligned to slots can touch one slot more.
				bound = float64(s.PerSlot) * float64((w+s.Slot-1)/s.Slot+1)
			}
			j := 0
			for i := range admitted { // admitted[j:i+1] lie in (admitted[i]-w, admitted[i]]
				for admitted[i]-admitted[j] >= w {
					j++
				}
				if n := float64(i - j + 1); n > bound {
					t.Fatalf("%v: %v admitted in a window of %v, bound %v", adm, n, w, bound)
				}
			}
		}
	}
}

// TestSlotsAdmitFirstPerSlot: the first per_slot arrivals of each slot pass.
func TestSlotsAdmitFirstPerSlot(t *testing.T) {
	s := NewSlots(10*time.Millisecond, 2)
	arrivals := []time.Duration{0, 0, 0, 9 * time.Millisecond, 10 * time.Millisecond, 15 * time.Millisecond, 19 * time.Millisecond, 45 * time.Millisecond}
	want := []bool{true, true, false, false, true, true, false, true}
	for i, at := range arrivals {
		if got := s.Admit(at); got != want[i] {
			t.Errorf("arrival %d at %v: %v, want %v", i, at, got, want[i])
		}
	}
}

func TestLeasePeriod(t *testing.T) {
	tests := []struct{ lease, ping, want time.Duration }{
		{1500 * time.Millisecond, 500 * time.Millisecond, 500 * time.Millisecond}, // the seed's lab
		{1500 * time.Millisecond, time.Second, 500 * time.Millisecond},            // lease/3
		{200 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond},   // floor
		{30 * time.Second, 0, 10 * time.Second},                                   // no ping
	}
	for _, tt := range tests {
		if got := LeasePeriod(tt.lease, tt.ping); got != tt.want {
			t.Errorf("LeasePeriod(%v, %v) = %v, want %v", tt.lease, tt.ping, got, tt.want)
		}
	}
}
