package check

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"stormsim/results"
)

// unit is the unit a bound was written in, so that the report gives the
// observed value the same way: the user who wrote 60s reads seconds.
type unit struct {
	suffix string  // written after the value: "s", "ms", "k", "%", ""
	scale  float64 // the metric's units in one of it (1000 for s on an _ms metric)
	yesNo  bool    // written as true or false
}

// siPrefixes are the multipliers a count or a rate may carry (25k).
var siPrefixes = []struct {
	suffix string
	scale  float64
}{{"k", 1e3}, {"M", 1e6}, {"G", 1e9}}

// durationUnits are Go's duration units in nanoseconds, those ending in s
// before s, so that "ms" is not read as "s".
var durationUnits = []struct {
	suffix string
	ns     float64
}{{"ns", 1}, {"us", 1e3}, {"µs", 1e3}, {"μs", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}, {"h", 3600e9}}

// parseBound reads NUMBER[UNIT] in the unit of metric m (see the package
// doc), and returns the unit it was written in.
func parseBound(s string, m results.MetricRef) (float64, unit, error) {
	if s == "" {
		return 0, unit{}, fmt.Errorf("missing number after the operator")
	}
	if tu := results.TimeUnit(m.Field); tu != "" {
		return parseTime(s, m, tu)
	}
	if v, ok := strings.CutSuffix(s, "%"); ok {
		f, err := number(strings.TrimSpace(v), s)
		return f / 100, unit{suffix: "%", scale: 0.01}, err
	}
	switch s { // for the metrics that are yes or no (converged, metastable)
	case "true":
		return 1, unit{scale: 1, yesNo: true}, nil
	case "false":
		return 0, unit{scale: 1, yesNo: true}, nil
	}
	text := s
	if isRate(m.Field) {
		text = strings.TrimSpace(strings.TrimSuffix(text, "/s"))
	}
	u := unit{scale: 1}
	for _, p := range siPrefixes {
		if rest, ok := strings.CutSuffix(text, p.suffix); ok {
			text, u = strings.TrimSpace(rest), unit{suffix: p.suffix, scale: p.scale}
			break
		}
	}
	if f, err := strconv.ParseFloat(text, 64); err == nil {
		return f * u.scale, u, finite(f*u.scale, s)
	}
	if _, err := time.ParseDuration(s); err == nil {
		return 0, unit{}, fmt.Errorf("%s is not a time (its name has no _ms or _seconds), so %s needs a plain number", m.Field, s)
	}
	return 0, unit{}, fmt.Errorf("%q is not a number (such as 25000 or 25k) or a percentage", s)
}

// parseTime reads a duration bound on a time metric whose own unit is tu
// ("ms" or "s"). A bare number is refused: 60 could mean 60 ms or 60 s.
func parseTime(s string, m results.MetricRef, tu string) (float64, unit, error) {
	perNs := 1e-6 // the metric's units in a nanosecond
	if tu == "s" {
		perNs = 1e-9
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f != 0 {
		other := map[string]string{"ms": "s", "s": "ms"}[tu]
		return 0, unit{}, fmt.Errorf("%s is a time: %s needs a unit, such as %s%s or %s%s", m, s, s, tu, s, other)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, unit{}, fmt.Errorf("%s is a time: %q is not a duration such as 60s, 1500ms or 1m30s", m, s)
	}
	u := unit{suffix: tu, scale: 1}
	for _, du := range durationUnits {
		if strings.HasSuffix(s, du.suffix) {
			u = unit{suffix: du.suffix, scale: du.ns * perNs}
			break
		}
	}
	return float64(d) * perNs, u, nil
}

// isRate reports whether a metric field is a rate per second.
func isRate(field string) bool {
	return strings.HasSuffix(strings.TrimSuffix(results.Pattern(field), "[]"), "_per_s")
}

// format writes v, in the metric's unit, in u: rounded to 4 significant
// digits, or more when fewer would make it read as bound while it is not.
func (u unit) format(v, bound float64) string {
	if u.yesNo && (v == 0 || v == 1) {
		return strconv.FormatBool(v == 1)
	}
	if u.scale == 0 {
		return formatNumber(v)
	}
	x, b := v/u.scale, bound/u.scale
	text := ""
	for digits := 4; digits <= 17; digits++ {
		if text = significant(x, digits); v == bound || text != significant(b, digits) {
			break
		}
	}
	return text + u.suffix
}

// significant writes x with about digits significant digits, never in
// exponent form, without trailing zeros; whole numbers in full.
func significant(x float64, digits int) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	decimals := 0
	if x != 0 {
		decimals = max(0, digits-1-int(math.Floor(math.Log10(math.Abs(x)))))
	}
	s := strconv.FormatFloat(x, 'f', min(decimals, 20), 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func number(s, whole string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", whole)
	}
	return f, finite(f, whole)
}

func finite(f float64, s string) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("%q must be a finite number", s)
	}
	return nil
}
