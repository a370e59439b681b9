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

// ExpandAxis turns an axis as written into its grid values: a list as
// written, or a range's steps.
func ExpandAxis(ax config.SweepAxis) (Axis, error) {
	if ax.Range == nil {
		return expandList(ax), nil
	}
	return expandRange(ax)
}

// expandList takes a list axis's values as written. Each has a chart
// position when it is a duration or a number; the axis is in
// milliseconds when every value is a duration.
func expandList(ax config.SweepAxis) Axis {
	out := Axis{Path: ax.Path, Where: ax.Where}
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
	return out
}

// rangeEnds are a range's ends read as numbers: nanoseconds for
// durations.
type rangeEnds struct {
	from, to  float64
	durations bool
}

// expandRange computes a range axis's steps (see rangePoint) and names
// each: durations rounded to the microsecond, integers when both ends
// are integers, other numbers to 6 significant digits. Steps that name
// one value twice are an error.
func expandRange(ax config.SweepAxis) (Axis, error) {
	r := ax.Range
	ends, err := readRange(ax)
	if err != nil {
		return Axis{}, err
	}
	out := Axis{Path: ax.Path, Where: ax.Where, Log: r.Scale == "log"}
	if ends.durations {
		out.Unit = "ms"
	}
	integers := !ends.durations && isInteger(r.From) && isInteger(r.To)
	seen := map[string]bool{}
	for i := range r.Steps {
		v := NumberValue(rangePoint(ends.from, ends.to, i, r.Steps, out.Log), ends.durations, integers)
		if seen[v.Label] {
			return Axis{}, axisError(ax, "%d steps from %s to %s repeat the value %s; use fewer steps, or write from and to with a decimal point for fractional values",
				r.Steps, r.From, r.To, v.Label)
		}
		seen[v.Label] = true
		out.Values = append(out.Values, v)
	}
	return out, nil
}

// readRange reads and checks a range's ends and steps.
func readRange(ax config.SweepAxis) (rangeEnds, error) {
	r := ax.Range
	if r.Steps > maxRangeSteps {
		return rangeEnds{}, axisError(ax, "steps must be <= %d (got %d)", maxRangeSteps, r.Steps)
	}
	from, fromDur, err1 := parseEnd(r.From)
	to, toDur, err2 := parseEnd(r.To)
	// 0 needs no unit, so {from: 0, to: 1s} is a duration range.
	if fromDur != toDur && err1 == nil && err2 == nil && ((!fromDur && from == 0) || (!toDur && to == 0)) {
		fromDur, toDur = true, true
	}
	switch {
	case err1 != nil:
		return rangeEnds{}, axisError(ax, "from must be a number or a duration such as 50ms (got %q)", r.From)
	case err2 != nil:
		return rangeEnds{}, axisError(ax, "to must be a number or a duration such as 50ms (got %q)", r.To)
	case fromDur != toDur:
		return rangeEnds{}, axisError(ax, "from and to must both be durations or both numbers (got %s and %s)", r.From, r.To)
	case from == to:
		return rangeEnds{}, axisError(ax, "from and to are equal (%s); a single value is a list: [%s]", r.From, r.From)
	case r.Scale == "log" && (from <= 0 || to <= 0):
		return rangeEnds{}, axisError(ax, "a log range needs from and to > 0 (got %s and %s)", r.From, r.To)
	}
	return rangeEnds{from: from, to: to, durations: fromDur}, nil
}

// NumberValue names a range's value x: a duration (x in nanoseconds)
// rounded to the microsecond, as a log grid would otherwise name points
// 86.60254037ms; an integer; or a number to 6 significant digits.
func NumberValue(x float64, duration, integer bool) Value {
	switch {
	case duration:
		d := time.Duration(math.Round(x/1e3)) * time.Microsecond
		return Value{YAML: d.String(), Label: d.String(), X: float64(d) / float64(time.Millisecond)}
	case integer:
		x = math.Round(x)
		s := strconv.FormatFloat(x, 'f', -1, 64)
		return Value{YAML: s, Label: s, X: x}
	default:
		x, _ = strconv.ParseFloat(strconv.FormatFloat(x, 'g', 6, 64), 64)
		s := strconv.FormatFloat(x, 'g', -1, 64)
		return Value{YAML: s, Label: s, X: x}
	}
}

// axisError is a problem with the axis ax, located at it.
func axisError(ax config.SweepAxis, format string, args ...any) error {
	return &config.Error{Where: ax.Where, Path: "axes." + ax.Path, Problem: fmt.Sprintf(format, args...)}
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
