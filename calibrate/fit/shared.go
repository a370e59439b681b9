package fit

import (
	"math"
	"slices"
	"time"

	"stormsim/calibrate/measured"
	"stormsim/internal/quantile"
)

// sharedGapsMs are the send-gap bins (upper edges, ms) over which
// sharedEvery compares the out legs of two rejected retries.
var sharedGapsMs = []float64{2, 5, 10, 25, 50, 100, 250}

// SharedEach is how long the delay on the way to the survivor was common
// to every request: per run, and the median over the runs
// (network.shared_every).
type SharedEach struct {
	RunsMs []float64     `json:"runs_ms"`
	Every  time.Duration `json:"every"`
}

// fitShared measures each run's sharing and takes the median.
func fitShared(runs []*measured.Run) SharedEach {
	var s SharedEach
	for _, r := range runs {
		s.RunsMs = append(s.RunsMs, ms(sharedEvery(r)))
	}
	s.Every = durationMs(quantile.Median(s.RunsMs))
	return s
}

// sharedEvery measures network.shared_every in one real run. For each
// pair of rejected retries (their out legs as fitted: retryLegsOf) it
// takes the difference of the out legs; the result is the upper edge of
// the widest run of send-gap bins, from the narrowest on (bins without
// pairs skipped), in which the median difference is at most half the
// median over all pairs: retries sent that close are at least twice as
// alike as any two. 0 when even the narrowest bin is not, or with fewer
// than 3 retries.
func sharedEvery(r *measured.Run) time.Duration {
	rs, _ := retryLegsOf(r)
	if len(rs) < minSamples {
		return 0
	}
	byGap := make([][]float64, len(sharedGapsMs))
	widest := sharedGapsMs[len(sharedGapsMs)-1]
	outs := make([]float64, len(rs))
	for i := range rs {
		outs[i] = rs[i].legMs
		// rs is in send order: past the widest bin no later pair is binned.
		for j := i + 1; j < len(rs) && rs[j].sentMs-rs[i].sentMs < widest; j++ {
			d := math.Abs(rs[j].legMs - rs[i].legMs)
			b, ok := slices.BinarySearch(sharedGapsMs, rs[j].sentMs-rs[i].sentMs)
			if ok { // on an edge: the next bin's
				b++
			}
			byGap[b] = append(byGap[b], d)
		}
	}
	limit := medianPairDifference(outs) / 2
	shared := 0.0
	for b, ds := range byGap {
		if len(ds) == 0 {
			continue // no pair that far apart: no evidence either way
		}
		if quantile.Median(ds) > limit {
			break
		}
		shared = sharedGapsMs[b]
	}
	return durationMs(shared)
}

// medianPairDifference is the median (quantile.Median's rule, the lower
// middle) of |x[i] - x[j]| over every pair i < j of values, found without
// holding the n(n-1)/2 differences: 4,000 clients' storm has some 10,000
// rejected retries and 50 million pairs. The differences of the sorted
// values at most t are counted in one pass; the median is the least t
// whose count reaches its rank, searched over the bits of t (a
// non-negative float64's bits order as its value does), so it is one of
// the differences exactly. 0 for fewer than 2 values.
func medianPairDifference(values []float64) float64 {
	x := slices.Sorted(slices.Values(values))
	n := len(x)
	if n < 2 {
		return 0
	}
	rank := quantile.Rank(n*(n-1)/2, 0.5)
	atMost := func(t float64) int { // pairs whose difference is at most t
		count, lo := 0, 0
		for j := range x {
			for x[j]-x[lo] > t {
				lo++
			}
			count += j - lo
		}
		return count
	}
	lo, hi := uint64(0), math.Float64bits(x[n-1]-x[0])
	for lo < hi {
		mid := lo + (hi-lo)/2
		if atMost(math.Float64frombits(mid)) >= rank {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return math.Float64frombits(lo)
}
