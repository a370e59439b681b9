package plots

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
)

// WriteSmallMultiples draws the chart SmallMultiples draws into
// dir/File.{png,svg}.
func (s Sweep) WriteSmallMultiples(dir string, x, y, panel SweepAxis, grid [][][]float64, opt Options) ([]string, error) {
	c, err := s.SmallMultiples(x, y, panel, grid, opt)
	return save(dir, c, err, opt)
}

// SmallMultiples draws the metric over three swept axes: one heat map
// panel per value of the panel axis, all on one colour scale.
// grid[pi][yi][xi] is the metric at panel value pi.
func (s Sweep) SmallMultiples(x, y, panel SweepAxis, grid [][][]float64, opt Options) (*Chart, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if err := panel.validate("panel"); err != nil {
		return nil, fmt.Errorf("plots: %s: %w", s.File, err)
	}
	if len(grid) != len(panel.Values) {
		return nil, fmt.Errorf("plots: %s: %d panels of data for %d values of %s", s.File, len(grid), len(panel.Values), panel.Name)
	}
	for _, g := range grid {
		if err := checkGrid(x, y, g); err != nil {
			return nil, fmt.Errorf("plots: %s: %w", s.File, err)
		}
	}
	opt = opt.withDefaults()
	var all [][]float64
	for _, g := range grid {
		all = append(all, g...)
	}
	var factor float64
	s.Metric, factor = s.Metric.readable(all...)
	scaledCube := make([][][]float64, len(grid))
	for i, g := range grid {
		scaledCube[i] = scaledGrid(g, factor)
	}
	grid = scaledCube
	if err := validateLimits(s.Limits, len(grid)*len(y.Values), len(x.Values)); err != nil {
		return nil, fmt.Errorf("plots: %s: %w", s.File, err)
	}
	s.Limits = scaledLimits(s.Limits, factor)
	digits := cellDigits(s.Limits, grid...)
	hs := newHeatScale(grid...)

	n := len(panel.Values)
	cols := min(4, int(math.Ceil(math.Sqrt(float64(n)))))
	rows := (n + cols - 1) / cols
	panels := make([][]*plot.Plot, rows)
	for r := range panels {
		panels[r] = make([]*plot.Plot, cols)
	}
	var flat []float64
	for i, g := range grid {
		var fails []bool
		if len(s.Limits) > 0 {
			fails = failingCells(s.Limits, len(grid)*len(y.Values), len(x.Values))[i*len(y.Values)*len(x.Values) : (i+1)*len(y.Values)*len(x.Values)]
		}
		p := heatPanel(x, y, heatCells{grid: g, failing: fails, digits: digits}, hs, opt, cols)
		panelTitle(p, panel.at(i))
		panels[i/cols][i%cols] = p
		for _, row := range g {
			flat = append(flat, row...)
		}
	}
	cells := len(x.Values) * len(y.Values)
	f := &figure{caption: heatCaption(s.Caption, grid...)}
	if note := limitCaption(s.Limits); note != "" {
		f.caption += ". " + note
	}
	where := func(i int) string {
		c := i % cells
		return x.shortAt(c%len(x.Values)) + ", " + y.shortAt(c/len(x.Values)) + ", " + panel.shortAt(i/cells)
	}
	f.title = s.Metric.limitTitle(s.Limits, flat, failingCells(s.Limits, len(grid)*len(y.Values), len(x.Values)), where)
	if f.title == "" {
		f.title = s.Metric.bestTitle(flat, where)
	}
	f.body = heatBody(panels, colorBarPlot(hs, s.Metric.label()), x.label(), y.label())
	return newChart(s.File, f), nil
}
