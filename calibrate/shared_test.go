package calibrate

import (
	"testing"
	"time"
)

// TestFitSharedEvery: four clumps of three rejected retries sent at +0, +1
// and +3 ms from 0, 100, 200 and 300 ms, every retry of a clump with the
// clump's out leg (10, 40, 20, 60 ms). Over all 66 pairs: 12 in-clump pairs
// differ by 0, the 54 others by 30, 10, 50, 20, 20, 40 ms, 9 pairs each; the
// lower middle of the 66 differences is 20 ms, so the limit is 10 ms. Pairs
// sent under 2 ms apart (+0/+1) and 2-5 ms apart (+1/+3, +0/+3) differ by
// 0; no pair is 5-50 ms apart; the 97-99 ms pairs cross clumps, with a
// median difference above 10 ms: 5 ms. With the legs shuffled between
// clumps' members no bin is alike: 0. Admitted and first attempts are not
// counted.
func TestFitSharedEvery(t *testing.T) {
	origin := time.Unix(2000, 0)
	var hs []Handshake
	legs := []float64{10, 40, 20, 60}
	for k, leg := range legs {
		for _, off := range []float64{0, 1, 3} {
			out := leg
			hs = append(hs, Handshake{Attempt: 2, Status: 429, OutMs: &out,
				sent: origin.Add(time.Duration((float64(100*k) + off) * float64(time.Millisecond)))})
		}
	}
	first := 500.0
	hs = append(hs, Handshake{Attempt: 1, Status: 429, OutMs: &first, sent: origin},
		Handshake{Attempt: 2, Status: 101, OutMs: &first, sent: origin})
	if got := fitSharedEvery(hs); got != 5*time.Millisecond {
		t.Errorf("fitSharedEvery = %v, want 5ms", got)
	}
	for i := range hs[:12] { // member i of every clump gets leg i: clumps no longer alike
		out := legs[i%4] + float64(i%3)*15
		hs[i].OutMs = &out
	}
	if got := fitSharedEvery(hs); got != 0 {
		t.Errorf("shuffled legs: fitSharedEvery = %v, want 0", got)
	}
	if got := fitSharedEvery(hs[:2]); got != 0 {
		t.Errorf("two retries: fitSharedEvery = %v, want 0", got)
	}
}

// TestFirstArrivals: a first attempt's start delay plus its out leg
// (15 + 120 ms); one without a known decision, and retries, are left out.
func TestFirstArrivals(t *testing.T) {
	out := 120.0
	hs := []Handshake{{Attempt: 1, OutMs: &out, startMs: 15, hasStart: true}, {Attempt: 1, startMs: 9, hasStart: true},
		{Attempt: 2, OutMs: &out}}
	if got := firstArrivals(hs); len(got) != 1 || got[0] != 135 {
		t.Errorf("firstArrivals = %v, want [135]", got)
	}
}

// TestFitLegsCountsTheLag: a retry's out leg runs from when it was due, so
// a 429 retry sent 5 ms late that took 30 ms to its decision has an out
// leg of 35 ms.
func TestFitLegsCountsTheLag(t *testing.T) {
	var hs []Handshake
	for range 3 {
		out := 30.0
		hs = append(hs, Handshake{Attempt: 2, Status: 429, LatencyMs: 40, OutMs: &out, lagMs: 5})
	}
	var f Fit
	fitLegs(&f, hs)
	if o := f.NetworkWithLegs.OutLeg; o == nil || o.Dist != "fixed" || o.Value != 35*time.Millisecond {
		t.Errorf("out leg = %v, want fixed 35ms", o)
	}
	if f.RetryLagMs.P50 != 5 {
		t.Errorf("retry lag p50 = %v, want 5", f.RetryLagMs.P50)
	}
}
