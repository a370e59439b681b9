package plots

import (
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

const (
	// LogTimeRatio: the time axis turns logarithmic when the longest series
	// on a chart lasts more than this many times the shortest, so that a
	// fast policy is not squeezed into a sliver beside a slow one.
	LogTimeRatio = 20
	// LogCountRatio: a count axis turns logarithmic when its largest value
	// exceeds this many times its smallest non-zero value.
	LogCountRatio = 50
	// ZeroFloor is where a log count axis draws zero (an empty window); the
	// axis labels it 0. Series with non-zero values below 1 get a floor
	// half a decade below their smallest value instead.
	ZeroFloor = 0.5
)

// drawn is one line on a chart: a policy of a run with its style.
type drawn struct {
	label  string
	color  color.Color
	dashes []vg.Length
	run    *Run
	p      *PolicySeries
}

// flatten lists every policy of every run. Colours follow the policy name
// (the same policy has the same colour in every run) and dashes follow the
// run, so an overlay reads as "colour = policy, dash = run".
func flatten(runs []Run) []drawn {
	// Runs that all chart the same one policy differ only by run (variants
	// of one scenario): each run then takes its own colour, solid.
	byRun := len(runs) > 1
	for i := range runs {
		byRun = byRun && len(runs[i].Policies) == 1 && runs[i].Policies[0].Policy == runs[0].Policies[0].Policy
	}
	colorOf := map[string]int{}
	var out []drawn
	for ri := range runs {
		r := &runs[ri]
		for pi := range r.Policies {
			p := &r.Policies[pi]
			ci, ok := colorOf[p.Policy]
			if !ok {
				ci = len(colorOf)
				colorOf[p.Policy] = ci
			}
			d := drawn{label: p.Policy, color: seriesColor(ci), dashes: runDash(ri), run: r, p: p}
			switch {
			case byRun:
				d.label, d.color, d.dashes = r.label(), seriesColor(ri), nil
			case len(runs) > 1:
				d.label = r.label() + " · " + p.Policy
			}
			out = append(out, d)
		}
	}
	return out
}

// scale maps data values to plot coordinates: the identity, or log10 for
// a log axis. The plots draw log10 of the data on gonum's linear axes and
// label the ticks with the original values, rather than use plot.LogScale:
// LogScale panics on zero and misplaces the padding of a centred axis
// label, which leaves a gap above the data.
type scale struct {
	log      bool
	floor    float64 // log only: smaller values (zero included) are drawn here
	zero     bool    // log only: label the floor "0", as it stands for empty windows
	min, max float64 // axis range in data units
}

func (s scale) to(v float64) float64 {
	if !s.log {
		return v
	}
	return math.Log10(math.Max(v, s.floor))
}

func (s scale) apply(a *plot.Axis) {
	a.Min, a.Max = s.to(s.min), s.to(s.max)
	if s.log {
		a.Tick.Marker = logTicks{floor: s.floor, zero: s.zero}
	}
}

func (s scale) xy(t scale, x, y float64) plotter.XY {
	return plotter.XY{X: s.to(x), Y: t.to(y)}
}

// newTimeAxis is the time axis (seconds since the failure) shared by the
// time charts of one page. It spans every series of ds picked by pick,
// plus extra times (ms) that must stay visible.
func newTimeAxis(ds []drawn, pick func(*PolicySeries) []float64, extraMs ...float64) scale {
	shortest, longest, minWindow := math.Inf(1), 0.0, math.Inf(1)
	for _, d := range ds {
		n := len(pick(d.p))
		if n == 0 {
			continue
		}
		span := float64(n) * d.p.WindowMs
		shortest = math.Min(shortest, span)
		longest = math.Max(longest, span)
		minWindow = math.Min(minWindow, d.p.WindowMs)
	}
	for _, ms := range extraMs {
		if ms > 0 && !math.IsInf(ms, 0) {
			longest = math.Max(longest, ms)
		}
	}
	if longest == 0 {
		return scale{min: 0, max: 1}
	}
	if !math.IsInf(shortest, 0) && longest > LogTimeRatio*shortest {
		// Window 0 starts at 0, which a log axis cannot show: it is drawn
		// from half a window on.
		floor := minWindow / 2 / 1000
		return scale{log: true, floor: floor, min: floor, max: longest / 1000}
	}
	return scale{min: 0, max: longest / 1000}
}

// applyTime sets up p's x axis as the time axis ta.
func applyTime(p *plot.Plot, ta scale) {
	ta.apply(&p.X)
	p.X.Label.Text = "time since failure (s)"
	if ta.log {
		p.X.Label.Text = "time since failure (s, log scale)"
	}
}

// newCountAxis is a y axis for non-negative values covering every value of
// series and the reference levels refs (capacity, budget) that must stay
// visible; logarithmic when their range needs it.
func newCountAxis(series [][]float64, refs ...float64) scale {
	maxV, minNZ := positiveRange(series, refs)
	if maxV == 0 {
		return scale{min: 0, max: 1}
	}
	if maxV <= LogCountRatio*minNZ {
		return scale{min: 0, max: maxV * 1.08}
	}
	floor := ZeroFloor
	if minNZ < 1 {
		floor = math.Pow(10, math.Floor(math.Log10(minNZ))) / 2
	}
	return scale{log: true, floor: floor, zero: true, min: floor, max: niceCeilLog(maxV * 1.15)}
}

// newLevelAxis is a linear y axis from 0 covering every value of series and
// refs, for levels read against a budget, where a log axis would shrink
// the excess that matters.
func newLevelAxis(series [][]float64, refs ...float64) scale {
	maxV, _ := positiveRange(series, refs)
	if maxV == 0 {
		return scale{min: 0, max: 1}
	}
	return scale{min: 0, max: maxV * 1.08}
}

// positiveRange is the largest and the smallest positive finite value.
func positiveRange(series [][]float64, refs []float64) (maxV, minPositive float64) {
	maxV, minPositive = 0, math.Inf(1)
	see := func(v float64) {
		if v > 0 && !math.IsInf(v, 0) {
			maxV = math.Max(maxV, v)
			minPositive = math.Min(minPositive, v)
		}
	}
	for _, s := range series {
		for _, v := range s {
			see(v)
		}
	}
	for _, v := range refs {
		see(v)
	}
	return maxV, minPositive
}

// niceCeilLog rounds v up to 1, 2 or 5 times a power of ten.
func niceCeilLog(v float64) float64 {
	mag := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= v*(1-1e-12) {
			return m * mag
		}
	}
	return 10 * mag
}

