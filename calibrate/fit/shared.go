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
	var all []float64
	byGap := make([][]float64, len(sharedGapsMs))
	for i := range rs {
		for j := i + 1; j < len(rs); j++ {
			d := math.Abs(rs[j].legMs - rs[i].legMs)
			all = append(all, d)
			gap := rs[j].sentMs - rs[i].sentMs
			if b, ok := slices.BinarySearch(sharedGapsMs, gap); b < len(sharedGapsMs) {
				if ok { // on an edge: the next bin's
					b++
				}
				if b < len(sharedGapsMs) {
					byGap[b] = append(byGap[b], d)
				}
			}
		}
	}
	limit := quantile.Median(all) / 2
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
