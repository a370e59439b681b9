package plots

import (
	"math"
	"slices"
	"testing"

	"gonum.org/v1/plot"
)

func TestFormats(t *testing.T) {
	cases := []struct {
		name, got, want string
	}{
		{"count thousands", fmtCount(100500), "100,500"},
		{"count millions", fmtCount(1234567), "1,234,567"},
		{"count small", fmtCount(999), "999"},
		{"count negative", fmtCount(-4321), "-4,321"},
		{"count fraction", fmtCount(3.14159), "3.14"},
		{"duration ms", fmtDuration(850), "850 ms"},
		{"duration rounds ms", fmtDuration(12.345), "12.3 ms"},
		{"duration s", fmtDuration(4580), "4.58 s"},
		{"duration long", fmtDuration(623900), "624 s"},
		{"duration very long", fmtDuration(12345678), "12,300 s"},
		{"ratio big", fmtRatio(136.2), "136×"},
		{"ratio small", fmtRatio(2.14), "2.1×"},
		{"ratio rounds up to 10", fmtRatio(9.97), "10×"},
		{"value", fmtValue(1234.5), "1,230"},
		{"value small", fmtValue(0.012345), "0.0123"},
		{"cell k", fmtCell(52800, 3), "52.8k"},
		{"cell M", fmtCell(2.5e6, 3), "2.5M"},
		{"cell NaN", fmtCell(math.NaN(), 3), ""},
		{"cell at a limit's digits", fmtCell(25040, 4), "25.04k"},
		{"cell thousands", fmtCell(2504, 4), "2,504"},
		{"cell thousands with a decimal", fmtCell(2500.4, 5), "2500.4"},
		{"percent", fmtPercent(0.804), "80%"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, c.got, c.want)
		}
	}
}

func labels(ticks []plot.Tick) []string {
	var out []string
	for _, tk := range ticks {
		if tk.Label != "" {
			out = append(out, tk.Label)
		}
	}
	return out
}

func TestLinearTicks(t *testing.T) {
	cases := []struct {
		name   string
		lo, hi float64
		want   []string
	}{
		// range/6 rounded up to a nice step: 13/6 = 2.17 -> 2.5.
		{"seconds", 0, 13, []string{"0", "2.5", "5.0", "7.5", "10.0", "12.5"}},
		// 1.02/6 = 0.17 -> 0.2.
		{"fraction", 0, 1.02, []string{"0", "0.2", "0.4", "0.6", "0.8", "1.0"}},
		// 110000/6 = 18333 -> 20000, in k on an axis past 10,000.
		{"thousands", 0, 110000, []string{"0", "20k", "40k", "60k", "80k", "100k"}},
		{"negative", -30, 30, []string{"-30", "-20", "-10", "0", "10", "20", "30"}},
		{"empty range", 5, 5, nil},
	}
	for _, c := range cases {
		if got := labels(linearTicks{}.Ticks(c.lo, c.hi)); !slices.Equal(got, c.want) {
			t.Errorf("%s: labels %v, want %v", c.name, got, c.want)
		}
	}
	// A count axis up to 1.12 steps by whole numbers, not by 0.2.
	if got, want := labels(linearTicks{whole: true}.Ticks(0, 1.12)), []string{"0", "1"}; !slices.Equal(got, want) {
		t.Errorf("whole ticks on 0..1.12: %v, want %v", got, want)
	}
}

func TestLogTicks(t *testing.T) {
	l := math.Log10
	cases := []struct {
		name   string
		ticks  logTicks
		lo, hi float64 // data units
		want   []string
	}{
		{"many decades", logTicks{}, 0.005, 700, []string{"0.01", "0.1", "1", "10", "100"}},
		{"zero floor", logTicks{floor: 0.5, zero: true}, 0.5, 2000, []string{"0", "1", "10", "100", "1000"}},
		{"few decades get 2 and 5", logTicks{}, 2.6, 1000, []string{"5", "10", "20", "50", "100", "200", "500", "1000"}},
		{"within a decade gets every digit", logTicks{}, 2, 8, []string{"2", "3", "4", "5", "6", "7", "8"}},
		{"huge range labels every other decade", logTicks{}, 1, 1e9, []string{"1", "100", "10k", "1M", "100M"}},
	}
	for _, c := range cases {
		if got := labels(c.ticks.Ticks(l(c.lo), l(c.hi))); !slices.Equal(got, c.want) {
			t.Errorf("%s: labels %v, want %v", c.name, got, c.want)
		}
	}
}

func TestAxisChoices(t *testing.T) {
	if ca := newCountAxis([][]float64{{0, 10, 400}}); ca.log {
		t.Errorf("10..400 (40×) got a log axis; the threshold is %d×", LogCountRatio)
	}
	if ca := newCountAxis([][]float64{{0, 10, 600}}); !ca.log || ca.floor != ZeroFloor || ca.max != 1000 {
		t.Errorf("10..600 (60×) = %+v, want log, floor %v, max 1000 (600*1.15 rounded up)", ca, ZeroFloor)
	}
	if ca := newCountAxis([][]float64{{0, 0.02, 30}}); !ca.log || ca.floor != 0.005 {
		t.Errorf("values down to 0.02: floor %v, want half of 0.01", ca.floor)
	}
	if ca := newCountAxis([][]float64{{0, 0}}); ca.log || ca.max != 1 {
		t.Errorf("all zero = %+v, want linear 0..1", ca)
	}
	if ca := newCountAxis([][]float64{{1, 2}}, 500); !ca.log {
		t.Error("a capacity of 500 over counts of 1..2 must keep both visible on a log axis")
	}
	short := PolicySeries{WindowMs: 10, AttemptsPerWindow: make([]float64, 10)}
	long := PolicySeries{WindowMs: 10, AttemptsPerWindow: make([]float64, 201)}
	attempts := func(p *PolicySeries) []float64 { return p.AttemptsPerWindow }
	if ta := newTimeAxis(oneRun(0, 0, short, long), attempts); !ta.log || ta.floor != 0.005 || ta.max != 2.01 {
		t.Errorf("100 ms against 2.01 s = %+v, want log from half a window (0.005 s) to 2.01 s", ta)
	}
	long.AttemptsPerWindow = long.AttemptsPerWindow[:200]
	if ta := newTimeAxis(oneRun(0, 0, short, long), attempts); ta.log {
		t.Errorf("exactly %d× longer got a log time axis", LogTimeRatio)
	}
}