// windowLine draws per-window values as a step line: flat over each
// window, dropping to zero after the last one. Lines with more than
// maxPoints corners are reduced by LTTB in plot coordinates, so that the
// buckets are even on screen whatever the scales.
func windowLine(ta, ca scale, windowMs float64, vals []float64, maxPoints int, sty draw.LineStyle) *chunkedLine {
	n := len(vals)
	if n == 0 {
		return nil
	}
	xs := make([]float64, 0, n+2)
	ys := make([]float64, 0, n+2)
	for i, v := range vals {
		xs = append(xs, ta.to(float64(i)*windowMs/1000))
		ys = append(ys, ca.to(v))
	}
	end := ta.to(float64(n) * windowMs / 1000)
	xs = append(xs, end, end)
	ys = append(ys, ca.to(vals[n-1]), ca.to(0))
	return &chunkedLine{&plotter.Line{XYs: downsample(xs, ys, maxPoints), StepStyle: plotter.PostStep, LineStyle: sty}}
}

// chunkedLine strokes a long line as several shorter paths that share
// their end points. The PNG rasterizer (freetype) searches its cells
// linearly, so one path with thousands of spikes costs quadratic time;
// chunks of a few hundred points draw the seed model's storm about ten
// times faster, and look the same.
type chunkedLine struct {
	*plotter.Line
}

const lineChunk = 200

func (l *chunkedLine) Plot(c draw.Canvas, p *plot.Plot) {
	if len(l.XYs) <= lineChunk {
		l.Line.Plot(c, p)
		return
	}
	for i := 0; i < len(l.XYs)-1; i += lineChunk {
		part := *l.Line
		part.XYs = l.XYs[i:min(i+lineChunk+1, len(l.XYs))]
		part.Plot(c, p)
	}
}

