package policies

import (
	"math/bits"
	"time"
)

// Fixed is a fixed-point fraction with Scale as one, so that multipliers and
// jitter factors apply to durations with integer arithmetic only.
type Fixed int64

// Scale is the fixed-point one: a Fixed of Scale means 1.0 (parts per million).
const Scale Fixed = 1_000_000

// FixedFrom converts f to parts per million, rounding to nearest.
func FixedFrom(f float64) Fixed {
	if f < 0 {
		return -FixedFrom(-f)
	}
	return Fixed(f*float64(Scale) + 0.5)
}

// Float returns the fraction as a float64, for display.
func (x Fixed) Float() float64 { return float64(x) / float64(Scale) }

// mulFixed returns d*x rounded down, saturating at limit (limit > 0).
func mulFixed(d time.Duration, x Fixed, limit time.Duration) time.Duration {
	if d <= 0 || x <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(d), uint64(x))
	if hi >= uint64(Scale) {
		return limit
	}
	q, _ := bits.Div64(hi, lo, uint64(Scale))
	if q > uint64(limit) {
		return limit
	}
	return time.Duration(q)
}
