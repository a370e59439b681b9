package plots

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/plot/vg"
)

func goodput(p *PolicySeries) []float64 { return p.GoodputPerWindow }
func queued(p *PolicySeries) []float64  { return p.QueuePerWindow }

// goodputChart: per window, the handshakes that reached the gateways, the
// route claims that connected a client (useful work) and those done for a
// client that had already given up (wasted work), against what the
// surviving gateways can claim. In a storm that never ends the gateways
// stay at capacity while the useful line lies on the floor.
func goodputChart(runs []Run, ds []drawn, opt Options) *figure {
	ds = withSeries(ds, goodput)
	attempts := func(p *PolicySeries) []float64 { return p.AttemptsPerWindow }
	var all [][]float64
	var refs []float64
	for _, d := range ds {
		all = append(all, d.p.AttemptsPerWindow, d.p.GoodputPerWindow, d.p.WastedPerWindow)
	}
	for i := range runs {
		if runs[i].ClaimCapacityPerWindow > 0 {
			refs = append(refs, runs[i].ClaimCapacityPerWindow)
		}
	}
	ta := newTimeAxis(ds, attempts)
	ca := newCountAxis(all, refs...)
	p := newPlot("", "handshakes per "+windowPhrase(ds))
	addGrid(p)
	f := &figure{title: goodputTitle(ds)}
	capacity := addReferences(p, ta, ca, references(runs, func(r *Run) float64 { return r.ClaimCapacityPerWindow },
		func(v float64) string { return "claim capacity (" + fmtValue(v) + " per window)" }))
	// Wasted claims often run at the claim capacity: dash-dot, so that the
	// reference's plain dashes show beside them.
	dotted := []vg.Length{vg.Points(1.5), vg.Points(2)}
	dashDot := []vg.Length{vg.Points(8), vg.Points(2.5), vg.Points(1.5), vg.Points(2.5)}
	for _, d := range ds {
		for _, s := range []struct {
			what   string
			v      []float64
			width  float64
			dashes []vg.Length
		}{
			{"attempts", d.p.AttemptsPerWindow, 0.8, dotted},
			{"wasted claims", d.p.WastedPerWindow, 1.3, dashDot},
			{"useful claims", d.p.GoodputPerWindow, 1.6, d.dashes},
		} {
			if s.what == "attempts" && len(ds) > 1 {
				continue // with several storms the attempts would hide the work
			}
			l := windowLine(ta, ca, d.p.WindowMs, s.v, opt.MaxPoints, lineStyle(d.color, vg.Points(s.width), s.dashes))
			if l == nil {
				continue
			}
			p.Add(l)
			f.legend = append(f.legend, legendItem{d.label + " " + s.what, l})
		}
	}
	f.legend = append(f.legend, capacity...)
	applyTime(p, ta)
	ca.apply(&p.Y)
	note := "Claims are counted when their answer leaves the gateway; wasted: its client had given up"
	if ca.log {
		note += ". Log count axis; empty windows drawn at 0"
	}
	f.caption = caption(runs, note)
	f.body = plotBody(p)
	return f
}

// goodputTitle says how much of the gateways' work was wasted, for the
// policy that wasted the largest share.
func goodputTitle(ds []drawn) string {
	type work struct {
		label          string
		useful, wasted float64
	}
	var ws []work
	for _, d := range ds {
		ws = append(ws, work{d.label, floats.Sum(d.p.GoodputPerWindow), floats.Sum(d.p.WastedPerWindow)})
	}
	if len(ws) == 0 {
		return "No route claims"
	}
	share := func(w work) float64 {
		if w.useful+w.wasted == 0 {
			return 0
		}
		return w.wasted / (w.useful + w.wasted)
	}
	slices.SortStableFunc(ws, func(a, b work) int { return -cmpFloat(share(a), share(b)) })
	worst := ws[0]
	if worst.wasted == 0 {
		return "Every route claim connected a client: no work wasted"
	}
	return fmt.Sprintf("%s of %s's route claims were wasted on clients that had given up (%s wasted, %s useful)",
		fmtPercent(share(worst)), worst.label, fmtCount(worst.wasted), fmtCount(worst.useful))
}

// queueChart: handshakes waiting for their turn at the surviving gateways
// at the end of each window.
func queueChart(runs []Run, ds []drawn, opt Options) *figure {
	ds = withSeries(ds, queued)
	p, ta, ca, legend := windowSeriesChart(runs, ds, queued, "handshakes waiting for their turn", opt)
	applyTime(p, ta)
	ca.apply(&p.Y)
	note := "Waiting at each window's end, over all surviving gateways"
	return &figure{title: queueTitle(ds), legend: legend, caption: caption(runs, note), body: plotBody(p)}
}

// queueTitle gives the longest queue and whether it drained.
func queueTitle(ds []drawn) string {
	type line struct {
		label      string
		peak, last float64
		emptyMs    float64 // end of the last window with anyone waiting
	}
	var ls []line
	for _, d := range ds {
		q := d.p.QueuePerWindow
		l := line{label: d.label, peak: floats.Max(q), last: q[len(q)-1]}
		for i := len(q) - 1; i >= 0; i-- {
			if q[i] > 0 {
				l.emptyMs = float64(i+1) * d.p.WindowMs
				break
			}
		}
		ls = append(ls, l)
	}
	if len(ls) == 0 {
		return "No handshakes waited"
	}
	slices.SortStableFunc(ls, func(a, b line) int { return -cmpFloat(a.last, b.last) })
	worst := ls[0]
	if worst.last > 0 {
		return fmt.Sprintf("The queue does not drain with %s: %s handshakes still waiting at the end (peak %s)",
			worst.label, fmtCount(worst.last), fmtCount(worst.peak))
	}
	slices.SortStableFunc(ls, func(a, b line) int { return -cmpFloat(a.peak, b.peak) })
	worst = ls[0]
	if worst.peak == 0 {
		return "No handshake waited at a window's end"
	}
	return fmt.Sprintf("The queue peaks at %s handshakes with %s and drains by %s", fmtCount(worst.peak), worst.label, fmtDuration(worst.emptyMs))
}
