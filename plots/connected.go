package plots

import (
	"fmt"
	"slices"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// connectedFraction is the running sum of accepts over clients at the end
// of each window; with an outcome, of the useful claims (an accept whose
// client had given up connects nobody).
func connectedFraction(p *PolicySeries) []float64 {
	if p.Clients <= 0 {
		return nil
	}
	connects := p.AcceptsPerWindow
	if p.GoodputPerWindow != nil {
		connects = p.GoodputPerWindow
	}
	out := make([]float64, len(connects))
	sum := 0.0
	for i, v := range connects {
		sum += v
		out[i] = sum / float64(p.Clients)
	}
	return out
}

// connectedChart: fraction of clients connected over time per policy, with
// each policy's 99th percentile connect time marked on the 99% line.
func connectedChart(runs []Run, ds []drawn, opt Options) *figure {
	accepts := func(p *PolicySeries) []float64 { return p.AcceptsPerWindow }
	var extra []float64
	for _, d := range ds {
		extra = append(extra, d.p.ConnectP99Ms)
	}
	ta := newTimeAxis(ds, accepts, extra...)
	ca := scale{min: 0, max: 1.02}

	p := newPlot("", "clients connected")
	p.Y.Tick.Marker = percentTicks{}
	addGrid(p)
	f := &figure{title: connectedTitle(ds)}
	f.legend = append(f.legend, outageShades(runs, p, ta, ca)...)
	p.Add(hline(ta, ca, 0.99, lineStyle(mutedColor, vg.Points(0.7), []vg.Length{vg.Points(1), vg.Points(2)})))

	for _, d := range ds {
		frac := connectedFraction(d.p)
		if len(frac) == 0 {
			continue
		}
		// The fraction is known at window ends. A linear axis starts the
		// curve at (0, 0); a log axis starts it at the first window's end,
		// since a ramp from the axis minimum would invent early connects.
		var xs, ys []float64
		if !ta.log {
			xs, ys = []float64{0}, []float64{0}
		}
		for i, v := range frac {
			xs = append(xs, ta.to(float64(i+1)*d.p.WindowMs/1000))
			ys = append(ys, v)
		}
		l := &chunkedLine{&plotter.Line{XYs: downsample(xs, ys, opt.MaxPoints), LineStyle: lineStyle(d.color, vg.Points(1.4), d.dashes)}}
		p.Add(l)
		label := d.label
		if d.p.ConnectP99Ms > 0 {
			x := d.p.ConnectP99Ms / 1000
			p.Add(vline(ta, ca, x, 0, 0.99, lineStyle(d.color, vg.Points(0.8), []vg.Length{vg.Points(3), vg.Points(2)})))
			mark := &plotter.Scatter{
				XYs:        plotter.XYs{ta.xy(ca, x, 0.99)},
				GlyphStyle: draw.GlyphStyle{Color: d.color, Radius: vg.Points(3.2), Shape: draw.CircleGlyph{}},
			}
			p.Add(mark)
			label += " (p99 " + fmtDuration(d.p.ConnectP99Ms) + ")"
		}
		f.legend = append(f.legend, legendItem{label, l})
	}
	applyTime(p, ta)
	ca.apply(&p.Y)
	f.caption = caption(runs, "Dot and dashed drop: 99th percentile connect time")
	f.body = plotBody(p)
	return f
}

// connectedTitle compares how long it takes 99% of clients to connect.
func connectedTitle(ds []drawn) string {
	type p99 struct {
		label string
		ms    float64
	}
	var ps []p99
	stalled, stalledAt := "", 1.0 // the storm that ends furthest from 99 %
	for _, d := range ds {
		frac := connectedFraction(d.p)
		if last := 0.0; len(frac) > 0 {
			if last = frac[len(frac)-1]; last < 0.99 && last < stalledAt {
				stalled, stalledAt = d.label, last
			}
		}
		if d.p.ConnectP99Ms > 0 {
			ps = append(ps, p99{d.label, d.p.ConnectP99Ms})
		}
	}
	stall := ""
	if stalled != "" {
		stall = fmt.Sprintf("%s stalls at %s connected", stalled, fmtPercent(stalledAt))
	}
	if len(ps) == 0 {
		if stall != "" {
			return stall // it starts with a policy's label, as written
		}
		return "No client connected"
	}
	slices.SortStableFunc(ps, func(a, b p99) int { return cmpFloat(a.ms, b.ms) })
	best, worst := ps[0], ps[len(ps)-1]
	switch {
	case stall != "":
		return fmt.Sprintf("%s; 99%% connected after %s with %s", stall, fmtDuration(best.ms), best.label)
	case len(ps) == 1 || best.ms == worst.ms:
		return fmt.Sprintf("99%% of clients connected after %s with %s", fmtDuration(best.ms), best.label)
	}
	return fmt.Sprintf("99%% of clients connected after %s with %s, %s with %s (%s longer)",
		fmtDuration(best.ms), best.label, fmtDuration(worst.ms), worst.label, fmtRatio(worst.ms/best.ms))
}
