package plots

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Solve describes the requirements chart of a solve: every requirement's
// metric at every probe of the varied key, one panel each, the
// requirement's limit drawn and each probe marked passing (filled) or
// failing (hollow). Probes of different across values (groups) have
// their own colours.
type Solve struct {
	File    string // base name, written as File.png and File.svg
	Caption string
	Key     SolveKey
	Groups  []string // the across values, e.g. "clients=25000"; one "" without across
	Panels  []SolvePanel
	// Answers are each group's answer (NaN: no value meets every
	// requirement), drawn as a vertical line on every panel.
	Answers []float64
}

// SolveKey is the varied key: its name, the unit of its positions, its
// range and the goal ("least" or "most").
type SolveKey struct {
	Name     string
	Unit     string
	Min, Max float64
	Log      bool
	Goal     string
}

// SolvePanel is one requirement: its metric, its comparison and limit
// (in the metric's unit) and its value at every probe.
type SolvePanel struct {
	Metric SweepMetric
	Axis   string // the value axis's name when the metric has no unit: "rows/s"
	Op     string
	Limit  float64
	Points []SolvePoint
}

// SolvePoint is one probe of a panel: the key's position, the metric
// (NaN: no data, drawn along the top as a triangle), the verdict.
type SolvePoint struct {
	Group int
	X, Y  float64
	Pass  bool
}

func (k SolveKey) label() string { return SweepMetric{Name: k.Name, Unit: k.Unit}.label() }

// value writes a value of the key exactly, as titles name answers:
// 2034 is "2,034", not "2,030".
func (k SolveKey) value(x float64) string {
	if k.Unit == "ms" {
		return fmtDuration(x)
	}
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return fmtCount(x)
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}

// failColor marks a failing probe's outline and the limit it broke.
var failColor = rgb(0xB2, 0x18, 0x2B)

// WriteRequirements draws the chart Requirements draws into
// dir/File.{png,svg}.
func (s Solve) WriteRequirements(dir string, opt Options) ([]string, error) {
	c, err := s.Requirements(opt)
	return save(dir, c, err, opt)
}

// Requirements draws the requirements chart, one panel per requirement.
func (s Solve) Requirements(opt Options) (*Chart, error) {
	if err := (Sweep{File: s.File}).check(); err != nil {
		return nil, err
	}
	if len(s.Panels) == 0 || len(s.Groups) == 0 || len(s.Answers) != len(s.Groups) {
		return nil, fmt.Errorf("plots: %s: %d panels, %d groups, %d answers: want panels and an answer per group", s.File, len(s.Panels), len(s.Groups), len(s.Answers))
	}
	opt = opt.withDefaults()
	xa := scale{min: s.Key.Min, max: s.Key.Max}
	if s.Key.Log && s.Key.Min > 0 {
		xa = scale{log: true, floor: s.Key.Min, min: s.Key.Min, max: s.Key.Max}
	}
	panels := make([][]*plot.Plot, len(s.Panels))
	for i, sp := range s.Panels {
		panels[i] = []*plot.Plot{s.panel(sp, xa, i == len(s.Panels)-1)}
	}
	f := &figure{title: s.title(), caption: s.Caption}
	f.legend = s.legend()
	f.body = func(c draw.Canvas) {
		tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadY: vg.Points(12)}
		canvases := plot.Align(panels, tiles, c)
		for i := range panels {
			panels[i][0].Draw(canvases[i][0])
		}
	}
	return newChart(s.File, f), nil
}

