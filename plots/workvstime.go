package plots

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// work is one policy's point: total attempts against convergence time,
// with the replication spread when there is one.
type work struct {
	d             drawn
	convergenceMs Spread
	attempts      Spread
	spreadKind    string
}

func workOf(d drawn) work {
	if r := d.p.Replicated; r != nil {
		return work{d: d, convergenceMs: r.ConvergenceMs, attempts: r.Attempts, spreadKind: r.SpreadKind}
	}
	a := floats.Sum(d.p.AttemptsPerWindow)
	c := d.p.ConvergenceMs
	return work{d: d, convergenceMs: Spread{c, c, c}, attempts: Spread{a, a, a}}
}

// convergedWork are the points of the lines that converged and made
// attempts: the others have no place on the chart.
func convergedWork(ds []drawn) []work {
	var ws []work
	for _, d := range ds {
		w := workOf(d)
		if w.convergenceMs.Mean > 0 && w.attempts.Mean > 0 {
			ws = append(ws, w)
		}
	}
	return ws
}

// workVsTimeChart: the trade-off in one picture, total attempts (work)
// against convergence time, one labelled point per policy.
func workVsTimeChart(runs []Run, ds []drawn) *figure {
	ws := convergedWork(ds)
	p := newPlot("convergence time: last client connected (s)", "handshake attempts (total)")
	addGrid(p)
	f := &figure{title: workTitle(ws)}

	var xs, ys []float64
	spreadKind := ""
	for _, w := range ws {
		xs = append(xs, w.convergenceMs.Lo/1000, w.convergenceMs.Hi/1000, w.convergenceMs.Mean/1000)
		ys = append(ys, w.attempts.Lo, w.attempts.Hi, w.attempts.Mean)
		if w.spreadKind != "" {
			spreadKind = w.spreadKind
		}
	}
	xa, ya := ratioAxis(xs), ratioAxis(ys)

	radius := vg.Points(4.5)
	labels := &pointLabels{radius: radius}
	for _, w := range ws {
		at := xa.xy(ya, w.convergenceMs.Mean/1000, w.attempts.Mean)
		x, y := at.X, at.Y
		if w.d.p.Replicated != nil {
			xe := &plotter.XErrorBars{
				XYs:       plotter.XYs{at},
				XErrors:   plotter.XErrors{{Low: x - xa.to(w.convergenceMs.Lo/1000), High: xa.to(w.convergenceMs.Hi/1000) - x}},
				LineStyle: lineStyle(w.d.color, vg.Points(1), nil),
				CapWidth:  vg.Points(6),
			}
			ye := &plotter.YErrorBars{
				XYs:       plotter.XYs{at},
				YErrors:   plotter.YErrors{{Low: y - ya.to(w.attempts.Lo), High: ya.to(w.attempts.Hi) - y}},
				LineStyle: lineStyle(w.d.color, vg.Points(1), nil),
				CapWidth:  vg.Points(6),
			}
			p.Add(xe, ye)
		}
		pt := &plotter.Scatter{
			XYs:        plotter.XYs{at},
			GlyphStyle: draw.GlyphStyle{Color: w.d.color, Radius: radius, Shape: draw.CircleGlyph{}},
		}
		p.Add(pt)
		labels.xys = append(labels.xys, at)
		labels.labels = append(labels.labels, w.d.label)
		labels.styles = append(labels.styles, pointLabelStyle(w.d.color))
	}
	p.Add(labels)
	xa.apply(&p.X)
	ya.apply(&p.Y)
	if xa.log {
		p.X.Label.Text += ", log scale"
	}
	if ya.log {
		p.Y.Label.Text += ", log scale"
	}
	note := "Lower left is better: fewer attempts, sooner converged"
	if spreadKind != "" {
		note += ". Error bars: " + spreadKind
	}
	f.caption = caption(runs, note)
	f.body = plotBody(p)
	return f
}

// ratioAxis is an axis for positive values, logarithmic when they span
// more than LogTimeRatio, else linear from zero, with a margin so that
// points and labels clear the frame.
func ratioAxis(vs []float64) scale {
	lo, hi := math.Inf(1), 0.0
	for _, v := range vs {
		if v > 0 && !math.IsInf(v, 0) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if hi == 0 {
		return scale{min: 0, max: 1}
	}
	if hi > LogTimeRatio*lo {
		return scale{log: true, floor: lo / 1.6, min: lo / 1.6, max: hi * 1.6}
	}
	// Work and time are ratio quantities: a linear axis starts at zero so
	// that distances between points read as proportions.
	return scale{min: 0, max: hi * 1.15}
}

// workTitle states the trade-off between the fastest-converging policy
// and the slowest.
func workTitle(ws []work) string {
	if len(ws) == 0 {
		return "No policy converged"
	}
	sorted := slices.Clone(ws)
	slices.SortStableFunc(sorted, func(a, b work) int { return cmpFloat(a.convergenceMs.Mean, b.convergenceMs.Mean) })
	fast, slow := sorted[0], sorted[len(sorted)-1]
	if len(ws) == 1 || fast.convergenceMs.Mean == slow.convergenceMs.Mean {
		return fmt.Sprintf("%s converges in %s with %s attempts", fast.d.label, fmtDuration(fast.convergenceMs.Mean), fmtCount(fast.attempts.Mean))
	}
	speed := "converges " + fmtRatio(slow.convergenceMs.Mean/fast.convergenceMs.Mean) + " sooner than"
	if slow.convergenceMs.Mean < 1.05*fast.convergenceMs.Mean {
		speed = "converges " + fmtPercent(slow.convergenceMs.Mean/fast.convergenceMs.Mean-1) + " sooner than"
	}
	return fmt.Sprintf("%s %s %s %s", fast.d.label, speed, slow.d.label, attemptsBeside(fast.attempts.Mean, slow.attempts.Mean))
}

// attemptsBeside compares a's attempts with b's in words: a factor when
// one is at least twice the other, else a percentage, so that a
// difference of a few per cent never reads "1.0× fewer".
func attemptsBeside(a, b float64) string {
	switch {
	case a == b || math.Abs(a-b) < 0.005*math.Max(a, b):
		return "with as many attempts"
	case a < b && b >= 2*a:
		return "with " + fmtRatio(b/a) + " fewer attempts"
	case a < b:
		return "with " + fmtPercent(1-a/b) + " fewer attempts"
	case a >= 2*b:
		return "at " + fmtRatio(a/b) + " the attempts"
	}
	return "with " + fmtPercent(a/b-1) + " more attempts"
}
