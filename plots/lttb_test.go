package plots

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestLTTBHandComputed(t *testing.T) {
	// 8 evenly spaced points down to 5: buckets {1,2}, {3,4}, {5,6}.
	// Twice the area for candidate k, with a the last kept point and m the
	// next bucket's mean: |(xa-mx)(yk-ya) - (xa-xk)(my-ya)|.
	//   bucket 1, a=(0,0), m=(3.5,2.5): k=1 -> 1, k=2 -> 12.5  => keep 2
	//   bucket 2, a=(2,5), m=(5.5,6.5): k=3 -> 12, k=4 -> 10   => keep 3
	//   bucket 3, a=(3,2), m=(7,0) (last point): k=5 -> 32, k=6 -> 14 => keep 5
	xs := []float64{0, 1, 2, 3, 4, 5, 6, 7}
	ys := []float64{0, 1, 5, 2, 3, 9, 4, 0}
	if got, want := LTTB(xs, ys, 5), []int{0, 2, 3, 5, 7}; !slices.Equal(got, want) {
		t.Fatalf("LTTB = %v, want %v", got, want)
	}
}

func TestLTTBSmallThresholdsReturnEverything(t *testing.T) {
	xs := []float64{0, 1, 2, 3}
	ys := []float64{1, 2, 3, 4}
	for _, threshold := range []int{0, 2, 4, 10} {
		if got := LTTB(xs, ys, threshold); !slices.Equal(got, []int{0, 1, 2, 3}) {
			t.Errorf("threshold %d: got %v, want all indices", threshold, got)
		}
	}
}

// canonicalLTTB is the original index-bucketed algorithm, transcribed from
// the reference implementation, as an oracle for evenly spaced data.
func canonicalLTTB(xs, ys []float64, threshold int) []int {
	n := len(xs)
	every := float64(n-2) / float64(threshold-2)
	out := []int{0}
	a := 0
	for i := 0; i < threshold-2; i++ {
		lo := int(math.Floor(float64(i+1)*every)) + 1
		hi := min(int(math.Floor(float64(i+2)*every))+1, n)
		var mx, my float64
		for k := lo; k < hi; k++ {
			mx += xs[k]
			my += ys[k]
		}
		mx /= float64(hi - lo)
		my /= float64(hi - lo)
		best, bestArea := -1, -1.0
		for k := int(math.Floor(float64(i)*every)) + 1; k < int(math.Floor(float64(i+1)*every))+1; k++ {
			area := math.Abs((xs[a]-mx)*(ys[k]-ys[a])-(xs[a]-xs[k])*(my-ys[a])) * 0.5
			if area > bestArea {
				best, bestArea = k, area
			}
		}
		out = append(out, best)
		a = best
	}
	return append(out, n-1)
}

func TestLTTBMatchesCanonicalOnEvenSpacing(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []struct{ n, threshold int }{
		{10, 3}, {10, 5}, {11, 4}, {100, 7}, {1000, 33}, {997, 100}, {5000, 2000},
	}
	for _, c := range cases {
		xs := make([]float64, c.n)
		ys := make([]float64, c.n)
		for i := range xs {
			xs[i] = float64(i) * 10 // a 10 ms window grid
			ys[i] = math.Floor(rng.ExpFloat64() * 100)
		}
		got, want := LTTB(xs, ys, c.threshold), canonicalLTTB(xs, ys, c.threshold)
		if !slices.Equal(got, want) {
			t.Errorf("n=%d threshold=%d: differs from canonical LTTB", c.n, c.threshold)
		}
	}
}

func TestLTTBKeepsIsolatedPeaks(t *testing.T) {
	// A quiet series with a spike every 320 windows, like exponential backoff
	// at its cap: every spike must survive a 30x reduction.
	const n = 62390
	xs := make([]float64, n)
	ys := make([]float64, n)
	var spikes []int
	for i := range xs {
		xs[i] = float64(i)
		if i%320 == 7 {
			ys[i] = 5
			spikes = append(spikes, i)
		}
	}
	kept := LTTB(xs, ys, 2000)
	if len(kept) > 2000 {
		t.Fatalf("kept %d points, want <= 2000", len(kept))
	}
	for _, s := range spikes {
		if _, ok := slices.BinarySearch(kept, s); !ok {
			t.Fatalf("spike at %d dropped", s)
		}
	}
}

func TestLTTBUnevenSpacingKeepsSparsePart(t *testing.T) {
	// Log-transformed window starts: the first windows lie far apart, the
	// late ones are dense. Each of the first 10 windows has a bucket of its
	// own, so all of them are kept.
	const n = 50000
	xs := make([]float64, n)
	ys := make([]float64, n)
	for i := range xs {
		xs[i] = math.Log10(float64(i) + 0.5)
		ys[i] = float64(i % 7)
	}
	kept := LTTB(xs, ys, 500)
	for i := range 10 {
		if kept[i] != i {
			t.Fatalf("kept[:10] = %v, want 0..9", kept[:10])
		}
	}
	if len(kept) > 500 {
		t.Fatalf("kept %d points, want <= 500", len(kept))
	}
}
