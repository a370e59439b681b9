package plots

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// SweepAxis is one swept parameter of a sweep.
//
// A duration axis (Unit "ms") is labelled in one unit, seconds when it
// reaches 1 s, milliseconds below: its name carries the unit and every
// tick is a plain number in it, whatever units the sweep file wrote.
type SweepAxis struct {
	Name   string    // config path, e.g. "lease.duration"
	Unit   string    // unit of Values, e.g. "ms"; "" for plain numbers
	Values []float64 // grid values in sweep order
	Labels []string  // tick labels as written ("1000", "full"); nil means formatted Values; not used for durations
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
	// Notes, for a heat map, marks cells by what happened there (grid[y][x]
	// as the metric's grid; "" for none): a storm that never ended, where
	// the map of where storms stop ending is the point of such a sweep. A
	// noted cell without a value (a storm that never ended has no
	// convergence time) is filled in the note colour with the note
	// written in it; one with a value (the claims it wasted) keeps its
	// value's colour and label, outlined in the note colour, the note
	// under the value.
	Notes [][]string
	// Limits are the requirements the points are held to (the base
	// scenario's checks): cells where one fails are hatched, and cell
	// labels keep the digits that tell a value from a limit's bound.
	Limits []Limit
}

// Limit is one requirement a sweep's points are held to, evaluated at
// every point by the caller.
type Limit struct {
	Text string // as written, for the caption: "database.peak_rows_per_s <= 2500"
	// Bound is the requirement's number in the metric's unit when it
	// bounds the metric charted; NaN when it bounds another statistic.
	Bound float64
	// Fails marks the cells where the requirement does not hold, in the
	// chart's grid: [y][x] for a heat map, [panel*len(y)+y][x] for small
	// multiples, [line][x] for a line chart.
	Fails [][]bool
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
	if unit, _ := a.display(); unit != "" {
		return a.Name + " (" + unit + ")"
	}
	return a.Name
}

// tickLabels are the axis's labels, in the unit its name gives.
func (a SweepAxis) tickLabels() []string {
	_, ticks := a.display()
	return ticks
}

// display is the unit the axis is labelled in and its values in it: a
// duration in seconds when the axis reaches 1 s, the labels as written
// for other axes that have them, else the formatted values in Unit.
func (a SweepAxis) display() (unit string, ticks []string) {
	format := func(f float64) []string {
		out := make([]string, len(a.Values))
		for i, v := range a.Values {
			out[i] = fmtValue(v * f)
		}
		return out
	}
	switch {
	case a.Unit == "ms" && maxOf(a.Values) >= 1000:
		return "s", format(0.001)
	case a.Unit == "ms":
		return "ms", format(1)
	case len(a.Labels) == len(a.Values):
		return a.Unit, a.Labels
	}
	return a.Unit, format(1)
}

// at names one grid value, e.g. "lease.duration = 0.5 s".
func (a SweepAxis) at(i int) string {
	return a.Name + " = " + a.valueAt(i)
}

// shortAt names one grid value by the last part of the axis's path,
// "duration = 0.5 s": where three axes share a title.
func (a SweepAxis) shortAt(i int) string {
	return a.Name[strings.LastIndex(a.Name, ".")+1:] + " = " + a.valueAt(i)
}

