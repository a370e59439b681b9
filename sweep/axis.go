package sweep

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"stormsim/config"
)

// Axis is one swept config key and its values in grid order.
type Axis struct {
	Path   string  // config key path, e.g. "lease.duration"
	Where  string  // FILE:LINE of the axis, for errors
	Values []Value // in grid order
	Unit   string  // "ms" when every value is a duration, else ""
	Log    bool    // a log-scale range
}

// Value is one grid value of an axis.
type Value struct {
	YAML  string  // one-line YAML given to config.Document.Set
	Label string  // how charts, ids and the CSV name it, e.g. "500ms"
	X     float64 // position on a chart: milliseconds for durations, the number for numbers, NaN otherwise
}

// Numeric reports whether every value has a chart position; otherwise the
// axis is categorical and charts place values at 0, 1, 2, ...
func (a Axis) Numeric() bool {
	for _, v := range a.Values {
		if math.IsNaN(v.X) {
			return false
		}
	}
	return true
}

// maxRangeSteps bounds one range so that a typo cannot ask for a grid
// that never ends.
const maxRangeSteps = 10_000

// expandAxis turns an axis as written into its grid values.
func expandAxis(ax config.SweepAxis) (Axis, error) {
	out := Axis{Path: ax.Path, Where: ax.Where}
	if ax.Range == nil {
		allDurations := true
		for _, y := range ax.Values {
			v := Value{YAML: y, Label: y, X: math.NaN()}
			if d, err := time.ParseDuration(y); err == nil {
				v.X = float64(d) / float64(time.Millisecond)
			} else if f, err := strconv.ParseFloat(y, 64); err == nil && !math.IsInf(f, 0) {
				v.X, allDurations = f, false
			} else {
				allDurations = false
			}
			out.Values = append(out.Values, v)
		}
		if allDurations {
			out.Unit = "ms"
		}
		return out, nil
	}
	r := ax.Range
	fail := func(format string, args ...any) (Axis, error) {
		return Axis{}, &config.Error{Where: ax.Where, Path: "axes." + ax.Path, Problem: fmt.Sprintf(format, args...)}
	}
	if r.Steps > maxRangeSteps {
		return fail("steps must be <= %d (got %d)", maxRangeSteps, r.Steps)
	}
	out.Log = r.Scale == "log"
	from, fromDur, err1 := parseEnd(r.From)
	to, toDur, err2 := parseEnd(r.To)
	// 0 needs no unit, so {from: 0, to: 1s} is a duration range.
	if fromDur != toDur && err1 == nil && err2 == nil && ((!fromDur && from == 0) || (!toDur && to == 0)) {
		fromDur, toDur = true, true
	}
	switch {
	case err1 != nil:
		return fail("from must be a number or a duration such as 50ms (got %q)", r.From)
	case err2 != nil:
		return fail("to must be a number or a duration such as 50ms (got %q)", r.To)
	case fromDur != toDur:
		return fail("from and to must both be durations or both numbers (got %s and %s)", r.From, r.To)
	case from == to:
		return fail("from and to are equal (%s); a single value is a list: [%s]", r.From, r.From)
	case out.Log && (from <= 0 || to <= 0):
		return fail("a log range needs from and to > 0 (got %s and %s)", r.From, r.To)
	}
	integers := !fromDur && isInteger(r.From) && isInteger(r.To)
	seen := map[string]bool{}
	for i := range r.Steps {
		x := rangePoint(from, to, i, r.Steps, out.Log)
		var v Value
		switch {
		case fromDur:
			// Durations are rounded to the microsecond: a log grid would
			// otherwise name points 86.60254037ms.
			d := time.Duration(math.Round(x/1e3)) * time.Microsecond
			v = Value{YAML: d.String(), Label: d.String(), X: float64(d) / float64(time.Millisecond)}
		case integers:
			x = math.Round(x)
			s := strconv.FormatFloat(x, 'f', -1, 64)
			v = Value{YAML: s, Label: s, X: x}
		default:
			x, _ = strconv.ParseFloat(strconv.FormatFloat(x, 'g', 6, 64), 64)
			s := strconv.FormatFloat(x, 'g', -1, 64)
			v = Value{YAML: s, Label: s, X: x}
		}
		if seen[v.Label] {
			return fail("%d steps from %s to %s repeat the value %s; use fewer steps, or write from and to with a decimal point for fractional values", r.Steps, r.From, r.To, v.Label)
		}
		seen[v.Label] = true
		out.Values = append(out.Values, v)
	}
	if fromDur {
		out.Unit = "ms"
	}
	return out, nil
}

// parseEnd reads a range end: a duration (in nanoseconds) or a number.
// A bare number, 0 included, is a number.
func parseEnd(s string) (x float64, isDuration bool, err error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return 0, false, fmt.Errorf("bad range end %q", s)
		}
		return f, false, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, false, fmt.Errorf("bad range end %q", s)
	}
	return float64(d), true, nil
}

func isInteger(s string) bool {
	return !strings.ContainsAny(s, ".eE") && !strings.Contains(strings.ToLower(s), "inf")
}

// rangePoint is the i-th of steps values from from to to: evenly spaced,
// or with even ratios on a log scale. The ends are exact.
func rangePoint(from, to float64, i, steps int, log bool) float64 {
	switch i {
	case 0:
		return from
	case steps - 1:
		return to
	}
	f := float64(i) / float64(steps-1)
	if log {
		return from * math.Pow(to/from, f)
	}
	return from + (to-from)*f
}
