package plots

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// windowSeriesChart draws one per-window level per policy as step lines
// over time on a linear axis, with the runs' outages shaded and the
// reference levels refs beneath the lines. It returns the plot to
// decorate, the axes and the legend.
func windowSeriesChart(runs []Run, ds []drawn, pick func(*PolicySeries) []float64, yLabel string, opt Options, refs ...reference) (*plot.Plot, scale, scale, []legendItem) {
	var extra []float64
	for i := range runs {
		if o := runs[i].Outage; o != nil {
			extra = append(extra, o.EndMs)
		}
	}
	ta := newTimeAxis(ds, pick, extra...)
	var all [][]float64
	for _, d := range ds {
		all = append(all, pick(d.p))
	}
	var levels []float64
	for _, r := range refs {
		levels = append(levels, r.value)
	}
	ca := newLevelAxis(all, levels...)
	p := newPlot("", yLabel)
	addGrid(p)
	legend := outageShades(runs, p, ta, ca)
	refItems := addReferences(p, ta, ca, refs)
	for _, d := range ds {
		l := windowLine(ta, ca, d.p.WindowMs, pick(d.p), opt.MaxPoints, lineStyle(d.color, vg.Points(1.2), d.dashes))
		if l == nil {
			continue
		}
		p.Add(l)
		legend = append(legend, legendItem{d.label, l})
	}
	return p, ta, ca, append(legend, refItems...)
}

func staleRoutes(p *PolicySeries) []float64 { return p.StaleRoutesPerWindow }

// staleChart: routes still pointing at the dead gateway over time.
func staleChart(runs []Run, ds []drawn, opt Options) *figure {
	ds = withSeries(ds, staleRoutes)
	p, ta, ca, legend := windowSeriesChart(runs, ds, staleRoutes, "stale routes (devices that look online)", opt)
	applyTime(p, ta)
	ca.apply(&p.Y)
	note := "A stale route: the device is offline but its route still names the dead gateway"
	return &figure{title: staleTitle(ds), legend: legend, caption: caption(runs, note), body: plotBody(p)}
}

// staleTitle reports when the stale routes are gone and their integral
// (route-seconds, which is how long devices looked online while offline).
func staleTitle(ds []drawn) string {
	type stale struct {
		label      string
		routeS     float64
		lastMs     float64
		peakRoutes float64
	}
	var ss []stale
	for _, d := range ds {
		v := d.p.StaleRoutesPerWindow
		last := len(v)
		for last > 0 && v[last-1] == 0 {
			last--
		}
		routeS := d.p.StaleRouteSeconds
		if routeS == 0 {
			routeS = floats.Sum(v) * d.p.WindowMs / 1000
		}
		ss = append(ss, stale{
			label:      d.label,
			routeS:     routeS,
			lastMs:     float64(last) * d.p.WindowMs,
			peakRoutes: floats.Max(v),
		})
	}
	if len(ss) == 0 {
		return "No stale routes"
	}
	slices.SortStableFunc(ss, func(a, b stale) int { return -cmpFloat(a.routeS, b.routeS) })
	worst, best := ss[0], ss[len(ss)-1]
	if len(ss) == 1 || worst.routeS == best.routeS {
		return fmt.Sprintf("Up to %s stale routes, gone after %s: %s route-seconds with %s",
			fmtCount(worst.peakRoutes), fmtDuration(worst.lastMs), fmtValue(worst.routeS), worst.label)
	}
	return fmt.Sprintf("Stale routes add up to %s route-seconds with %s, %s with %s",
		fmtValue(worst.routeS), worst.label, fmtValue(best.routeS), best.label)
}
