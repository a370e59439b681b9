package htmlreport

import (
	"math"
	"strconv"

	"stormsim/internal/human"
)

// seconds writes a time in ms to three significant digits, in the unit a
// planner reads it in: "850 ms", "4.52 s", "624 s", "1,412 s".
func seconds(ms float64) string {
	if math.IsNaN(ms) || math.IsInf(ms, 0) {
		return "n/a"
	}
	if math.Abs(ms) < 1000 {
		return strconv.FormatFloat(sig3(ms), 'f', -1, 64) + " ms"
	}
	s := sig3(ms / 1000)
	if s >= 1000 {
		return human.Count(int64(math.Round(s))) + " s"
	}
	return strconv.FormatFloat(s, 'f', -1, 64) + " s"
}

func sig3(v float64) float64 {
	if v == 0 {
		return 0
	}
	p := math.Pow(10, 2-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*p) / p
}

// times compares two counts, a with b, in words: "20× fewer", "35% more";
// "as many" within half a per cent.
func times(a, b float64) string {
	switch {
	case a == b || math.Abs(a-b) < 0.005*math.Max(a, b):
		return "as many"
	case a < b && b >= 2*a:
		return factor(b/a) + " fewer"
	case a < b:
		return percent(1-a/b) + " fewer"
	case a >= 2*b:
		return factor(a/b) + " more"
	}
	return percent(a/b-1) + " more"
}

// factor writes a ratio: 136.2 -> "136×", 2.14 -> "2.1×".
func factor(r float64) string {
	if r >= 9.95 {
		return human.Count(int64(math.Round(r))) + "×"
	}
	return strconv.FormatFloat(r, 'f', 1, 64) + "×"
}

// percent writes a fraction as whole per cent: 0.804 -> "80%".
func percent(f float64) string {
	return strconv.FormatFloat(math.Round(f*100), 'f', 0, 64) + "%"
}

// count writes a count with thousands separators.
func count(n int64) string { return human.Count(n) }
