package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"

	"gonum.org/v1/gonum/stat"

	"stormsim/calibrate/compare"
	"stormsim/internal/human"
	"stormsim/plots"
)

// BandChartPrefix names the per-window band charts: band-attempts.png and
// band-accepts.png (and .svg).
const BandChartPrefix = "band"

// Frame is what the charts draw around the series: the window, the
// admission's bound per window and the analytic reclaim bound.
type Frame struct {
	WindowMs    float64 `json:"window_ms"`
	AcceptBound float64 `json:"accept_bound"` // most admissions in one window; +Inf (null): unlimited
	ReclaimLoMs float64 `json:"reclaim_lo_ms"`
	ReclaimHiMs float64 `json:"reclaim_hi_ms"`
}

// WriteCharts writes the charts (Charts) into dir as PNG and SVG and
// returns the paths written.
func (rep *Report) WriteCharts(dir string) ([]string, error) {
	charts, err := rep.Charts(plots.Options{})
	if err != nil || len(charts) == 0 {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return plots.SaveAll(dir, charts, plots.Options{})
}

// Charts draws, from what the report holds: the plots package's overlay
// of the real runs and each model (attempts per window, connected
// fraction, work against time, reclaim time against the simulated
// distribution), its titles comparing the real runs with the model that
// is checked; and for attempts and accepts per window (and goodput and
// wasted claims, with a horizon) the real series over the first model's
// spread and central 95 %, the other models' means beside it.
func (rep *Report) Charts(opt plots.Options) ([]*plots.Chart, error) {
	if len(rep.Simulations) == 0 {
		return nil, nil
	}
	runs := []plots.Run{realPlotRun(rep)}
	for i := range rep.Simulations {
		if sameModelAs(rep, i) != "" {
			continue // drawn once, under the name of the model it equals
		}
		runs = append(runs, simPlotRun(rep, i, i == 0))
	}
	if first := rep.Simulations[0]; first.Role.Checked() {
		opt.Focus = []string{runs[0].Label, runs[1].Label}
	}
	charts, err := plots.Charts(runs, opt)
	if err != nil {
		return nil, err
	}
	first := rep.Simulations[0]
	for _, c := range first.Series {
		if c.Pass == nil && !outcomeSeries[c.Series] {
			continue
		}
		band, err := bandChart(rep, c).Chart(opt)
		if err != nil {
			return charts, err
		}
		charts = append(charts, band)
	}
	return charts, nil
}

// outcomeSeries are the series of a storm with a horizon, drawn as bands
// whether or not their windows are checked.
var outcomeSeries = map[string]bool{"goodput": true, "wasted": true}

// realPlotRun is the real runs' mean series as a plots.Run.
func realPlotRun(rep *Report) plots.Run {
	f := rep.Frame
	ps := plots.PolicySeries{Policy: rep.Policy, Clients: rep.Clients, WindowMs: f.WindowMs}
	var attempts, convergence, p99, reclaims []float64
	for _, r := range rep.Real {
		attempts = append(attempts, float64(r.Crash.Attempts))
		convergence = append(convergence, r.Crash.ConvergenceMs)
		p99 = append(p99, r.Crash.ConnectMs.P99)
		reclaims = append(reclaims, r.ReclaimMs)
	}
	setSeries(&ps, rep.Simulations[0].Series, func(c compare.SeriesComparison) []float64 { return c.Real })
	ps.ConvergenceMs, ps.ConnectP99Ms = stat.Mean(convergence, nil), stat.Mean(p99, nil)
	if len(rep.Real) > 1 {
		ps.Replicated = &plots.Replicated{Runs: len(rep.Real), Attempts: plots.MeanMinMax(attempts),
			ConvergenceMs: plots.MeanMinMax(convergence), SpreadKind: "min to max of the real runs"}
	}
	return plots.Run{Name: rep.Name, Seed: rep.Seed, Label: realLabel(rep), Policies: []plots.PolicySeries{ps},
		CapacityPerWindow: f.AcceptBound,
		Reclaim:           &plots.Reclaim{TimesMs: reclaims, BoundMs: [2]float64{f.ReclaimLoMs, f.ReclaimHiMs}}}
}

// setSeries sets ps's per-window series from comparisons, each as pick
// takes it (the real mean or a model's).
func setSeries(ps *plots.PolicySeries, series []compare.SeriesComparison, pick func(compare.SeriesComparison) []float64) {
	for _, c := range series {
		switch c.Series {
		case "attempts":
			ps.AttemptsPerWindow = pick(c)
		case "accepts":
			ps.AcceptsPerWindow = pick(c)
		case "goodput":
			ps.GoodputPerWindow = pick(c)
		case "wasted":
			ps.WastedPerWindow = pick(c)
		}
	}
}

// realLabel names the real runs in the charts' legends.
func realLabel(rep *Report) string {
	if n := len(rep.Real); n > 1 {
		return fmt.Sprintf("real (mean of %d runs)", n)
	}
	return "real run"
}

// modelLabel names a model in the charts' legends, with the later roles
// that are the same model.
func modelLabel(rep *Report, i int) string {
	label := string(rep.Simulations[i].Role)
	for j := i + 1; j < len(rep.Simulations); j++ {
		if sameModelAs(rep, j) == string(rep.Simulations[i].Role) {
			label += " = " + string(rep.Simulations[j].Role)
		}
	}
	return label + " model"
}

// simPlotRun is a simulation's mean series, with its replication spread
// and, if withReclaim, the simulated reclaim times (the lease model does
// not depend on the fitted sections, so one simulation's histogram stands
// for all).
func simPlotRun(rep *Report, i int, withReclaim bool) plots.Run {
	sm := rep.Simulations[i]
	f := rep.Frame
	ps := plots.PolicySeries{Policy: rep.Policy, Clients: rep.Clients, WindowMs: f.WindowMs}
	setSeries(&ps, sm.Series, func(c compare.SeriesComparison) []float64 { return c.SimMean })
	fig := sm.PerReplication
	convergence := finiteOnly(fig.ConvergenceMs)
	ps.ConvergenceMs, ps.ConnectP99Ms = mean(convergence), mean(fig.ConnectP99Ms)
	if len(fig.Attempts) > 0 && len(convergence) > 0 {
		ps.Replicated = &plots.Replicated{Runs: len(fig.Attempts), Attempts: centralSpread(fig.Attempts),
			ConvergenceMs: centralSpread(convergence), SpreadKind: "central 95% of the replications"}
	}
	run := plots.Run{Name: rep.Name, Seed: rep.Seed, Label: modelLabel(rep, i), Policies: []plots.PolicySeries{ps},
		CapacityPerWindow: f.AcceptBound}
	if withReclaim && len(fig.ReclaimMs) > 0 {
		run.Reclaim = &plots.Reclaim{TimesMs: fig.ReclaimMs, BoundMs: [2]float64{f.ReclaimLoMs, f.ReclaimHiMs}}
	}
	return run
}

func finiteOnly(v []float64) []float64 {
	var out []float64
	for _, x := range v {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			out = append(out, x)
		}
	}
	return out
}

