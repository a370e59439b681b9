package fit

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"stormsim/internal/quantile"
)

// TestMedianPairDifference: against every difference held and its median
// taken, on values with ties, negatives, a single repeated value and
// milliseconds as the lab writes them; and by hand on four values, whose
// six differences are |1-2|=1, |1-4|=3, |1-8|=7,
// |2-4|=2, |2-8|=6, |4-8|=4: sorted 1 2 3 4 6 7, the lower middle 3.
func TestMedianPairDifference(t *testing.T) {
	if got := medianPairDifference([]float64{8, 1, 4, 2}); got != 3 {
		t.Errorf("by hand: got %v, want 3", got)
	}
	for _, short := range [][]float64{nil, {5}} {
		if got := medianPairDifference(short); got != 0 {
			t.Errorf("%v: got %v, want 0", short, got)
		}
	}
	rng := rand.New(rand.NewPCG(26, 48))
	cases := map[string][]float64{"same": {7, 7, 7, 7, 7}}
	for _, n := range []int{2, 3, 10, 101, 400} {
		var ms, whole []float64
		for range n {
			ms = append(ms, math.Round(rng.ExpFloat64()*40000)/1000-3)
			whole = append(whole, float64(rng.IntN(6)))
		}
		cases["ms-"+strconv.Itoa(n)], cases["ties-"+strconv.Itoa(n)] = ms, whole
	}
	for name, values := range cases {
		var all []float64
		for i := range values {
			for j := i + 1; j < len(values); j++ {
				all = append(all, math.Abs(values[j]-values[i]))
			}
		}
		if got, want := medianPairDifference(values), quantile.Median(all); got != want {
			t.Errorf("%s: got %v, want %v", name, got, want)
		}
	}
}
