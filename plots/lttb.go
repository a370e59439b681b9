package plots

import "math"

// LTTB picks at most threshold of the points (xs[i], ys[i]) that keep the
// shape of a line, by Largest-Triangle-Three-Buckets (S. Steinarsson,
// "Downsampling Time Series for Visual Representation", 2013), and returns
// their indices in increasing order. xs must be non-decreasing.
//
// The first and last points are always kept. The interior is split into
// threshold-2 buckets and each bucket keeps the point forming the largest
// triangle with the point kept before it and the average of the next
// bucket: a spike makes a large triangle, so peaks survive.
//
// Buckets have equal width in x, (xs[n-2]-xs[0])/(threshold-2), point k
// going to bucket ceil((xs[k]-xs[0])/width)-1. For evenly spaced xs this is
// exactly the original equal-count bucketing; for unevenly spaced xs (such
// as a log time axis) it gives each part of the axis its share of points,
// where equal counts would crush the sparse part. Empty buckets are
// skipped, so fewer than threshold points may come back.
//
// With threshold < 3 or threshold >= len(xs) every index is returned.
func LTTB(xs, ys []float64, threshold int) []int {
	n := len(xs)
	if threshold < 3 || threshold >= n {
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		return all
	}
	buckets := threshold - 2
	width := (xs[n-2] - xs[0]) / float64(buckets)
	bucketOf := func(k int) int {
		if !(width > 0) {
			return 0
		}
		// The tolerance keeps a point that sits exactly on a boundary, up
		// to rounding, in the lower bucket, as the integer formula does.
		b := int(math.Ceil((xs[k]-xs[0])/width-1e-9)) - 1
		return min(max(b, 0), buckets-1)
	}

	// spans are the non-empty buckets as index ranges [lo, hi).
	type span struct{ lo, hi int }
	spans := make([]span, 0, buckets)
	for k, last := 1, -1; k <= n-2; k++ {
		if b := bucketOf(k); b != last || len(spans) == 0 {
			spans = append(spans, span{k, k + 1})
			last = b
		} else {
			spans[len(spans)-1].hi = k + 1
		}
	}

	out := make([]int, 0, len(spans)+2)
	out = append(out, 0)
	a := 0
	for s, sp := range spans {
		nextX, nextY := xs[n-1], ys[n-1]
		if s+1 < len(spans) {
			nx := spans[s+1]
			nextX, nextY = 0, 0
			for k := nx.lo; k < nx.hi; k++ {
				nextX += xs[k]
				nextY += ys[k]
			}
			nextX /= float64(nx.hi - nx.lo)
			nextY /= float64(nx.hi - nx.lo)
		}
		best, bestArea := sp.lo, -1.0
		for k := sp.lo; k < sp.hi; k++ {
			// Twice the triangle's area; the factor does not change the winner.
			area := math.Abs((xs[a]-nextX)*(ys[k]-ys[a]) - (xs[a]-xs[k])*(nextY-ys[a]))
			if area > bestArea {
				best, bestArea = k, area
			}
		}
		out = append(out, best)
		a = best
	}
	return append(out, n-1)
}
