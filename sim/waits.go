package sim

import (
	"math/bits"
	"time"

	"stormsim/internal/quantile"
)

// waitHistogram tallies durations in log-linear buckets: exact below
// 2^waitBits nanoseconds, and above it in buckets 2^-waitBits of their
// lower bound wide, so that a quantile read off a bucket's midpoint is
// within 2^-(waitBits+1) of the true value. It holds at most about 100,000
// counters however many durations it sees: a metastable storm makes tens
// of millions of queue waits, too many to keep.
type waitHistogram struct {
	counts []int64
	n      int64
	max    time.Duration
}

const waitBits = 11

func waitBucket(d time.Duration) int {
	v := uint64(d)
	if v < 1<<waitBits {
		return int(v)
	}
	shift := bits.Len64(v) - 1 - waitBits
	return (shift+1)<<waitBits + int(v>>shift) - 1<<waitBits
}

// waitBucketMid is the midpoint of bucket b, rounded down.
func waitBucketMid(b int) time.Duration {
	if b < 1<<waitBits {
		return time.Duration(b)
	}
	shift := b>>waitBits - 1
	lo := uint64(b&(1<<waitBits-1)|1<<waitBits) << shift
	return time.Duration(lo + (uint64(1)<<shift)/2)
}

func (h *waitHistogram) add(d time.Duration) {
	b := waitBucket(d)
	for b >= len(h.counts) {
		h.counts = append(h.counts, 0)
	}
	h.counts[b]++
	h.n++
	h.max = max(h.max, d)
}

// quantile is the nearest-rank pct-th percentile (the ceil(n*pct/100)-th
// smallest), to within its bucket's half width; 0 when empty.
func (h *waitHistogram) quantile(pct int64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := quantile.RankPercent(h.n, pct)
	var seen int64
	for b, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(waitBucketMid(b), h.max)
		}
	}
	return h.max
}

func (h *waitHistogram) quantiles() WaitQuantiles {
	return WaitQuantiles{P50: ms(h.quantile(50)), P99: ms(h.quantile(99)), Max: ms(h.max)}
}