// downsample reduces a line given in plot coordinates to at most
// maxPoints points by LTTB.
func downsample(xs, ys []float64, maxPoints int) plotter.XYs {
	keep := LTTB(xs, ys, maxPoints)
	pts := make(plotter.XYs, len(keep))
	for i, k := range keep {
		pts[i] = plotter.XY{X: xs[k], Y: ys[k]}
	}
	return pts
}

// outageShades adds each run's outage span, over the full height of the
// y axis ca, to p and returns their legend items.
func outageShades(runs []Run, p *plot.Plot, ta, ca scale) []legendItem {
	var items []legendItem
	for i := range runs {
		o := runs[i].Outage
		if o == nil || !(o.EndMs > o.StartMs) {
			continue
		}
		x0, x1 := ta.to(o.StartMs/1000), ta.to(o.EndMs/1000)
		y0, y1 := ca.to(ca.min), ca.to(ca.max)
		poly := &plotter.Polygon{
			XYs:   []plotter.XYs{{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}},
			Color: shadeColor,
		}
		p.Add(poly)
		label := o.Label
		if label == "" {
			label = "outage"
		}
		if len(runs) > 1 {
			label = runs[i].label() + " " + label
		}
		items = append(items, legendItem{label + " (" + fmtDuration(o.EndMs-o.StartMs) + ")", poly})
	}
	return items
}

// hline draws a horizontal reference at data value y across the x axis.
func hline(xa, ya scale, y float64, sty draw.LineStyle) *plotter.Line {
	return &plotter.Line{XYs: plotter.XYs{xa.xy(ya, xa.min, y), xa.xy(ya, xa.max, y)}, LineStyle: sty}
}

// vline draws a vertical reference at data value x from y0 to y1.
func vline(xa, ya scale, x, y0, y1 float64, sty draw.LineStyle) *plotter.Line {
	return &plotter.Line{XYs: plotter.XYs{xa.xy(ya, x, y0), xa.xy(ya, x, y1)}, LineStyle: sty}
}

// plotBody draws a single plot into the figure body.
func plotBody(p *plot.Plot) func(draw.Canvas) {
	return func(c draw.Canvas) { p.Draw(c) }
}

// caption is the page footer: which runs, which seeds, plus notes. Runs
// of one config and seed (a calibration's real runs and models) name it
// once.
func caption(runs []Run, notes ...string) string {
	s := ""
	shared := len(runs) > 0
	for i := range runs {
		shared = shared && runs[i].Name == runs[0].Name && runs[i].Seed == runs[0].Seed
	}
	if shared {
		one := runs[0]
		one.Label = ""
		runs = []Run{one}
	}
	for i := range runs {
		if i > 0 {
			s += "; "
		}
		r := &runs[i]
		if len(runs) > 1 && r.Label != "" && r.Label != r.Name {
			s += r.Label + ": "
		}
		s += "config " + r.Name + ", seed " + strconv.FormatUint(r.Seed, 10)
	}
	for _, n := range notes {
		if n != "" {
			s += ". " + n
		}
	}
	return s
}

// reference is a level drawn across a chart (a capacity, a budget) with
// its legend text.
type reference struct {
	value float64
	label string
}

// references are the distinct levels level(r) > 0 of the runs, each
// described by describe: a level the runs share is drawn once, unnamed;
// levels that differ name the runs they belong to.
func references(runs []Run, level func(*Run) float64, describe func(v float64) string) []reference {
	var values []float64
	owners := map[float64][]string{}
	for i := range runs {
		v := level(&runs[i])
		if !(v > 0) || math.IsInf(v, 0) {
			continue
		}
		if _, seen := owners[v]; !seen {
			values = append(values, v)
		}
		owners[v] = append(owners[v], runs[i].label())
	}
	var out []reference
	for _, v := range values {
		label := describe(v)
		if len(values) > 1 {
			label = strings.Join(owners[v], ", ") + " " + label
		}
		out = append(out, reference{v, label})
	}
	return out
}

// addReferences draws refs as horizontal lines across the chart, in the
// reference style, before (so beneath) the data added after them, and
// returns their legend items.
func addReferences(p *plot.Plot, ta, ca scale, refs []reference) []legendItem {
	var items []legendItem
	for i, r := range refs {
		l := hline(ta, ca, r.value, referenceStyle(i))
		p.Add(l)
		items = append(items, legendItem{r.label, l})
	}
	return items
}