// mean is the mean of v; 0 (drawn nowhere) for none.
func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return stat.Mean(v, nil)
}

func centralSpread(v []float64) plots.Spread {
	lo, hi := compare.Interval(v)
	return plots.Spread{Mean: stat.Mean(v, nil), Lo: lo, Hi: hi}
}

// bandChart is one count series: the first model's per-window spread
// (min to max of the replications, the agreement's criterion) and
// central 95 %, its mean, the other models' means, and the real series on
// top, titled with the agreement.
func bandChart(rep *Report, c compare.SeriesComparison) plots.Band {
	first := rep.Simulations[0]
	b := plots.Band{
		File:     BandChartPrefix + "-" + c.Series,
		Title:    bandTitle(first, c),
		Series:   c.Series,
		WindowMs: c.WindowMs,
		Since:    seriesOrigin(c.Series),
		Measured: plots.BandLine{Label: realLabel(rep), Run: 0, Values: c.Real},
		Model:    plots.BandLine{Label: modelLabel(rep, 0), Run: 1, Values: c.SimMean},
		Min:      c.SimMin, Max: c.SimMax, Lo: c.SimLo, Hi: c.SimHi,
		Caption: fmt.Sprintf("config %s, seed %d; %s replications per model, the real series the mean of %d run%s",
			rep.Name, rep.Seed, human.Count(int64(first.Replications)), len(rep.Real), plural(len(rep.Real))),
	}
	run := 1
	for i, other := range rep.Simulations[1:] {
		if sameModelAs(rep, i+1) != "" {
			continue
		}
		run++
		for _, oc := range other.Series {
			if oc.Series == c.Series {
				b.Others = append(b.Others, plots.BandLine{Label: modelLabel(rep, i+1), Run: run, Values: oc.SimMean})
			}
		}
	}
	return b
}

// sameModelAs is the role of an earlier simulation with the very sections
// of simulation i ("" for none): with one real run, the pooled fit is the
// calibrated one, and two identical lines would hide each other.
func sameModelAs(rep *Report, i int) string {
	sections, err := json.Marshal(rep.Simulations[i].Sections)
	if err != nil {
		return ""
	}
	for _, earlier := range rep.Simulations[:i] {
		if e, err := json.Marshal(earlier.Sections); err == nil && bytes.Equal(e, sections) {
			return string(earlier.Role)
		}
	}
	return ""
}

// bandTitle says how many windows of the real series lie inside the
// model's spread and whether that passes.
func bandTitle(sm Simulation, c compare.SeriesComparison) string {
	inside := fmt.Sprintf("Real %s per %s window inside the %s model's spread in %d of %d windows",
		c.Series, human.Millis(c.WindowMs), sm.Role, c.WindowsInsideEnvelope, c.Windows)
	switch {
	case c.Pass == nil:
		return inside + " (shown, not checked)"
	case *c.Pass:
		return inside + fmt.Sprintf(": pass (all but %d must be)", c.AllowedOutside)
	}
	return inside + fmt.Sprintf(": FAIL (all but %d must be)", c.AllowedOutside)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// seriesOrigin is what a compared series' windows count from: a drain's
// and a deploy's from their start, the storm's from the failure ("").
func seriesOrigin(series string) string {
	switch {
	case strings.HasPrefix(series, "drain."):
		return "the drain began"
	case strings.HasPrefix(series, "deploy."):
		return "the deploy began"
	}
	return ""
}
