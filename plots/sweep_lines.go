package plots

import (
	"fmt"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// WriteLines draws the chart Lines draws into dir/File.{png,svg}.
func (s Sweep) WriteLines(dir string, x SweepAxis, lines []SweepLine, opt Options) ([]string, error) {
	c, err := s.Lines(x, lines, opt)
	return save(dir, c, err, opt)
}

// Lines draws the metric against one swept axis, one line per group
// (with its interval as error bars when given).
func (s Sweep) Lines(x SweepAxis, lines []SweepLine, opt Options) (*Chart, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if err := x.validate("x"); err != nil {
		return nil, fmt.Errorf("plots: %s: %w", s.File, err)
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("plots: %s: no lines to draw", s.File)
	}
	for _, l := range lines {
		if len(l.Values) != len(x.Values) || (l.Lo != nil && len(l.Lo) != len(x.Values)) || (l.Hi != nil && len(l.Hi) != len(x.Values)) {
			return nil, fmt.Errorf("plots: %s: line %q needs %d values (and lo/hi, if given), one per axis value (got %d, %d, %d)",
				s.File, l.Group, len(x.Values), len(l.Values), len(l.Lo), len(l.Hi))
		}
	}
	if err := validateLimits(s.Limits, len(lines), len(x.Values)); err != nil {
		return nil, fmt.Errorf("plots: %s: %w", s.File, err)
	}
	var all [][]float64
	for _, l := range lines {
		all = append(all, l.Values)
	}
	var f float64
	s.Metric, f = s.Metric.readable(all...)
	s.Limits = scaledLimits(s.Limits, f)
	conv := make([]SweepLine, len(lines))
	for i, l := range lines {
		conv[i] = SweepLine{Group: l.Group, Values: scaled(l.Values, f), Lo: scaled(l.Lo, f), Hi: scaled(l.Hi, f)}
	}
	return newChart(s.File, s.linesFigure(x, conv, opt.withDefaults())), nil
}

func (s Sweep) linesFigure(x SweepAxis, lines []SweepLine, opt Options) *figure {
	xa := scale{min: minOf(x.Values), max: maxOf(x.Values)}
	if x.Log && xa.min > 0 {
		xa = scale{log: true, floor: xa.min, min: xa.min, max: xa.max}
	}
	var all [][]float64
	var flat []float64
	for _, l := range lines {
		all = append(all, l.Values, l.Lo, l.Hi)
		flat = append(flat, l.Values...)
	}
	var bounds []reference
	for _, l := range s.Limits {
		if finite(l.Bound) {
			bounds = append(bounds, reference{l.Bound, "limit: " + l.Text})
			all = append(all, []float64{l.Bound})
		}
	}
	ya := valueAxis(all)

	p := newPlot(x.label(), s.Metric.label())
	addGrid(p)
	f := &figure{caption: s.Caption}
	refItems := addReferences(p, xa, ya, bounds)
	failing := failingCells(s.Limits, len(lines), len(x.Values))
	var drawn drawnPoints
	for li, l := range lines {
		thumb := addSweepLine(p, x, xa, ya, l, seriesColor(li), &drawn)
		if l.Group != "" && thumb != nil {
			f.legend = append(f.legend, legendItem{l.Group, thumb})
		}
	}
	f.legend = append(f.legend, refItems...)
	for i, fails := range failing {
		if fails && finite(flat[i]) {
			p.Add(failedMark(xa.xy(ya, x.Values[i%len(x.Values)], flat[i])))
		}
	}
	if note := limitCaption(s.Limits); note != "" {
		f.caption += ". " + strings.Replace(note, "Hatched", "Ringed", 1)
	}
	f.title = s.Metric.limitTitle(s.Limits, flat, failing, func(i int) string {
		w := x.at(i % len(x.Values))
		if g := lines[i/len(x.Values)].Group; g != "" {
			w += " (" + g + ")"
		}
		return w
	})
	if f.title == "" {
		f.title = s.Metric.bestTitle(drawn.values, func(i int) string { return drawn.where[i] })
		var rows [][]float64
		for _, l := range lines {
			rows = append(rows, l.Values)
		}
		if d := direction(rows); d != 0 {
			lo, hi := SweepMetric{Name: s.Metric.Name}.extremes(drawn.values, nil)
			f.title = fmt.Sprintf("%s %s: from %s (%s) to %s (%s)", s.Metric.Name, movesWith(d, x.Name),
				s.Metric.value(drawn.values[lo]), drawn.where[lo], s.Metric.value(drawn.values[hi]), drawn.where[hi])
		}
	}
	xa.apply(&p.X)
	ya.apply(&p.Y)
	sweepXTicks(p, x, xa)
	if ya.log {
		p.Y.Label.Text += ", log scale"
	}
	f.body = plotBody(p)
	return f
}

// failedMark rings a point that fails a limit.
func failedMark(at plotter.XY) *plotter.Scatter {
	return &plotter.Scatter{XYs: plotter.XYs{at}, GlyphStyle: draw.GlyphStyle{Color: referenceColor, Radius: vg.Points(6), Shape: draw.RingGlyph{}}}
}

// drawnPoints are the values a chart drew and where each is ("rate=10
// (full)"), for its title.
type drawnPoints struct {
	values []float64
	where  []string
}

// addSweepLine draws one line of a sweep chart in colour c: its values
// as points joined by segments, broken where a value is missing, with
// error bars where it has an interval. It returns a segment to show in
// the legend, nil if nothing was drawn.
func addSweepLine(p *plot.Plot, x SweepAxis, xa, ya scale, l SweepLine, c color.Color, drawn *drawnPoints) *plotter.Line {
	var pts plotter.XYs
	var segs []plotter.XYs
	for i, v := range l.Values {
		if !finite(v) {
			if len(pts) > 0 {
				segs = append(segs, pts)
				pts = nil
			}
			continue
		}
		pts = append(pts, xa.xy(ya, x.Values[i], v))
		drawn.values = append(drawn.values, v)
		w := x.at(i)
		if l.Group != "" {
			w += " (" + l.Group + ")"
		}
		drawn.where = append(drawn.where, w)
		if l.Lo != nil && l.Hi != nil && finite(l.Lo[i]) && finite(l.Hi[i]) {
			at := xa.xy(ya, x.Values[i], v)
			p.Add(&plotter.YErrorBars{
				XYs:       plotter.XYs{at},
				YErrors:   plotter.YErrors{{Low: at.Y - ya.to(l.Lo[i]), High: ya.to(l.Hi[i]) - at.Y}},
				LineStyle: lineStyle(c, vg.Points(1), nil),
				CapWidth:  vg.Points(5),
			})
		}
	}
	if len(pts) > 0 {
		segs = append(segs, pts)
	}
	sty := lineStyle(c, vg.Points(1.6), nil)
	glyph := draw.GlyphStyle{Color: c, Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
	var thumb *plotter.Line
	for _, seg := range segs {
		line := &plotter.Line{XYs: seg, LineStyle: sty}
		p.Add(line, &plotter.Scatter{XYs: seg, GlyphStyle: glyph})
		thumb = line
	}
	return thumb
}

// sweepXTicks labels the swept values on the x axis (one tick each, when
// there are few), pads the axis and says when it is a log scale.
func sweepXTicks(p *plot.Plot, x SweepAxis, xa scale) {
	if len(x.Values) <= 12 {
		// One labelled tick per swept value.
		ticks := make(plot.ConstantTicks, len(x.Values))
		for i, l := range x.tickLabels() {
			ticks[i] = plot.Tick{Value: xa.to(x.Values[i]), Label: l}
		}
		p.X.Tick.Marker = ticks
	}
	pad := (xa.to(xa.max) - xa.to(xa.min)) * 0.04
	if pad == 0 {
		pad = 0.5
	}
	p.X.Min, p.X.Max = xa.to(xa.min)-pad, xa.to(xa.max)+pad
	if x.Log {
		p.X.Label.Text += ", log scale"
	}
}

// valueAxis covers metric values (NaN skipped): a count axis when none is
// negative, else a padded linear range.
func valueAxis(series [][]float64) scale {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, v := range s {
			if finite(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if math.IsInf(lo, 0) {
		return scale{min: 0, max: 1}
	}
	if lo >= 0 {
		return newCountAxis(series)
	}
	pad := (hi - lo) * 0.08
	return scale{min: lo - pad, max: hi + pad}
}

func minOf(v []float64) float64 {
	m := math.Inf(1)
	for _, x := range v {
		m = math.Min(m, x)
	}
	return m
}

func maxOf(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m
}
