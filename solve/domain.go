package solve

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"stormsim/config"
	"stormsim/sweep"
)

// Goal says which end of the feasible values a solve answers with.
type Goal string

// The goals.
const (
	Least Goal = "least"
	Most  Goal = "most"
)

// Domain is the varied key's range and how finely it is searched. A
// value is held as a float64 in the key's own unit: the count for an
// integer key, the number for a number, nanoseconds for a duration
// (exact to 2^53 ns, 104 days).
type Domain struct {
	Key      string
	Kind     config.KeyKind
	Min, Max float64
	Goal     Goal
	// Resolution is the search's stopping width: in the key's unit, or,
	// with Relative, a fraction of the value (0.01 for 1%).
	Resolution float64
	Relative   bool
	// ResolutionText is the resolution as written: "1%", "10ms", "5".
	ResolutionText string
	Start          float64 // with HasStart, grow from here instead of probing Min and Max first
	HasStart       bool
	Scan           int // grid intervals over [Min, Max] when a verdict is not monotone
}

// DefaultScan is how many intervals a non-monotone search scans
// [min, max] in when the file does not say.
const DefaultScan = 16

// MaxScan bounds scan: a grid of more points costs as many probes.
const MaxScan = 256

// newDomain reads vary: as written into a domain, checking every value
// against the key's kind. Errors are located at the value.
func newDomain(v config.SolveVary) (Domain, error) {
	d := Domain{Key: v.Key.Value, Scan: DefaultScan}
	fail := func(at config.Located, key, format string, args ...any) error {
		return &config.Error{Where: at.Where, Path: "vary." + key, Problem: fmt.Sprintf(format, args...)}
	}
	kind, err := config.Kind(d.Key)
	if err != nil {
		return d, &config.Error{Where: v.Key.Where, Path: "vary.key", Problem: "cannot be varied: " + err.Error()}
	}
	if d.Key == "seed" {
		// Every probe runs the same seeds; a verdict against the seed has
		// no order to bisect.
		return d, &config.Error{Where: v.Key.Where, Path: "vary.key", Problem: "cannot be varied: seed is where every probe's seeds start (seed to seed + replications - 1); a verdict has no order in it: set replications: for more seeds"}
	}
	d.Kind = kind
	switch Goal(v.Goal.Value) {
	case Least, Most:
		d.Goal = Goal(v.Goal.Value)
	default:
		return d, fail(v.Goal, "goal", "must be least or most (got %s)", v.Goal.Value)
	}
	if d.Min, err = d.parse(v.Min.Value); err != nil {
		return d, fail(v.Min, "min", "%v", err)
	}
	if d.Max, err = d.parse(v.Max.Value); err != nil {
		return d, fail(v.Max, "max", "%v", err)
	}
	if d.Min >= d.Max {
		return d, fail(v.Min, "min", "must be below max (got min %s, max %s)", v.Min.Value, v.Max.Value)
	}
	if err := d.readResolution(v.Resolution.Value); err != nil {
		return d, fail(v.Resolution, "resolution", "%v", err)
	}
	if v.Start.Value != "" {
		if d.Start, err = d.parse(v.Start.Value); err != nil {
			return d, fail(v.Start, "start", "%v", err)
		}
		if d.Start <= d.Min || d.Start >= d.Max {
			return d, fail(v.Start, "start", "must lie strictly between min and max (got %s)", v.Start.Value)
		}
		if d.Start <= 0 {
			return d, fail(v.Start, "start", "must be > 0: the bracket grows from it by doubling and halving (got %s)", v.Start.Value)
		}
		d.HasStart = true
	}
	if v.Scan.Value != "" {
		n, err := strconv.Atoi(v.Scan.Value)
		if err != nil || n < 2 || n > MaxScan {
			return d, fail(v.Scan, "scan", "must be an integer from 2 to %d: the grid intervals scanned when a verdict is not monotone (got %s)", MaxScan, v.Scan.Value)
		}
		d.Scan = n
	}
	return d, nil
}

// parse reads one value of the key: a count, a number or a duration, as
// the key's kind says.
func (d *Domain) parse(s string) (float64, error) {
	switch d.Kind {
	case config.KindDuration:
		dur, err := time.ParseDuration(s)
		if err != nil || dur < 0 {
			return 0, fmt.Errorf("%s is a duration: want one such as 100ms or 3.2s (got %s)", d.Key, s)
		}
		return float64(dur), nil
	case config.KindInteger:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 || n > 1<<53 {
			return 0, fmt.Errorf("%s is a count: want a whole number >= 0 (got %s)", d.Key, s)
		}
		return float64(n), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%s is a number: want one such as 50 or 2.5 (got %s)", d.Key, s)
	}
	return f, nil
}

