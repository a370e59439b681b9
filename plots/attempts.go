package plots

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/plot/vg"
)

// attemptsChart: handshake attempts per window over time, one step line
// per policy, the admission capacity dashed and the outage shaded.
func attemptsChart(runs []Run, ds []drawn, opt Options) *figure {
	attempts := func(p *PolicySeries) []float64 { return p.AttemptsPerWindow }
	var extra []float64
	var refs []float64
	for i := range runs {
		if o := runs[i].Outage; o != nil {
			extra = append(extra, o.EndMs)
		}
		if runs[i].hasCapacity() {
			refs = append(refs, runs[i].CapacityPerWindow)
		}
	}
	ta := newTimeAxis(ds, attempts, extra...)
	var all [][]float64
	for _, d := range ds {
		all = append(all, d.p.AttemptsPerWindow)
	}
	ca := newCountAxis(all, refs...)

	p := newPlot("", "attempts per "+windowPhrase(ds))
	addGrid(p)
	f := &figure{title: attemptsTitle(runs, ds)}
	f.legend = append(f.legend, outageShades(runs, p, ta, ca)...)
	capacity := addReferences(p, ta, ca, references(runs, func(r *Run) float64 { return r.CapacityPerWindow },
		func(v float64) string { return "admission capacity (" + fmtValue(v) + " per window)" }))

	// Draw the biggest storms first so that smaller ones stay visible on top.
	order := make([]int, len(ds))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return -cmpFloat(floats.Sum(ds[a].p.AttemptsPerWindow), floats.Sum(ds[b].p.AttemptsPerWindow))
	})
	lines := make([]*chunkedLine, len(ds))
	for _, i := range order {
		d := ds[i]
		l := windowLine(ta, ca, d.p.WindowMs, d.p.AttemptsPerWindow, opt.MaxPoints, lineStyle(d.color, vg.Points(1.1), d.dashes))
		if l != nil {
			p.Add(l)
		}
		lines[i] = l
	}
	for i, d := range ds {
		if lines[i] != nil {
			f.legend = append(f.legend, legendItem{d.label, lines[i]})
		}
	}
	f.legend = append(f.legend, capacity...)
	applyTime(p, ta)
	ca.apply(&p.Y)

	note := ""
	if ca.log {
		note = "Log count axis; empty windows drawn at 0"
	}
	f.caption = caption(runs, note)
	f.body = plotBody(p)
	return f
}

// attemptsTitle names the synchronisation that backoff must break: the
// highest retry wave after the first window, relative to capacity when
// admission is limited.
func attemptsTitle(runs []Run, ds []drawn) string {
	type wave struct {
		label string
		peak  float64 // attempts in the highest window after the first busy one
		ratio float64 // peak / capacity, or NaN
	}
	var waves []wave
	for _, d := range ds {
		a := d.p.AttemptsPerWindow
		first := slices.IndexFunc(a, func(v float64) bool { return v > 0 })
		if first < 0 {
			continue
		}
		w := wave{label: d.label, ratio: math.NaN()}
		if first+1 < len(a) {
			w.peak = floats.Max(a[first+1:])
		}
		if d.run.hasCapacity() {
			w.ratio = w.peak / d.run.CapacityPerWindow
		}
		waves = append(waves, w)
	}
	if len(waves) == 0 {
		return "No handshake attempts"
	}
	slices.SortStableFunc(waves, func(a, b wave) int { return -cmpFloat(a.peak, b.peak) })
	describe := func(w wave) string {
		if !math.IsNaN(w.ratio) {
			return fmtRatio(w.ratio) + " capacity"
		}
		return fmtCount(w.peak) + " attempts per window"
	}
	worst, best := waves[0], waves[len(waves)-1]
	if len(waves) == 1 || worst.peak == best.peak {
		return fmt.Sprintf("After the first window, %s retries peak at %s", worst.label, describe(worst))
	}
	return fmt.Sprintf("After the first window, %s retries peak at %s, %s at %s", worst.label, describe(worst), best.label, strings.TrimSuffix(describe(best), " capacity"))
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// windowPhrase is "10 ms window" when every series shares one window
// length, else "window".
func windowPhrase(ds []drawn) string {
	w := 0.0
	for _, d := range ds {
		if w != 0 && d.p.WindowMs != w {
			return "window"
		}
		w = d.p.WindowMs
	}
	if w == 0 {
		return "window"
	}
	return fmtDuration(w) + " window"
}