// panel is one requirement's plot; only the last names the key.
func (s Solve) panel(sp SolvePanel, xa scale, last bool) *plot.Plot {
	var ys []float64
	for _, pt := range sp.Points {
		ys = append(ys, pt.Y)
	}
	metric, factor := sp.Metric.readable(ys, []float64{sp.Limit})
	ys = scaled(ys, factor)
	limit := sp.Limit * factor
	ya := solveValueAxis(ys, limit)
	xLabel := ""
	if last {
		xLabel = s.Key.label()
		if s.Key.Log {
			xLabel += ", log scale"
		}
	}
	yLabel := metric.Unit
	if yLabel == "" {
		yLabel = sp.Axis
	}
	if ya.log {
		yLabel += ", log scale"
	}
	p := newPlot(xLabel, strings.TrimPrefix(yLabel, ", "))
	addGrid(p)
	panelTitle(p, fmt.Sprintf("%s %s %s", sp.Metric.Name, sp.Op, metric.value(limit)))
	if len(s.Groups) == 1 {
		if lo, hi, ok := passRange(sp); ok {
			p.Add(holdsShade(xa, ya, lo, hi))
		}
	}
	p.Add(hline(xa, ya, limit, lineStyle(failColor, vg.Points(1.2), referenceDash(0))))
	for g, x := range s.Answers {
		if finite(x) {
			p.Add(vline(xa, ya, x, ya.min, ya.max, lineStyle(seriesColor(g), vg.Points(1), []vg.Length{vg.Points(1.5), vg.Points(2)})))
		}
	}
	top := ya.max
	for i, pt := range sp.Points {
		c := seriesColor(pt.Group)
		y, shape := ys[i], draw.GlyphDrawer(draw.CircleGlyph{})
		if !finite(y) {
			y, shape = top, draw.TriangleGlyph{}
		}
		if !pt.Pass {
			shape = draw.RingGlyph{}
			if !finite(ys[i]) {
				shape = draw.TriangleGlyph{}
				c = failColor
			}
		}
		sc, _ := plotter.NewScatter(plotter.XYs{xa.xy(ya, pt.X, y)})
		sc.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(3.2), Shape: shape}
		p.Add(sc)
	}
	xa.apply(&p.X)
	ya.apply(&p.Y)
	pad := (xa.to(xa.max) - xa.to(xa.min)) * 0.03
	p.X.Min, p.X.Max = xa.to(xa.min)-pad, xa.to(xa.max)+pad
	return p
}

// holdsColor shades where a requirement holds.
var holdsColor = color.NRGBA{R: 0x00, G: 0x9E, B: 0x73, A: 0x22}

// holdsShade shades the key's values from lo to hi across a panel.
func holdsShade(xa, ya scale, lo, hi float64) *plotter.Polygon {
	x0, x1, y0, y1 := xa.to(lo), xa.to(hi), ya.to(ya.min), ya.to(ya.max)
	return &plotter.Polygon{XYs: []plotter.XYs{{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}}, Color: holdsColor}
}

// passRange is the lowest and highest probe where a requirement holds.
func passRange(sp SolvePanel) (lo, hi float64, ok bool) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, pt := range sp.Points {
		if pt.Pass {
			lo, hi, ok = math.Min(lo, pt.X), math.Max(hi, pt.X), true
		}
	}
	return lo, hi, ok
}

// solveValueAxis covers a panel's values and its limit: logarithmic when
// the positive ones span more than 10 times, so that the limit does not
// sink to the bottom under the largest values; linear from 0 otherwise,
// or padded around negative values.
func solveValueAxis(ys []float64, limit float64) scale {
	for _, y := range append([]float64{limit}, ys...) {
		if finite(y) && y < 0 {
			return valueAxis([][]float64{ys, {limit}})
		}
	}
	hi, lo := positiveRange([][]float64{ys}, []float64{limit})
	switch {
	case hi == 0:
		return scale{min: 0, max: 1}
	case hi > 10*lo:
		return scale{log: true, floor: lo / 1.4, min: lo / 1.4, max: hi * 1.4}
	}
	return scale{min: 0, max: hi * 1.1}
}

// legend explains the marks, and names the groups when there are several.
func (s Solve) legend() []legendItem {
	glyph := func(c color.Color, shape draw.GlyphDrawer) plot.Thumbnailer {
		sc, _ := plotter.NewScatter(plotter.XYs{{}})
		sc.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(3.2), Shape: shape}
		return sc
	}
	items := []legendItem{
		{"passes", glyph(inkColor, draw.CircleGlyph{})},
		{"fails", glyph(inkColor, draw.RingGlyph{})},
	}
	noData := false
	for _, sp := range s.Panels {
		for _, pt := range sp.Points {
			noData = noData || !finite(pt.Y)
		}
	}
	if noData {
		items = append(items, legendItem{"no data (fails)", glyph(failColor, draw.TriangleGlyph{})})
	}
	items = append(items, legendItem{"limit", &plotter.Line{LineStyle: lineStyle(failColor, vg.Points(1.2), referenceDash(0))}})
	if len(s.Groups) == 1 {
		items = append(items, legendItem{"holds", &plotter.Polygon{Color: holdsColor}})
	}
	if slices.ContainsFunc(s.Answers, finite) {
		items = append(items, legendItem{"answer", &plotter.Line{LineStyle: lineStyle(inkColor, vg.Points(1), []vg.Length{vg.Points(1.5), vg.Points(2)})}})
	}
	if len(s.Groups) > 1 {
		for g, name := range s.Groups {
			items = append(items, legendItem{name, glyph(seriesColor(g), draw.CircleGlyph{})})
		}
	}
	return items
}

