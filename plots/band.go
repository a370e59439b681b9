package plots

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Band compares a measured per-window series with a model's
// replications: the model's spread (min to max) and central 95 % as
// shaded bands, its mean dashed, other models' means beside it, and the
// measured series on top. Entry i of every series covers [i*WindowMs,
// (i+1)*WindowMs). Each line's Run is its run's place in the overlay of
// the same runs (Overlay's colours: one per run), so that a model has
// one colour on every chart of a page.
type Band struct {
	File     string // base name
	Title    string // the finding: the caller judges the agreement
	Caption  string
	Series   string  // what is counted, for the y axis: "attempts"
	WindowMs float64 // the window, ms
	// Since is what the time axis counts from, in words ("the drain
	// began"); "" is the failure, as every storm's series.
	Since string

	Measured BandLine
	Model    BandLine // its Values are the replications' mean
	Min, Max []float64
	Lo, Hi   []float64 // the central 95 % of the replications
	Others   []BandLine
}

// BandLine is one series of a band chart.
type BandLine struct {
	Label  string
	Run    int // the run's place in the page's overlay, for its colour
	Values []float64
}

// Chart draws the band chart.
func (b Band) Chart(opt Options) (*Chart, error) {
	n := len(b.Measured.Values)
	for _, s := range [][]float64{b.Model.Values, b.Min, b.Max, b.Lo, b.Hi} {
		n = max(n, len(s))
	}
	if n == 0 || !(b.WindowMs > 0) {
		return nil, fmt.Errorf("plots: band %s: no windows to draw", b.File)
	}
	if b.File == "" {
		return nil, fmt.Errorf("plots: band chart without a file name")
	}
	opt = opt.withDefaults()
	ta := scale{min: 0, max: float64(n) * b.WindowMs / 1000}
	all := [][]float64{b.Measured.Values, b.Model.Values, b.Max, b.Hi}
	for _, o := range b.Others {
		all = append(all, o.Values)
	}
	ca := newLevelAxis(all)
	p := newPlot("", b.Series+" per "+fmtDuration(b.WindowMs)+" window")
	addGrid(p)
	f := &figure{title: b.Title, caption: b.Caption}
	mc := seriesColor(b.Model.Run)
	for _, area := range []struct {
		lo, hi []float64
		alpha  uint8
		label  string
	}{
		{b.Min, b.Max, 0x30, b.Model.Label + ": spread (min to max)"},
		{b.Lo, b.Hi, 0x70, b.Model.Label + ": central 95%"},
	} {
		if poly := stepBand(ta, ca, b.WindowMs, area.lo, area.hi, withAlpha(mc, area.alpha)); poly != nil {
			p.Add(poly)
			f.legend = append(f.legend, legendItem{area.label, poly})
		}
	}
	dashed := []vg.Length{vg.Points(5), vg.Points(3)}
	lines := append([]BandLine{b.Model}, b.Others...)
	for i, l := range lines {
		label := l.Label + ": mean"
		if i == 0 {
			label = l.Label + ": mean of the replications"
		}
		if sl := windowLine(ta, ca, b.WindowMs, l.Values, opt.MaxPoints, lineStyle(seriesColor(l.Run), vg.Points(1.3), dashed), 0); sl != nil {
			p.Add(sl)
			f.legend = append(f.legend, legendItem{label, sl})
		}
	}
	if sl := windowLine(ta, ca, b.WindowMs, b.Measured.Values, opt.MaxPoints, lineStyle(seriesColor(b.Measured.Run), vg.Points(2), nil), 0); sl != nil {
		p.Add(sl)
		f.legend = append([]legendItem{{b.Measured.Label, sl}}, f.legend...)
	}
	applyTime(p, ta)
	if b.Since != "" {
		p.X.Label.Text = "time since " + b.Since + " (s)"
	}
	ca.apply(&p.Y)
	f.body = plotBody(p)
	return newChart(b.File, f), nil
}

// stepBand is the area between two per-window series, flat over each
// window; nil without windows.
func stepBand(ta, ca scale, windowMs float64, lo, hi []float64, fill color.Color) *plotter.Polygon {
	n := min(len(lo), len(hi))
	if n == 0 {
		return nil
	}
	var upper, lower plotter.XYs
	for i := range n {
		x0, x1 := float64(i)*windowMs/1000, float64(i+1)*windowMs/1000
		upper = append(upper, ta.xy(ca, x0, hi[i]), ta.xy(ca, x1, hi[i]))
		lower = append(lower, ta.xy(ca, x0, lo[i]), ta.xy(ca, x1, lo[i]))
	}
	ring := append(plotter.XYs{}, upper...)
	for i := len(lower) - 1; i >= 0; i-- {
		ring = append(ring, lower[i])
	}
	return &plotter.Polygon{XYs: []plotter.XYs{ring}, Color: fill}
}
