package report

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"stormsim/calibrate/compare"
	"stormsim/plots"
)

// BandChartPrefix names the per-window band charts: band-attempts.png and
// band-accepts.png (and .svg).
const BandChartPrefix = "band"

// Frame is what the charts draw around the series: the window, the
// admission's bound per window and the analytic reclaim bound.
type Frame struct {
	WindowMs                 float64
	AcceptBound              float64 // most admissions in one window; +Inf: unlimited
	ReclaimLoMs, ReclaimHiMs float64
}

// WriteCharts draws into dir: the plots package's overlay of the real runs
// and each model (attempts per window, connected fraction, work against
// time, reclaim time against the simulated distribution), and for attempts
// and accepts per window (and goodput and wasted claims, with a horizon)
// the real series over the first model's spread and 95% band, the other
// models' means beside it. It returns the paths
// written.
func (rep *Report) WriteCharts(dir string, f Frame) ([]string, error) {
	if len(rep.Simulations) == 0 {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	runs := []plots.Run{realPlotRun(rep, f)}
	for i, sm := range rep.Simulations {
		runs = append(runs, simPlotRun(rep, f, sm, i == 0))
	}
	written, err := plots.Overlay(dir, runs, plots.Options{})
	if err != nil {
		return written, err
	}
	first := rep.Simulations[0]
	for _, c := range first.Series {
		if c.Pass == nil && !outcomeSeries[c.Series] {
			continue
		}
		paths, err := bandChart(dir, rep, first, c)
		written = append(written, paths...)
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// outcomeSeries are the series of a storm with a horizon, drawn as bands
// whether or not their windows are checked.
var outcomeSeries = map[string]bool{"goodput": true, "wasted": true}

// realPlotRun is the real runs' mean series as a plots.Run.
func realPlotRun(rep *Report, f Frame) plots.Run {
	ps := plots.PolicySeries{Policy: rep.Policy, Clients: rep.Clients, WindowMs: f.WindowMs}
	var attempts, convergence, p99, reclaims []float64
	for _, r := range rep.Real {
		attempts = append(attempts, float64(r.Crash.Attempts))
		convergence = append(convergence, r.Crash.ConvergenceMs)
		p99 = append(p99, r.Crash.ConnectMs.P99)
		reclaims = append(reclaims, r.ReclaimMs)
	}
	for _, c := range rep.Simulations[0].Series {
		switch c.Series {
		case "attempts":
			ps.AttemptsPerWindow = c.Real
		case "accepts":
			ps.AcceptsPerWindow = c.Real
		case "goodput":
			ps.GoodputPerWindow = c.Real
		case "wasted":
			ps.WastedPerWindow = c.Real
		}
	}
	ps.ConvergenceMs, ps.ConnectP99Ms = stat.Mean(convergence, nil), stat.Mean(p99, nil)
	if len(rep.Real) > 1 {
		ps.Replicated = &plots.Replicated{Runs: len(rep.Real), Attempts: plots.MeanMinMax(attempts),
			ConvergenceMs: plots.MeanMinMax(convergence), SpreadKind: "min–max"}
	}
	return plots.Run{Name: rep.Name, Seed: rep.Seed, Label: realLabel(rep), Policies: []plots.PolicySeries{ps},
		CapacityPerWindow: f.AcceptBound,
		Reclaim:           &plots.Reclaim{TimesMs: reclaims, BoundMs: [2]float64{f.ReclaimLoMs, f.ReclaimHiMs}}}
}

func realLabel(rep *Report) string {
	if n := len(rep.Real); n > 1 {
		return fmt.Sprintf("real (mean of %d runs)", n)
	}
	return "real"
}

// simPlotRun is a simulation's mean series, with its replication spread
// and, if withReclaim, the simulated reclaim times (the lease model does not
// depend on the fitted sections, so one simulation's histogram stands for
// all).
func simPlotRun(rep *Report, f Frame, sm Simulation, withReclaim bool) plots.Run {
	ps := plots.PolicySeries{Policy: rep.Policy, Clients: rep.Clients, WindowMs: f.WindowMs}
	for _, c := range sm.Series {
		switch c.Series {
		case "attempts":
			ps.AttemptsPerWindow = c.SimMean
		case "accepts":
			ps.AcceptsPerWindow = c.SimMean
		case "goodput":
			ps.GoodputPerWindow = c.SimMean
		case "wasted":
			ps.WastedPerWindow = c.SimMean
		}
	}
	var attempts, convergence, p99, reclaims []float64
	for _, r := range sm.Results {
		attempts = append(attempts, float64(r.Attempts))
		c, _ := r.Convergence()
		convergence = append(convergence, c)
		p99 = append(p99, r.ConnectMs.P99)
		if r.Reclaim != nil {
			reclaims = append(reclaims, r.Reclaim.ReclaimMs)
		}
	}
	ps.ConvergenceMs, ps.ConnectP99Ms = stat.Mean(convergence, nil), stat.Mean(p99, nil)
	ps.Replicated = &plots.Replicated{Runs: len(sm.Results), Attempts: centralSpread(attempts),
		ConvergenceMs: centralSpread(convergence), SpreadKind: "central 95% of replications"}
	run := plots.Run{Name: rep.Name, Seed: rep.Seed, Label: "sim " + string(sm.Role) + " (mean)", Policies: []plots.PolicySeries{ps},
		CapacityPerWindow: f.AcceptBound}
	if withReclaim && len(reclaims) > 0 {
		run.Reclaim = &plots.Reclaim{TimesMs: reclaims, BoundMs: [2]float64{f.ReclaimLoMs, f.ReclaimHiMs}}
	}
	return run
}

func centralSpread(v []float64) plots.Spread {
	lo, hi := compare.Interval(v)
	return plots.Spread{Mean: stat.Mean(v, nil), Lo: lo, Hi: hi}
}

// Colours of the band chart: the real series in ink, the first model in
// blue with its band, each other model's mean in its own colour.
var (
	inkColor      = color.NRGBA{0x22, 0x22, 0x22, 0xff}
	modelColor    = color.NRGBA{0x1f, 0x6f, 0xb4, 0xff}
	bandColor     = color.NRGBA{0x1f, 0x6f, 0xb4, 0x60}
	envelopeColor = color.NRGBA{0x1f, 0x6f, 0xb4, 0x26}
	roleColors    = map[Role]color.Color{
		Calibrated:   color.NRGBA{0x8e, 0x44, 0xad, 0xff},
		Pooled:       color.NRGBA{0x2c, 0xa0, 0x2c, 0xff},
		Uncalibrated: color.NRGBA{0xe0, 0x7b, 0x1a, 0xff},
	}
)

// bandChart draws one count series: model sm's per-window spread (min-max
// of the replications, the agreement criterion) and 95% band, its mean,
// the other models' means, and the real series on top.
func bandChart(dir string, rep *Report, sm Simulation, c compare.SeriesComparison) ([]string, error) {
	pl := plot.New()
	pl.Title.Text = fmt.Sprintf("%s: real %s per %.0f ms window against the %s model (W1 %.0f ms, p %.2f)",
		rep.Name, c.Series, c.WindowMs, sm.Role, c.W1Ms, c.W1P)
	pl.Title.TextStyle.Font.Size = vg.Points(12)
	pl.Title.Padding = vg.Points(6)
	pl.X.Label.Text = "time since the crash (s)"
	switch {
	case strings.HasPrefix(c.Series, "drain."):
		pl.X.Label.Text = "time since the drain's SIGTERM (s)"
	case strings.HasPrefix(c.Series, "deploy."):
		pl.X.Label.Text = "time since the deploy's first drain (s)"
	}
	pl.Y.Label.Text = c.Series + " per window"
	pl.Add(plotter.NewGrid())
	pl.Legend.Top = true

	step := func(values []float64) plotter.XYs {
		xy := make(plotter.XYs, 0, 2*len(values))
		for i, v := range values {
			x0, x1 := float64(i)*c.WindowMs/1000, float64(i+1)*c.WindowMs/1000
			xy = append(xy, plotter.XY{X: x0, Y: v}, plotter.XY{X: x1, Y: v})
		}
		return xy
	}
	area := func(lower, upper []float64, fill color.Color, label string) error {
		lo, hi := step(lower), step(upper)
		poly := make(plotter.XYs, 0, len(lo)+len(hi))
		poly = append(poly, hi...)
		for i := len(lo) - 1; i >= 0; i-- {
			poly = append(poly, lo[i])
		}
		band, err := plotter.NewPolygon(poly)
		if err != nil {
			return err
		}
		band.Color, band.LineStyle.Width = fill, 0
		pl.Add(band)
		pl.Legend.Add(label, band)
		return nil
	}
	if err := area(c.SimMin, c.SimMax, envelopeColor, fmt.Sprintf("%s model: spread (min-max of %d runs)", sm.Role, sm.Replications)); err != nil {
		return nil, err
	}
	if err := area(c.SimLo, c.SimHi, bandColor, fmt.Sprintf("%s model: central 95%%", sm.Role)); err != nil {
		return nil, err
	}

	line := func(values []float64, col color.Color, width float64, dashed bool, label string) error {
		l, err := plotter.NewLine(step(values))
		if err != nil {
			return err
		}
		l.Color, l.Width = col, vg.Points(width)
		if dashed {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		pl.Add(l)
		pl.Legend.Add(label, l)
		return nil
	}
	if err := line(c.SimMean, modelColor, 1.2, true, fmt.Sprintf("%s model: mean", sm.Role)); err != nil {
		return nil, err
	}
	for _, other := range rep.Simulations[1:] {
		for _, oc := range other.Series {
			if oc.Series != c.Series {
				continue
			}
			if err := line(oc.SimMean, roleColors[other.Role], 1.2, true, fmt.Sprintf("%s model: mean", other.Role)); err != nil {
				return nil, err
			}
		}
	}
	if err := line(c.Real, inkColor, 2, false, realLabel(rep)); err != nil {
		return nil, err
	}
	pl.Y.Min = 0
	pl.X.Tick.Marker = halfSeconds{}
	var written []string
	for _, ext := range []string{"png", "svg"} {
		path := filepath.Join(dir, fmt.Sprintf("%s-%s.%s", BandChartPrefix, c.Series, ext))
		if err := pl.Save(8*vg.Inch, 5*vg.Inch, path); err != nil {
			return written, err
		}
		written = append(written, path)
	}
	return written, nil
}

// halfSeconds ticks the time axis every 0.5 s.
type halfSeconds struct{}

func (halfSeconds) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for x := math.Ceil(lo*2) / 2; x <= hi+1e-9; x += 0.5 {
		ticks = append(ticks, plot.Tick{Value: x, Label: strconv.FormatFloat(x, 'f', -1, 64)})
	}
	return ticks
}