// title states the answer, or, when no value meets every requirement,
// where each one holds: "No admission.rate meets every requirement:
// p95(convergence_ms) holds from 571 up, max(database.peak_rows_per_s)
// up to 178".
func (s Solve) title() string {
	if len(s.Groups) > 1 {
		found := 0
		for _, a := range s.Answers {
			if finite(a) {
				found++
			}
		}
		return fmt.Sprintf("%s %s meeting every requirement, for %d of %d values of %s", titleCase(s.Key.Goal), s.Key.Name,
			found, len(s.Groups), strings.SplitN(s.Groups[0], "=", 2)[0])
	}
	if a := s.Answers[0]; finite(a) {
		return fmt.Sprintf("The %s %s meeting every requirement is %s", s.Key.Goal, s.Key.Name, s.Key.value(a))
	}
	var parts []string
	for _, sp := range s.Panels {
		parts = append(parts, sp.Metric.Name+" "+s.holds(sp))
	}
	return fmt.Sprintf("No %s meets every requirement: %s", s.Key.Name, strings.Join(parts, ", "))
}

// holds says where among the probes a requirement holds.
func (s Solve) holds(sp SolvePanel) string {
	lo, hi, all := math.Inf(1), math.Inf(-1), []float64{}
	for _, pt := range sp.Points {
		all = append(all, pt.X)
		if pt.Pass {
			lo, hi = math.Min(lo, pt.X), math.Max(hi, pt.X)
		}
	}
	switch {
	case math.IsInf(lo, 0):
		return "never holds"
	case lo == minOf(all) && hi == maxOf(all):
		return "always holds"
	case hi == maxOf(all):
		return "holds from " + s.Key.value(lo) + " up"
	case lo == minOf(all):
		return "holds up to " + s.Key.value(hi)
	}
	return "holds from " + s.Key.value(lo) + " to " + s.Key.value(hi)
}

func titleCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// SolveFrontier describes the frontier chart of a solve with across: the
// answer against the across key, every probe drawn where it was made,
// passing (filled) or failing (hollow), and a probe where some storm did
// not end marked with a cross.
type SolveFrontier struct {
	File    string
	Caption string
	X       SweepAxis // the across key and its values
	Key     SolveKey  // the varied key, on the y axis
	Answers []float64 // per across value; NaN where none meets every requirement
	// Bounds are the first-order bounds at each across value, drawn as
	// a reference line (nil or NaN: none).
	Bounds []float64
	Points []FrontierPoint
}

// FrontierPoint is one probe: the across value's position, the key's,
// the verdict, and whether some storm there did not end.
type FrontierPoint struct {
	X, Y    float64
	Pass    bool
	Unended bool
}

// Write draws the chart Chart draws into dir/File.{png,svg}.
func (f SolveFrontier) Write(dir string, opt Options) ([]string, error) {
	c, err := f.Chart(opt)
	return save(dir, c, err, opt)
}

