package htmlreport

import "testing"

// TestFigureCells: figures are right-aligned, sentences that hold a
// figure are not (a calibration's fit and lab checks once overflowed).
func TestFigureCells(t *testing.T) {
	for _, c := range []struct {
		s    string
		want bool
	}{
		{"1,000", true}, {"4.522s", true}, {"+5.2%", true}, {"[180, 188]", true}, {"10/11 pass", true}, {"193 vs 194 (-0.6%)", true},
		{"998.901ms", true}, {"-", false}, {"full", false}, {"60 routes on gw-a before the fault", false},
		{"admit 41.7/s (mean claim gap while claims waited 24ms, 58 gaps); decide", false}, {"1.9s vs 1.64s (+15.8%)", true},
		{"12.708ms", true}, {"0s", true}, {"kill to sweep in [1s, 2s] ± 150ms", false}, {"100,500 ± 1,204", true},
	} {
		if got := figure.MatchString(c.s); got != c.want {
			t.Errorf("%q: figure %v, want %v", c.s, got, c.want)
		}
	}
}
