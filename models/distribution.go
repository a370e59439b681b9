package models

import (
	"fmt"
	"math"
	"math/bits"
	"time"

	"stormsim/internal/param"
	"stormsim/policies/rng"

	"gonum.org/v1/gonum/mathext"
)

// Distribution is a configured random duration: fixed, uniform, lognormal
// or empirical. Samples come from the counter-based draws by inverse
// transform, so they depend only on (seed, client, attempt) like every
// other draw.
//
// An empirical distribution is given by its quantiles at equally spaced
// probabilities, Points[i] at i/(n-1) from the least (0) to the greatest
// (1), the distribution function linear between them: what a measurement
// gives when no textbook shape fits it (stormsim calibrate writes the
// clients' detection delays this way).
type Distribution struct {
	Dist   DistKind      `yaml:"dist"`   // DistFixed (also ""), DistUniform, DistLognormal or DistEmpirical
	Value  time.Duration `yaml:"value"`  // fixed: the duration
	Min    time.Duration `yaml:"min"`    // uniform: lower end, inclusive
	Max    time.Duration `yaml:"max"`    // uniform: upper end, exclusive
	Median time.Duration `yaml:"median"` // lognormal: exp(mu)
	Sigma  float64       `yaml:"sigma"`  // lognormal: standard deviation of ln(duration)
	Cap    time.Duration `yaml:"cap"`    // lognormal: largest sample (default 100 * median)
	// Points are an empirical distribution's quantiles, ascending, at least
	// 2 and at most MaxPoints.
	Points []time.Duration `yaml:"points,omitempty"`

	// Set by Validate, so that a lognormal sample needs no logarithm and
	// no second look at its parameters.
	mu    float64       // ln(Median)
	upper time.Duration // the cap
}

// DistKind is a distribution's family (Distribution.Dist).
type DistKind string

// The distribution families.
const (
	DistFixed     DistKind = "fixed"
	DistUniform   DistKind = "uniform"
	DistLognormal DistKind = "lognormal"
	DistEmpirical DistKind = "empirical"
)

// MaxPoints bounds an empirical distribution's quantiles.
const MaxPoints = 1001

// Validate checks the distribution's parameters.
func (d *Distribution) Validate() error {
	switch d.Dist {
	case "", DistFixed:
		if d.Value < 0 {
			return &param.Error{Key: "value", Problem: "must be >= 0", Got: d.Value}
		}
	case DistUniform:
		if d.Min < 0 || d.Max <= d.Min {
			return &param.Error{Key: "max", Problem: "must be > min >= 0", Got: d.Max}
		}
	case DistLognormal:
		if d.Median <= 0 {
			return &param.Error{Key: "median", Problem: "must be > 0", Got: d.Median}
		}
		if !(d.Sigma > 0) || d.Sigma > 5 {
			return &param.Error{Key: "sigma", Problem: "must be in (0, 5]", Got: d.Sigma}
		}
		if d.Cap < 0 || (d.Cap > 0 && d.Cap < d.Median) {
			return &param.Error{Key: "cap", Problem: "must be >= median", Got: d.Cap}
		}
		d.mu, d.upper = math.Log(float64(d.Median)), d.Upper()
	case DistEmpirical:
		if len(d.Points) < 2 || len(d.Points) > MaxPoints {
			return &param.Error{Key: "points", Problem: fmt.Sprintf("must list 2 to %d quantiles", MaxPoints), Got: len(d.Points)}
		}
		for i, p := range d.Points {
			if p < 0 || (i > 0 && p < d.Points[i-1]) {
				return &param.Error{Key: fmt.Sprintf("points[%d]", i), Problem: "must be >= 0 and >= the point before it", Got: p}
			}
		}
	default:
		return &param.Error{Key: "dist", Problem: "must be fixed, uniform, lognormal or empirical", Got: d.Dist}
	}
	if d.Dist != DistEmpirical && len(d.Points) > 0 {
		return &param.Error{Key: "points", Problem: "apply to dist: empirical only", Got: d.Dist}
	}
	return nil
}

// IsZero reports whether the distribution always gives 0.
func (d *Distribution) IsZero() bool {
	return d == nil || ((d.Dist == "" || d.Dist == DistFixed) && d.Value == 0)
}

// Sample maps 64 random bits to a duration of the distribution.
func (d *Distribution) Sample(u uint64) time.Duration {
	switch d.Dist {
	case DistUniform:
		return d.Min + rng.UniformDuration(u, d.Max-d.Min)
	case DistLognormal:
		// Inverse transform, exp(mu + sigma * Phi^-1(p)) as gonum's
		// distuv.LogNormal.Quantile computes it; p is kept inside (0, 1).
		// The conversion keeps the product from being fused into the sum,
		// which some architectures would round differently.
		p := (float64(u>>11) + 0.5) / (1 << 53)
		mu, upper := d.mu, d.upper
		if upper == 0 { // not validated
			mu, upper = math.Log(float64(d.Median)), d.Upper()
		}
		return min(time.Duration(math.Round(math.Exp(mu+float64(d.Sigma*mathext.NormalQuantile(p))))), upper)
	case DistEmpirical:
		// u picks a segment and the place in it, in integers: exact and
		// the same on every machine.
		seg, frac := bits.Mul64(u, uint64(len(d.Points)-1))
		lo := d.Points[seg]
		return lo + rng.UniformDuration(frac, d.Points[seg+1]-lo)
	}
	return d.Value
}

// Upper bounds every sample.
func (d *Distribution) Upper() time.Duration {
	switch d.Dist {
	case DistUniform:
		return d.Max
	case DistLognormal:
		if d.Cap > 0 {
			return d.Cap
		}
		return 100 * d.Median
	case DistEmpirical:
		return d.Points[len(d.Points)-1]
	}
	return d.Value
}

// Mean is the distribution's mean (lognormal: median * exp(sigma^2/2), ignoring the cap).
func (d *Distribution) Mean() time.Duration {
	switch d.Dist {
	case DistEmpirical:
		// Each segment holds 1/(n-1) of the mass, uniform: its midpoint.
		var sum float64
		for i := 1; i < len(d.Points); i++ {
			sum += float64(d.Points[i-1]+d.Points[i]) / 2
		}
		return time.Duration(math.Round(sum / float64(len(d.Points)-1)))
	case DistUniform:
		return (d.Min + d.Max) / 2
	case DistLognormal:
		return time.Duration(float64(d.Median) * math.Exp(d.Sigma*d.Sigma/2))
	}
	return d.Value
}