// Chart draws the frontier.
func (f SolveFrontier) Chart(opt Options) (*Chart, error) {
	if err := (Sweep{File: f.File}).check(); err != nil {
		return nil, err
	}
	if err := f.X.validate("x"); err != nil {
		return nil, fmt.Errorf("plots: %s: %w", f.File, err)
	}
	if len(f.Answers) != len(f.X.Values) {
		return nil, fmt.Errorf("plots: %s: %d answers for %d values of %s", f.File, len(f.Answers), len(f.X.Values), f.X.Name)
	}
	opt = opt.withDefaults()
	xa := scale{min: minOf(f.X.Values), max: maxOf(f.X.Values)}
	if f.X.Log && xa.min > 0 {
		xa = scale{log: true, floor: xa.min, min: xa.min, max: xa.max}
	}
	ya := scale{min: f.Key.Min, max: f.Key.Max}
	if f.Key.Log && f.Key.Min > 0 {
		ya = scale{log: true, floor: f.Key.Min, min: f.Key.Min, max: f.Key.Max}
	}
	p := newPlot(f.X.label(), f.Key.label())
	addGrid(p)
	var line plotter.XYs
	for i, a := range f.Answers {
		if finite(a) {
			line = append(line, xa.xy(ya, f.X.Values[i], a))
		}
	}
	answer := &plotter.Line{XYs: line, LineStyle: lineStyle(seriesColor(0), vg.Points(2), nil)}
	if len(line) > 0 {
		p.Add(answer)
	}
	var bound plotter.XYs
	for i, b := range f.Bounds {
		if i < len(f.X.Values) && finite(b) && b >= f.Key.Min && b <= f.Key.Max {
			bound = append(bound, xa.xy(ya, f.X.Values[i], b))
		}
	}
	boundLine := &plotter.Line{XYs: bound, LineStyle: lineStyle(mutedColor, vg.Points(1.2), referenceDash(0))}
	if len(bound) > 0 {
		p.Add(boundLine)
	}
	var unended bool
	for _, pt := range f.Points {
		shape, c := draw.GlyphDrawer(draw.CircleGlyph{}), seriesColor(0)
		switch {
		case pt.Unended:
			shape, c, unended = draw.CrossGlyph{}, failColor, true
		case !pt.Pass:
			shape = draw.RingGlyph{}
		}
		sc, _ := plotter.NewScatter(plotter.XYs{xa.xy(ya, pt.X, pt.Y)})
		sc.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(3), Shape: shape}
		p.Add(sc)
	}
	sweepXTicks(p, f.X, xa)
	ya.apply(&p.Y)
	if f.Key.Log {
		p.Y.Label.Text += ", log scale"
	}
	glyph := func(c color.Color, shape draw.GlyphDrawer) plot.Thumbnailer {
		sc, _ := plotter.NewScatter(plotter.XYs{{}})
		sc.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(3), Shape: shape}
		return sc
	}
	fig := &figure{title: f.title(), caption: f.Caption, body: plotBody(p), legend: []legendItem{
		{"answer", answer}, {"probe passes", glyph(seriesColor(0), draw.CircleGlyph{})}, {"probe fails", glyph(seriesColor(0), draw.RingGlyph{})},
	}}
	if unended {
		fig.legend = append(fig.legend, legendItem{"a storm did not end", glyph(failColor, draw.CrossGlyph{})})
	}
	if len(bound) > 0 {
		fig.legend = append(fig.legend, legendItem{"first-order bound", boundLine})
	}
	return newChart(f.File, fig), nil
}

// title states how the answer moves along the across key: "Least
// capacity.admit_per_s meeting every requirement: 212 at clients 25,000,
// 1,840 at 200,000", with the values where none meets them.
func (f SolveFrontier) title() string {
	var parts, none []string
	first, last := -1, -1
	for i, a := range f.Answers {
		if !finite(a) {
			none = append(none, f.X.tickLabels()[i])
			continue
		}
		if first < 0 {
			first = i
		}
		last = i
	}
	if first >= 0 {
		parts = append(parts, fmt.Sprintf("%s at %s %s", f.Key.value(f.Answers[first]), f.X.Name, f.X.tickLabels()[first]))
		if last != first {
			parts = append(parts, fmt.Sprintf("%s at %s", f.Key.value(f.Answers[last]), f.X.tickLabels()[last]))
		}
	}
	s := fmt.Sprintf("%s %s meeting every requirement: %s", titleCase(f.Key.Goal), f.Key.Name, strings.Join(parts, ", "))
	if first < 0 {
		s = fmt.Sprintf("No %s meets every requirement at any %s", f.Key.Name, f.X.Name)
	} else if len(none) > 0 {
		s += fmt.Sprintf("; none at %s %s", f.X.Name, strings.Join(none, ", "))
	}
	return s
}
