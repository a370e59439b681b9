package solve

import (
	"math"
	"strconv"
	"strings"

	"stormsim/internal/human"
)

// formatNumber writes v in the shortest form that reads back exactly.
func formatNumber(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// formatMetric writes a metric value for reading in its unit: a time
// as a duration ("60s", "101.25s"), anything else with thousands
// separators and at most four significant digits after the point
// ("25,000", "0.95").
func formatMetric(v float64, unit string) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "no data"
	case unit == "ms":
		return human.Millis(v)
	case unit == "s":
		return human.Millis(v * 1000)
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return human.Count(int64(v))
	}
	decimals := 0
	if a := math.Abs(v); a < 1000 {
		decimals = min(6, 3-int(math.Floor(math.Log10(a))))
	}
	s := human.Fixed(v, max(decimals, 0))
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// formatPercent writes a fraction as a signed percentage to three
// significant digits: 0.687 is "+68.7%".
func formatPercent(f float64) string {
	p := 100 * f
	decimals := 1
	if math.Abs(p) >= 100 {
		decimals = 0
	}
	s := strconv.FormatFloat(p, 'f', decimals, 64)
	if p >= 0 {
		s = "+" + s
	}
	return s + "%"
}

// ShiftText writes a difference of two values of the varied key in the
// key's unit, signed when signed is set: "-108.1", "+1.5s", "0". The
// values are labels of at most a few significant digits, so the
// difference is rounded to ten, dropping the float noise of the
// subtraction (557 - 448.9 is 108.10000000000002).
func (d *Document) ShiftText(v float64, signed bool) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 10, 64), 64)
	sign := ""
	switch {
	case signed && r > 0:
		sign = "+"
	case r < 0:
		sign, r = "-", -r
	}
	if d.Vary.Unit == "ms" {
		return sign + human.Millis(r)
	}
	return sign + strconv.FormatFloat(r, 'f', -1, 64)
}
