package plots

import (
	"fmt"
	"math"
	"strings"
)

// SweepAxis is one swept parameter of a sweep.
type SweepAxis struct {
	Name   string    // config path, e.g. "lease.duration"
	Unit   string    // unit of Values, e.g. "ms"; "" for plain numbers
	Values []float64 // grid values in sweep order
	Labels []string  // tick labels such as "500ms"; nil means formatted Values
	Log    bool      // swept on a log scale: line charts use a log x axis
}

// SweepMetric is the quantity a sweep chart shows.
type SweepMetric struct {
	Name           string // e.g. "reclaim p99"
	Unit           string // e.g. "ms"; "" for plain numbers
	HigherIsBetter bool   // the title names the best point: lowest unless set
}

// Sweep names one sweep chart: its file and caption and the metric shown.
// Its methods draw the metric against one, two or three axes. Missing grid
// points are NaN.
type Sweep struct {
	File    string // base name, written as File.png and File.svg
	Caption string // e.g. "configs/sweep-lease.yaml, seed 1, 10 replications per point"
	Metric  SweepMetric
	// Notes, for a heat map, marks cells by what happened there rather
	// than by the metric (grid[y][x] as the metric's grid; "" for none): a
	// storm that never ended has no convergence time, and the map of where
	// storms stop ending is the point of such a sweep. Noted cells are
	// drawn in their own colour with the note written in them.
	Notes [][]string
}

// SweepLine is one line of a one-axis sweep chart: the metric at each value
// of the axis, with an optional interval (such as a 95% confidence interval)
// drawn as error bars.
type SweepLine struct {
	Group  string    // legend name (a policy); "" for a lone line
	Values []float64 // metric per axis value; NaN where missing
	Lo, Hi []float64 // interval per axis value, or nil
}

func (a SweepAxis) label() string {
	if a.Unit == "" {
		return a.Name
	}
	return a.Name + " (" + a.Unit + ")"
}

// tickLabels are the axis's labels, formatted values by default.
func (a SweepAxis) tickLabels() []string {
	if len(a.Labels) == len(a.Values) {
		return a.Labels
	}
	out := make([]string, len(a.Values))
	for i, v := range a.Values {
		out[i] = fmtValue(v)
	}
	return out
}

// at names one grid value, e.g. "lease.duration = 500ms".
func (a SweepAxis) at(i int) string {
	l := a.tickLabels()[i]
	if len(a.Labels) != len(a.Values) && a.Unit != "" {
		l += " " + a.Unit
	}
	return a.Name + " = " + l
}

func (a SweepAxis) validate(what string) error {
	if len(a.Values) == 0 {
		return fmt.Errorf("%s axis %q has no values", what, a.Name)
	}
	if a.Labels != nil && len(a.Labels) != len(a.Values) {
		return fmt.Errorf("%s axis %q: %d labels for %d values", what, a.Name, len(a.Labels), len(a.Values))
	}
	for i, v := range a.Values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s axis %q: value %d must be finite (got %v)", what, a.Name, i, v)
		}
	}
	return nil
}

func (m SweepMetric) label() string {
	if m.Unit == "" {
		return m.Name
	}
	return m.Name + " (" + m.Unit + ")"
}

// value writes a metric value with its unit; milliseconds read as durations.
func (m SweepMetric) value(v float64) string {
	switch m.Unit {
	case "ms":
		return fmtDuration(v)
	case "":
		return fmtValue(v)
	}
	return fmtValue(v) + " " + m.Unit
}

// bestTitle names the best and the worst point of a sweep; where(i) says
// where point i lies.
func (m SweepMetric) bestTitle(values []float64, where func(i int) string) string {
	best, worst := -1, -1
	for i, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		better := func(a, b float64) bool { return a < b }
		if m.HigherIsBetter {
			better = func(a, b float64) bool { return a > b }
		}
		if best < 0 || better(v, values[best]) {
			best = i
		}
		if worst < 0 || better(values[worst], v) {
			worst = i
		}
	}
	if best < 0 {
		return "No " + m.Name + " data in this sweep"
	}
	word, other := "Lowest", "highest"
	if m.HigherIsBetter {
		word, other = "Highest", "lowest"
	}
	s := fmt.Sprintf("%s %s %s at %s", word, m.Name, m.value(values[best]), where(best))
	if values[worst] != values[best] {
		s += fmt.Sprintf("; %s %s", other, m.value(values[worst]))
	}
	return s
}

func (s Sweep) check() error {
	if s.File == "" || strings.ContainsAny(s.File, `/\`) {
		return fmt.Errorf("plots: sweep chart file name %q must be a plain base name", s.File)
	}
	return nil
}

// save writes a sweep chart, or its error, into dir.
func save(dir string, c *Chart, err error, opt Options) ([]string, error) {
	if err != nil {
		return nil, err
	}
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	return c.Save(dir, opt)
}

// readable switches a millisecond metric to seconds when its values reach
// 10 s, and returns the factor that converts values to the new unit.
func (m SweepMetric) readable(values ...[]float64) (SweepMetric, float64) {
	if m.Unit != "ms" {
		return m, 1
	}
	for _, vs := range values {
		for _, v := range vs {
			if finite(v) && math.Abs(v) >= 10000 {
				m.Unit = "s"
				return m, 0.001
			}
		}
	}
	return m, 1
}

// scaled returns a copy of v times f (nil stays nil).
func scaled(v []float64, f float64) []float64 {
	if v == nil {
		return nil
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x * f
	}
	return out
}

// finite reports whether v is a drawable metric value.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
