package solve

import (
	"math"
	"slices"
	"testing"

	"stormsim/check"
	"stormsim/config"
)

// fake is a requirement on a made-up metric of the key, for testing the
// search without storms.
type fake struct {
	metric func(x float64) float64 // NaN: no data
	check  string
}

// drive runs a search on fakes as the runner does, step by step, and
// returns its solution and the values it asked for, in order.
func drive(t *testing.T, d Domain, reqs []fake) (*Solution, []float64) {
	t.Helper()
	var checks []check.Check
	var all []int
	for i, f := range reqs {
		c, err := check.Parse("attempts " + f.check)
		if err != nil {
			t.Fatal(err)
		}
		checks = append(checks, c)
		all = append(all, i)
	}
	s := newSearch(&d, all, d.Goal)
	var asked []float64
	for range 1000 {
		need := s.step()
		if len(need) == 0 {
			return s.result, asked
		}
		for _, x := range need {
			if s.at(x) != nil {
				t.Fatalf("asked for %v twice", x)
			}
			if x < d.Min || x > d.Max {
				t.Fatalf("asked for %v outside [%v, %v]", x, d.Min, d.Max)
			}
			e := &eval{x: x, combo: make([]int, len(reqs))}
			for i, f := range reqs {
				e.obs = append(e.obs, fakeObservation(checks[i], f.metric(x)))
			}
			s.add(e)
		}
		asked = append(asked, need...)
	}
	t.Fatal("the search did not end")
	return nil, nil
}

func fakeObservation(c check.Check, v float64) Observation {
	if math.IsNaN(v) {
		return Observation{Observed: v, Margin: math.Inf(-1), Relative: math.Inf(-1)}
	}
	m, _ := c.Margin(v)
	return Observation{Observed: v, HasData: true, Margin: m, Relative: m / math.Abs(c.Bound), Pass: c.Holds(v)}
}

func domain(kind config.KeyKind, lo, hi, res float64, relative bool, goal Goal) Domain {
	return Domain{Key: "k", Kind: kind, Min: lo, Max: hi, Goal: goal, Resolution: res, Relative: relative, Scan: DefaultScan}
}

// TestProbeCountOnAMonotoneAxis is the bound on a monotone axis:
// ceil(log2((max - min) / resolution)) bisections (for a percentage p,
// ceil(log2(ln(max/min) / ln(1+p)))), plus the bracket's two probes,
// plus at most 2; and the answer lies within the resolution above the
// threshold.
func TestProbeCountOnAMonotoneAxis(t *testing.T) {
	for _, tt := range []struct {
		name     string
		d        Domain
		thresh   []float64
		relative bool
	}{
		{"integer, resolution 1", domain(config.KindInteger, 1, 1000, 1, false, Least), []float64{1.5, 2, 43.48, 500, 999.9}, false},
		{"number, resolution 5", domain(config.KindNumber, 50, 5000, 5, false, Least), []float64{51, 417, 571.3, 4999}, false},
		{"number, resolution 1%", domain(config.KindNumber, 50, 5000, 0.01, true, Least), []float64{50.2, 178.4, 566.6, 4990}, true},
		{"duration, resolution 10ms", domain(config.KindDuration, 0, 60e9, 10e6, false, Least), []float64{1, 3.3e9, 59.99e9}, false},
		{"integer, 2%", domain(config.KindInteger, 100, 1e6, 0.02, true, Least), []float64{101, 33333, 999999}, true},
	} {
		for _, th := range tt.thresh {
			sol, asked := drive(t, tt.d, []fake{{func(x float64) float64 { return x }, ">= " + formatNumber(th)}})
			fixCheck(t, sol)
			var bisections float64
			if tt.relative {
				bisections = math.Ceil(math.Log2(math.Log(tt.d.Max/tt.d.Min) / math.Log1p(tt.d.Resolution)))
			} else {
				bisections = math.Ceil(math.Log2((tt.d.Max - tt.d.Min) / tt.d.Resolution))
			}
			if bound := int(bisections) + 2 + 2; len(asked) > bound {
				t.Errorf("%s, threshold %v: %d probes %v, bound %d", tt.name, th, len(asked), asked, bound)
			}
			if !sol.Feasible || !sol.Monotone {
				t.Fatalf("%s, threshold %v: %+v", tt.name, th, sol)
			}
			a := sol.Answer.X
			width := tt.d.Resolution
			if tt.relative {
				width *= th
			}
			if a < th || a-th > width*(1+1e-9) || sol.Answer.Fail == nil || *sol.Answer.Fail >= th {
				t.Errorf("%s, threshold %v: answer %v, failing neighbour %v, resolution %v", tt.name, th, a, sol.Answer.Fail, width)
			}
			if tt.d.Kind == config.KindInteger && !tt.relative && tt.d.Resolution == 1 && a != math.Ceil(th) {
				t.Errorf("%s: integer answer %v for threshold %v, want %v", tt.name, a, th, math.Ceil(th))
			}
		}
	}
}

