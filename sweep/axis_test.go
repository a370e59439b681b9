package sweep

import (
	"math"
	"strings"
	"testing"

	"stormsim/config"
)

func labels(a Axis) string {
	var out []string
	for _, v := range a.Values {
		out = append(out, v.Label)
	}
	return strings.Join(out, " ")
}

func TestExpandAxis(t *testing.T) {
	rng := func(from, to string, steps int, scale string) config.SweepAxis {
		return config.SweepAxis{Path: "k", Where: "s.yaml:3", Range: &config.SweepRange{From: from, To: to, Steps: steps, Scale: scale}}
	}
	list := func(v ...string) config.SweepAxis { return config.SweepAxis{Path: "k", Values: v} }
	tests := []struct {
		name    string
		in      config.SweepAxis
		want    string // labels
		unit    string
		log     bool
		wantErr string
	}{
		// Hand-computed: linear steps of (to-from)/(steps-1).
		{"linear integers", rng("10", "50", 5, "linear"), "10 20 30 40 50", "", false, ""},
		{"linear integers round", rng("0", "10", 4, "linear"), "0 3 7 10", "", false, ""}, // 3.33, 6.67
		{"linear fractions keep 6 digits", rng("0.0", "1", 4, "linear"), "0 0.333333 0.666667 1", "", false, ""},
		{"linear durations", rng("50ms", "800ms", 6, "linear"), "50ms 200ms 350ms 500ms 650ms 800ms", "ms", false, ""},
		// Log: ratio (to/from)^(1/(steps-1)): 10 -> 1000 in 3 steps is x10.
		{"log integers", rng("10", "1000", 3, "log"), "10 100 1000", "", true, ""},
		{"log rounds to integers", rng("10", "200", 8, "log"), "10 15 24 36 55 85 130 200", "", true, ""},
		// 50ms * 16^(i/5): 87.055056ms, 151.571657ms, 263.901582ms, 459.479342ms, rounded to the microsecond.
		{"log durations", rng("50ms", "800ms", 6, "log"), "50ms 87.055ms 151.572ms 263.902ms 459.479ms 800ms", "ms", true, ""},
		{"descending", rng("3s", "1s", 3, "linear"), "3s 2s 1s", "ms", false, ""},
		{"zero needs no unit", rng("0", "1s", 3, "linear"), "0s 500ms 1s", "ms", false, ""},
		{"duplicate integers", rng("1", "3", 5, "linear"), "", "", false, "repeat the value 2"},
		{"mixed kinds", rng("1", "2s", 3, "linear"), "", "", false, "must both be durations or both numbers (got 1 and 2s)"},
		{"equal ends", rng("5", "5", 3, "linear"), "", "", false, "from and to are equal"},
		{"log through zero", rng("0", "10", 3, "log"), "", "", false, "a log range needs from and to > 0"},
		{"bad end", rng("x", "10", 3, "linear"), "", "", false, `from must be a number or a duration such as 50ms (got "x")`},
		{"too many steps", rng("1", "2", maxRangeSteps+1, "linear"), "", "", false, "steps must be <="},
		{"list of durations", list("500ms", "1s", "0"), "500ms 1s 0", "ms", false, ""},
		{"list of numbers", list("1", "2.5"), "1 2.5", "", false, ""},
		{"list of words", list("full", "equal"), "full equal", "", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := ExpandAxis(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				if !strings.HasPrefix(err.Error(), "s.yaml:3: axes.k: ") {
					t.Errorf("error %q is not located at the axis", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := labels(a); got != tt.want || a.Unit != tt.unit || a.Log != tt.log {
				t.Errorf("got %q unit %q log %v, want %q unit %q log %v", got, a.Unit, a.Log, tt.want, tt.unit, tt.log)
			}
			for _, v := range a.Values {
				if v.YAML != v.Label {
					t.Errorf("value %q set as %q", v.Label, v.YAML)
				}
			}
		})
	}
}

func TestAxisChartPositions(t *testing.T) {
	a, err := ExpandAxis(config.SweepAxis{Path: "k", Values: []string{"500ms", "1.5s"}})
	if err != nil {
		t.Fatal(err)
	}
	if a.Values[0].X != 500 || a.Values[1].X != 1500 || !a.Numeric() {
		t.Errorf("durations at %v %v, want 500 1500 (ms)", a.Values[0].X, a.Values[1].X)
	}
	w, _ := ExpandAxis(config.SweepAxis{Path: "k", Values: []string{"full", "3"}})
	if !math.IsNaN(w.Values[0].X) || w.Values[1].X != 3 || w.Numeric() {
		t.Errorf("words: %+v", w.Values)
	}
}