// readResolution reads the resolution: a percentage of the value, or a
// width in the key's unit no finer than the unit the key is probed in
// (1 for a count, 1 µs for a duration, as sweep ranges name them).
func (d *Domain) readResolution(s string) error {
	d.ResolutionText = s
	if p, ok := strings.CutSuffix(s, "%"); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || !(f > 0 && f < 100) {
			return fmt.Errorf("a percentage must be above 0%% and below 100%% (got %s)", s)
		}
		if d.Min <= 0 {
			return fmt.Errorf("a percentage resolution needs min > 0, since it is a fraction of the value; give a width in the key's unit instead (got %s)", s)
		}
		d.Resolution, d.Relative = f/100, true
		return nil
	}
	r, err := d.parse(s)
	if err != nil {
		return fmt.Errorf("want a percentage such as 1%% or a width in the key's unit: %v", err)
	}
	switch unit := d.unit(); {
	case r <= 0:
		return fmt.Errorf("must be > 0 (got %s)", s)
	case r < unit:
		return fmt.Errorf("%s is finer than the %s's unit, %s (got %s)", s, d.Kind, d.Label(unit), s)
	case r >= d.Max-d.Min:
		return fmt.Errorf("%s is not finer than the range [%s, %s] itself", s, d.Label(d.Min), d.Label(d.Max))
	}
	d.Resolution = r
	return nil
}

// unit is the finest step a value of the key takes: 1 for a count, 1 µs
// for a duration, none (0) for a number.
func (d *Domain) unit() float64 {
	switch d.Kind {
	case config.KindInteger:
		return 1
	case config.KindDuration:
		return float64(time.Microsecond)
	}
	return 0
}

// Label writes x as the key's value: "420", "52.5", "1.5s".
func (d *Domain) Label(x float64) string {
	switch d.Kind {
	case config.KindInteger:
		return sweep.NumberValue(x, false, true).Label
	case config.KindDuration:
		return sweep.NumberValue(x, true, false).Label
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}

// Position is x where a chart or a table places it: milliseconds for a
// duration (as sweep axes are), the value otherwise.
func (d *Domain) Position(x float64) float64 {
	if d.Kind == config.KindDuration {
		return x / float64(time.Millisecond)
	}
	return x
}

// Unit names the unit of Position: "ms" for a duration, "" otherwise.
func (d *Domain) Unit() string {
	if d.Kind == config.KindDuration {
		return "ms"
	}
	return ""
}

// done reports whether [lo, hi] is within the resolution: the search
// can name a value in it and be no further than the resolution from the
// threshold between them.
func (d *Domain) done(lo, hi float64) bool {
	slack := 1 + 1e-9 // 1.1 - 1.0 is 0.10000000000000009
	if d.Relative {
		return hi-lo <= d.Resolution*lo*slack
	}
	return hi-lo <= d.Resolution*slack
}

// quantum is the step the values between lo and hi are rounded to, so
// that probes have short names: a power of ten a tenth of the resolution
// (for a percentage, of the resolution at lo), never finer than the
// key's unit.
func (d *Domain) quantum(lo float64) float64 {
	r := d.Resolution
	if d.Relative {
		r *= lo
	}
	q := math.Pow(10, math.Floor(math.Log10(r))-1)
	return max(q, d.unit())
}

// between is the value that splits [lo, hi] for a bisection: the middle
// (the geometric middle for a percentage resolution), rounded to the
// quantum; ok is false when no rounded value lies strictly inside.
func (d *Domain) between(lo, hi float64) (x float64, ok bool) {
	m := (lo + hi) / 2
	if d.Relative && lo > 0 {
		m = math.Sqrt(lo * hi)
	}
	q := d.quantum(lo)
	x = math.Round(m/q) * q
	if x <= lo {
		x = math.Ceil(lo/q+0.5) * q
	}
	if x >= hi {
		x = math.Floor(hi/q-0.5) * q
	}
	x = d.round(x, q)
	return x, x > lo && x < hi
}

// round writes away the binary noise of a multiple of q (0.1*3 is
// 0.30000000000000004): x to the decimals q has.
func (d *Domain) round(x, q float64) float64 {
	decimals := max(0, -int(math.Floor(math.Log10(q)+1e-9)))
	r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', decimals, 64), 64)
	return r
}

// walk is the next value of a bracket grown from start: x doubled (up)
// or halved, rounded to the quantum, within [Min, Max].
func (d *Domain) walk(x float64, up bool) float64 {
	next := x / 2
	if up {
		next = x * 2
	}
	q := d.quantum(next)
	next = d.round(math.Round(next/q)*q, q)
	return min(max(next, d.Min), d.Max)
}

// grid is the scan of a non-monotone search: scan intervals over
// [Min, Max] (even ratios for a percentage resolution), rounded to the
// quantum, each value once.
func (d *Domain) grid() []float64 {
	out := []float64{d.Min}
	for i := 1; i < d.Scan; i++ {
		f := float64(i) / float64(d.Scan)
		x := d.Min + (d.Max-d.Min)*f
		if d.Relative {
			x = d.Min * math.Pow(d.Max/d.Min, f)
		}
		q := d.quantum(x)
		x = d.round(math.Round(x/q)*q, q)
		if x > out[len(out)-1] && x < d.Max {
			out = append(out, x)
		}
	}
	return append(out, d.Max)
}

// Bisections bounds the probes one bisection takes from the whole range
// down to the resolution: ceil(log2((max - min) / resolution)), or, for
// a percentage p, ceil(log2(ln(max / min) / ln(1 + p))). Rounding each
// middle to the quantum can add one.
func (d *Domain) Bisections() int {
	var n float64
	if d.Relative {
		n = math.Log(d.Max/d.Min) / math.Log1p(d.Resolution)
	} else {
		n = (d.Max - d.Min) / d.Resolution
	}
	return int(math.Ceil(math.Log2(max(n, 1))))
}