// fixCheck guards against a test that passes on a nil solution.
func fixCheck(t *testing.T, sol *Solution) {
	t.Helper()
	if sol == nil {
		t.Fatal("no solution")
	}
}

// TestTwoSidedInterval pins a feasible interval [417, 1200] of a key on
// [50, 5000]: one requirement holds from 417 up, the other up to 1200;
// both ends are found within the resolution and each names its
// requirement.
func TestTwoSidedInterval(t *testing.T) {
	for _, goal := range []Goal{Least, Most} {
		d := domain(config.KindNumber, 50, 5000, 1, false, goal)
		sol, asked := drive(t, d, []fake{
			{func(x float64) float64 { return 25000 / x }, "<= 59.952"}, // 25000/417
			{func(x float64) float64 { return 25 * x }, "<= 30000"},     // 25 x 1200
		})
		if !sol.Feasible || !sol.Monotone {
			t.Fatalf("%s: %+v", goal, sol)
		}
		lo, hi := sol.Low, sol.High
		if lo.X < 417 || lo.X > 418 || *lo.Fail > 417 || !slices.Equal(lo.Binding, []int{0}) {
			t.Errorf("%s: low end %v (failing %v, binding %v), want within 1 above 417, requirement 0", goal, lo.X, *lo.Fail, lo.Binding)
		}
		if hi.X > 1200 || hi.X < 1199 || *hi.Fail <= 1200 || !slices.Equal(hi.Binding, []int{1}) {
			t.Errorf("%s: high end %v (failing %v, binding %v), want within 1 below 1200, requirement 1", goal, hi.X, *hi.Fail, hi.Binding)
		}
		want := lo
		if goal == Most {
			want = hi
		}
		if sol.Answer.X != want.X {
			t.Errorf("%s: answer %v, want %v", goal, sol.Answer.X, want.X)
		}
		if bound := 2 + 2*13 + 2; len(asked) > bound {
			t.Errorf("%s: %d probes, want at most %d", goal, len(asked), bound)
		}
	}
}

// TestInfeasibleFindsTheClosestValue pins the infeasible case: one
// requirement holds from 600 up, the other only up to 200; the closest
// value is where both miss by the same fraction, x with x/600 = 200/x,
// about 346.4.
func TestInfeasibleFindsTheClosestValue(t *testing.T) {
	d := domain(config.KindNumber, 50, 5000, 0.01, true, Least)
	sol, _ := drive(t, d, []fake{
		{func(x float64) float64 { return x / 600 }, ">= 1"}, // relative margin x/600 - 1
		{func(x float64) float64 { return x / 200 }, "<= 1"}, // relative margin 1 - x/200
	})
	if sol.Feasible || sol.Closest == nil {
		t.Fatalf("%+v", sol)
	}
	// Equal misses: x/600 - 1 = 1 - x/200 gives x = 300.
	if x := sol.Closest.X; math.Abs(x-300) > 300*0.01 {
		t.Errorf("closest %v, want within 1%% of 300", x)
	}
	if !slices.Equal(sol.AtMin, []int{0}) || !slices.Equal(sol.AtMax, []int{1}) {
		t.Errorf("fails at min %v, at max %v", sol.AtMin, sol.AtMax)
	}
	if sol.Low.X < 600 || sol.Low.X > 606 || sol.High.X > 200 || sol.High.X < 198 {
		t.Errorf("each side's end: %v and %v, want 600 and 200 within 1%%", sol.Low.X, sol.High.X)
	}
}

