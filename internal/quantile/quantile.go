// Package quantile is stormsim's one definition of a quantile: the
// nearest rank, the ceil(q*n)-th smallest of n values. It is always one
// of the values (never an interpolation between two), so a p99 connect
// time is a time some client really waited, and a quantile of whole
// counts is a whole count.
package quantile

import (
	"math"
	"slices"
)

// Rank is the 1-based rank of the q-quantile of n values: ceil(q*n),
// clamped to [1, n] (0 for no values). It serves values walked in order
// rather than held in a slice (a stream of connect times, a histogram).
// q is read as the decimal it is written as: a float64 holds 0.07 only
// approximately, so 0.07*100 comes out a hair above 7 and would round up
// to rank 8; a product within float rounding of a whole number is taken
// as that number. So for a whole percentage p, Rank(n, p/100) is the
// integer formula (n*p + 99) / 100.
func Rank(n int, q float64) int {
	if n <= 0 {
		return 0
	}
	x := q * float64(n)
	if r := math.Round(x); math.Abs(x-r) <= 0x1p-51*r {
		x = r
	}
	return min(max(int(math.Ceil(x)), 1), n)
}

// NearestRank is the q-quantile of sorted, which must be in increasing
// order: its Rank(len(sorted), q)-th value. It is 0 for no values.
func NearestRank(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[Rank(len(sorted), q)-1]
}

// Median is the median of values in any order by the same rule: the
// lower middle value of an even count; 0 for none.
func Median(values []float64) float64 {
	return NearestRank(slices.Sorted(slices.Values(values)), 0.5)
}

// RankPercent is Rank for a whole percentage pct of n values, in integers:
// (n*pct + 99) / 100, clamped to [1, n] (0 for no values). The engine uses
// it on counts that never pass through floating point.
func RankPercent(n, pct int64) int64 {
	if n <= 0 {
		return 0
	}
	return min(max((n*pct+99)/100, 1), n)
}