// valueAt is grid value i with its unit: "0.5 s".
func (a SweepAxis) valueAt(i int) string {
	unit, ticks := a.display()
	if unit != "" {
		return ticks[i] + " " + unit
	}
	return ticks[i]
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

// label names the metric with the unit its values are drawn in. A name
// that carries a unit of its own (convergence_ms) keeps it, so the unit
// drawn, when another, is said apart: "convergence_ms, in s".
func (m SweepMetric) label() string {
	named := namedUnit(m.Name)
	switch {
	case m.Unit == "" || m.Unit == named:
		return m.Name
	case named != "":
		return m.Name + ", in " + m.Unit
	}
	return m.Name + " (" + m.Unit + ")"
}

// namedUnit is the time unit a metric's name ends in (ms for
// convergence_ms or mean(convergence_ms), s for stale_route_seconds), "".
func namedUnit(name string) string {
	name = strings.TrimSuffix(name, ")")
	switch {
	case strings.HasSuffix(name, "_ms"):
		return "ms"
	case strings.HasSuffix(name, "_seconds"):
		return "s"
	}
	return ""
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

// better reports whether a is a better value of the metric than b.
func (m SweepMetric) better(a, b float64) bool {
	if m.HigherIsBetter {
		return a > b
	}
	return a < b
}

// bestTitle names the best point of a sweep and how it compares with the
// worst; where(i) says where point i lies.
func (m SweepMetric) bestTitle(values []float64, where func(i int) string) string {
	best, worst := m.extremes(values, nil)
	if best < 0 {
		return "No " + m.Name + " data in this sweep"
	}
	word, other, dir := "Lowest", "highest", "lower"
	if m.HigherIsBetter {
		word, other, dir = "Highest", "lowest", "higher"
	}
	s := fmt.Sprintf("%s %s, %s, at %s", word, m.Name, m.value(values[best]), where(best))
	b, w := values[best], values[worst]
	switch {
	case b == w:
	case b > 0 && w > 0:
		r := math.Max(b/w, w/b)
		s += fmt.Sprintf(": %s %s than the %s (%s at %s)", fmtRatio(r), dir, other, m.value(w), where(worst))
	default:
		s += fmt.Sprintf("; the %s, %s, at %s", other, m.value(w), where(worst))
	}
	return s
}

// extremes are the indexes of the best and the worst finite value among
// those keep allows (nil: all); -1 when there is none.
func (m SweepMetric) extremes(values []float64, keep func(i int) bool) (best, worst int) {
	best, worst = -1, -1
	for i, v := range values {
		if !finite(v) || (keep != nil && !keep(i)) {
			continue
		}
		if best < 0 || m.better(v, values[best]) {
			best = i
		}
		if worst < 0 || m.better(values[worst], v) {
			worst = i
		}
	}
	return best, worst
}

// limitTitle says how many points meet every limit and, of those, the
// best; "" without limits. failing[i] is whether point i fails one.
func (m SweepMetric) limitTitle(limits []Limit, values []float64, failing []bool, where func(i int) string) string {
	if len(limits) == 0 {
		return ""
	}
	var texts []string
	for _, l := range limits {
		texts = append(texts, l.Text)
	}
	req := strings.Join(texts, " and ")
	meet := 0
	for _, f := range failing {
		if !f {
			meet++
		}
	}
	switch {
	case meet == 0:
		return fmt.Sprintf("No point of %s meets %s", fmtCount(float64(len(failing))), req)
	case meet == len(failing):
		return fmt.Sprintf("Every point meets %s; %s", req, lowerFirst(m.bestTitle(values, where)))
	}
	s := fmt.Sprintf("%s of %s points meet %s", fmtCount(float64(meet)), fmtCount(float64(len(failing))), req)
	if best, _ := m.extremes(values, func(i int) bool { return !failing[i] }); best >= 0 {
		word := "lowest"
		if m.HigherIsBetter {
			word = "highest"
		}
		s += fmt.Sprintf("; the %s %s among them, %s, at %s", word, m.Name, m.value(values[best]), where(best))
	}
	return s
}

// failingCells flattens the limits' Fails, row by row: true where any
// limit fails.
func failingCells(limits []Limit, rows, cols int) []bool {
	out := make([]bool, rows*cols)
	for _, l := range limits {
		for r := range min(rows, len(l.Fails)) {
			for c := range min(cols, len(l.Fails[r])) {
				out[r*cols+c] = out[r*cols+c] || l.Fails[r][c]
			}
		}
	}
	return out
}

// validateLimits refuses limits whose Fails do not have the chart's shape.
func validateLimits(limits []Limit, rows, cols int) error {
	for _, l := range limits {
		if len(l.Fails) != rows {
			return fmt.Errorf("limit %q: %d rows of cells for %d", l.Text, len(l.Fails), rows)
		}
		for r, row := range l.Fails {
			if len(row) != cols {
				return fmt.Errorf("limit %q: row %d has %d cells for %d", l.Text, r, len(row), cols)
			}
		}
	}
	return nil
}

// scaledLimits converts the limits' bounds as the metric's values were.
func scaledLimits(limits []Limit, f float64) []Limit {
	out := slices.Clone(limits)
	for i := range out {
		out[i].Bound *= f
	}
	return out
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// limitCaption says what hatched cells mean.
func limitCaption(limits []Limit) string {
	if len(limits) == 0 {
		return ""
	}
	var texts []string
	for _, l := range limits {
		texts = append(texts, l.Text)
	}
	return "Hatched: fails " + strings.Join(texts, " or ")
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