// TestNonMonotoneIsDetected constructs a requirement whose verdict is
// not monotone: it passes at both ends and on [55, 100], fails on
// (30, 55). Alone it would never be probed inside (its ends pass); beside
// a requirement that holds from 40 up, the bisection of that one probes
// 52.5 = (5 + 100) / 2, where it fails between two passes. The search
// reports the pair, scans a grid of 16 and reports the feasible stretch,
// [55, 100] where both hold, with the answer refined to 55.
func TestNonMonotoneIsDetected(t *testing.T) {
	wiggle := func(x float64) float64 {
		if x > 30 && x < 55 {
			return 1
		}
		return 0
	}
	for _, goal := range []Goal{Least, Most} {
		d := domain(config.KindNumber, 5, 100, 0.5, false, goal)
		sol, asked := drive(t, d, []fake{{func(x float64) float64 { return x }, ">= 40"}, {wiggle, "<= 0.5"}})
		if sol.Monotone || len(sol.Violations) == 0 {
			t.Fatalf("%s: not reported: %+v", goal, sol)
		}
		if v := sol.Violations[0]; v.Requirement != 1 || v.Fail <= 30 || v.Fail >= 55 || v.Pass > 30 && v.Pass < 55 {
			t.Errorf("%s: violation %+v, want requirement 1 failing inside (30, 55) beside a pass outside", goal, v)
		}
		if len(sol.Stretches) != 1 || sol.Stretches[0].Low < 55 || sol.Stretches[0].Low > 60 || sol.Stretches[0].High != 100 {
			t.Errorf("%s: stretches %+v, want one, from the grid's first value at 55 or above to 100", goal, sol.Stretches)
		}
		want := 100.0
		if goal == Least {
			want = 55
		}
		if !sol.Feasible || sol.Answer.X < want || sol.Answer.X > want+0.5 {
			t.Errorf("%s: answer %v, want %v within 0.5 (%d probes: %v)", goal, sol.Answer.X, want, len(asked), asked)
		}
		if len(asked) > 2+2*8+DefaultScan+1+8 {
			t.Errorf("%s: %d probes", goal, len(asked))
		}
	}
}

// TestStartGrowsTheBracketByDoubling pins the bracket grown from start:
// 10, 20, 40, ..., 320 for a threshold of 300, then a bisection of
// (160, 320].
func TestStartGrowsTheBracketByDoubling(t *testing.T) {
	d := domain(config.KindInteger, 1, 100000, 1, false, Least)
	d.Start, d.HasStart = 10, true
	sol, asked := drive(t, d, []fake{{func(x float64) float64 { return x }, ">= 300"}})
	if !slices.Equal(asked[:6], []float64{10, 20, 40, 80, 160, 320}) {
		t.Errorf("bracket %v", asked)
	}
	if sol.Answer.X != 300 || *sol.Answer.Fail != 299 {
		t.Errorf("answer %v (%v)", sol.Answer.X, *sol.Answer.Fail)
	}
	if n := len(asked) - 6; n > int(math.Ceil(math.Log2(160))) {
		t.Errorf("%d bisections of 160", n)
	}
	// A passing start halves down to a fail.
	sol, asked = drive(t, d, []fake{{func(x float64) float64 { return x }, ">= 3"}})
	if !slices.Equal(asked[:4], []float64{10, 5, 3, 2}) && !slices.Equal(asked[:4], []float64{10, 5, 2, 3}) || sol.Answer.X != 3 {
		t.Errorf("down: %v, answer %v", asked, sol.Answer.X)
	}
}

func TestUnescapeHTML(t *testing.T) {
	for in, want := range map[string]string{
		`"a \u003c= 60s"`: `"a <= 60s"`,
		`"\u003e\u0026"`:  `">&"`,
		`"\\u003c"`:       `"\\u003c"`, // the text \u003c, not an escape
		`"\\\u003c"`:      `"\\<"`,
		`"\n\u00e9"`:      `"\n\u00e9"`,
	} {
		if got := string(unescapeHTML([]byte(in))); got != want {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
}
