package plots

import (
	"math"
	"strconv"
	"strings"
)

// fmtCount writes a count with thousands separators: 100500 -> "100,500".
// Non-integers keep up to three significant decimals below 100.
func fmtCount(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	if a := math.Abs(v); a < 100 && a != math.Trunc(a) {
		return strconv.FormatFloat(v, 'f', decimalsSig(a, 3), 64)
	}
	s := strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// decimalsSig is the number of decimals that shows a (> 0) to sig
// significant digits.
func decimalsSig(a float64, sig int) int {
	if a == 0 {
		return 0
	}
	d := sig - 1 - int(math.Floor(math.Log10(a)))
	return max(0, min(d, 6))
}

// fmtDuration writes milliseconds readably to three significant digits:
// 850 -> "850 ms", 4580 -> "4.58 s", 623900 -> "624 s".
func fmtDuration(ms float64) string {
	if math.IsNaN(ms) || math.IsInf(ms, 0) {
		return "n/a"
	}
	if math.Abs(ms) < 1000 {
		return strconv.FormatFloat(roundSig(ms, 3), 'f', -1, 64) + " ms"
	}
	s := roundSig(ms/1000, 3)
	if s >= 1000 {
		return fmtCount(s) + " s"
	}
	return strconv.FormatFloat(s, 'f', -1, 64) + " s"
}

// roundSig rounds v to sig significant digits.
func roundSig(v float64, sig int) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	p := math.Pow(10, float64(sig-1)-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*p) / p
}

// fmtRatio writes a factor: 136.2 -> "136×", 2.14 -> "2.1×".
func fmtRatio(r float64) string {
	if r >= 9.95 {
		return fmtCount(math.Round(r)) + "×"
	}
	return strconv.FormatFloat(r, 'f', 1, 64) + "×"
}

// fmtValue writes a metric value to three significant digits with
// thousands separators: 1234.5 -> "1,230", 0.01234 -> "0.0123".
func fmtValue(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	r := roundSig(v, 3)
	if math.Abs(r) >= 1000 {
		return fmtCount(r)
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// fmtCell writes a heat-map cell's value to sig significant digits in
// about five characters: 1234 -> "1,230" and 25040 -> "25k" at 3 digits,
// 25040 -> "25.04k" at 4, 2500000 -> "2.5M".
func fmtCell(v float64, sig int) string {
	if math.IsNaN(v) {
		return ""
	}
	switch a := math.Abs(v); {
	case a >= 1e6:
		return strconv.FormatFloat(roundSig(v/1e6, sig), 'f', -1, 64) + "M"
	case a >= 1e4:
		return strconv.FormatFloat(roundSig(v/1e3, sig), 'f', -1, 64) + "k"
	}
	r := roundSig(v, sig)
	if math.Abs(r) >= 1000 && r == math.Trunc(r) {
		return fmtCount(r)
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// fmtPercent writes a fraction as a whole per cent: 0.804 -> "80%".
func fmtPercent(f float64) string {
	return strconv.FormatFloat(math.Round(f*100), 'f', 0, 64) + "%"
}
