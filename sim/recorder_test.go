package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestRecorderQuantilesAnyOrder: connect times that arrive out of order
// (as with network latency) give the nearest-rank quantiles of the sorted
// times, whether the disorder starts early, late or never.
func TestRecorderQuantilesAnyOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	for trial := 0; trial < 200; trial++ {
		n := 1 + r.IntN(500)
		times := make([]time.Duration, n)
		for i := range times {
			times[i] = time.Duration(r.Int64N(int64(time.Second)))
		}
		if trial%3 == 0 {
			slices.Sort(times) // in order: kept as deltas throughout
		} else if trial%3 == 1 {
			slices.Sort(times[:n/2]) // in order for a while, then not
		}
		var rec recorder
		for _, t := range times {
			rec.connected(t)
		}
		sorted := slices.Clone(times)
		slices.Sort(sorted)
		rank := func(p int) float64 { return ms(sorted[(n*p+99)/100-1]) }
		want := Quantiles{P50: rank(50), P90: rank(90), P99: rank(99), Max: ms(sorted[n-1])}
		if got := rec.quantiles(); got != want {
			t.Fatalf("trial %d (n=%d): quantiles %+v, want %+v", trial, n, got, want)
		}
	}
}
