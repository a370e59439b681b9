package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"stormsim/calibrate/compare"
	"stormsim/calibrate/fit"
	"stormsim/calibrate/measured"
	"stormsim/internal/safetext"
	"stormsim/models"
)

// WriteTable prints the report for a terminal: the runs and the machine's
// load, the lab checks, the fit, each model against the real runs, the
// agreement and the verdict.
func (r *Report) WriteTable(w io.Writer) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "%s: %d clients, policy %s, %d real run(s) from seed %d, %d replications per model\n",
		safetext.Terminal(r.Name), r.Clients, safetext.Terminal(r.Policy), len(r.Real), r.Seed, replications(r))
	if len(r.Models) > 0 {
		fmt.Fprintf(b, "predicted: the sections of %s, fitted on another storm\n", safetext.Terminal(strings.Join(r.Models, ", ")))
	}
	r.writeRuns(b)
	r.writeChecks(b)
	if r.FitError != "" {
		fmt.Fprintf(b, "\nnot fitted on these runs: %s\n", safetext.Terminal(r.FitError))
		if r.Fit.Claims.Gaps > 0 {
			c := r.Fit.Claims
			fmt.Fprintf(b, "  measured   useful claims %.1f/s (mean gap while claims waited %s, %d gaps); wasted claims %.1f/s (%s, %d gaps)\n",
				c.AdmitPerS, fmtMs(c.GapMs), c.Gaps, c.WastedPerS, fmtMs(c.WastedGapMs), c.WastedGaps)
		}
	} else {
		writeFit(b, &r.Fit, len(r.Real))
	}
	for _, sm := range r.Simulations {
		writeSimulation(b, sm)
	}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	if compare.Converged(r.Real) {
		fmt.Fprintln(b, "\nmodels compared (attempts and time to all reconnected: sim mean vs real mean; series: windows inside the spread)")
		fmt.Fprintln(tw, "model\tattempts\tlast reconnect\tattempts/window\taccepts/window\t")
		for _, sm := range r.Simulations {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", sm.Role, metricErr(sm, "attempts"), metricErr(sm, "convergence_ms"),
				seriesInside(sm, "attempts"), seriesInside(sm, "accepts"))
		}
	} else {
		fmt.Fprintln(b, "\nmodels compared over the horizon (a real storm did not end: its outcome and its rates, sim mean vs real mean)")
		fmt.Fprintln(tw, "model\toutcome (real; sim)\tuseful claims/s\twasted claims/s\tattempts/s\t")
		for _, sm := range r.Simulations {
			outcome := "-"
			if o := sm.Outcome; o != nil {
				outcome = o.Agreement(string(sm.Role)).Observed
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", sm.Role, outcome, metricVs(sm, "useful_per_s"),
				metricVs(sm, "wasted_per_s"), metricVs(sm, "attempts_per_s"))
		}
	}
	tw.Flush()
	fmt.Fprintln(b, "\nagreement")
	tw = tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	for _, a := range r.Agreement {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.Model, a.Name, a.Criterion, a.Observed, passFail(a.Pass))
	}
	tw.Flush()
	if f := r.Failures(); len(f) > 0 {
		fmt.Fprintf(b, "\nFAIL:\n  %s\n", strings.Join(f, "\n  "))
	} else {
		fmt.Fprintln(b, "\npass: every lab check and every agreement of the fitted models, on runs no other work disturbed")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeRuns prints each run's load and its fit alone: how steady the lab
// was.
func (r *Report) writeRuns(b *strings.Builder) {
	fmt.Fprintf(b, "\nruns (cores: CPU used, 1 = one core; other work above %.2f cores disturbs a run; per run, its fit alone)\n", r.DisturbedCores)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "run\tseed\tload 1m\tother before\tother during\tstorm's own\tdatabase\tattempts\tlast back\tadmit/s\tdecide/s\tonset\tshared\t")
	perRun, perRunErr := map[int]*fit.Model{}, map[int]string{}
	for _, rf := range r.Fit.Runs {
		perRun[rf.Run], perRunErr[rf.Run] = rf.Model, rf.Error
	}
	row := func(run *measured.Run, note string) {
		l := run.Load
		load := []string{"-", "-", "-", "-"}
		if l.Measured {
			load = []string{fmt.Sprintf("%.2f", l.OtherBeforeCores), fmt.Sprintf("%.2f", l.OtherDuringCores),
				fmt.Sprintf("%.2f", l.OwnDuringCores), fmt.Sprintf("%.2f", l.DatabaseCores)}
		}
		model := []string{"-", "-", "-", "-"}
		if m := perRun[run.Run]; m != nil {
			model = []string{fmt.Sprintf("%.0f", m.Capacity.AdmitPerS), fmt.Sprintf("%.0f", m.Capacity.DecidePerS),
				m.Detection.Delay.Value.String(), m.Network.SharedEvery.String()}
		}
		lastBack := fmtMs(run.Crash.ConvergenceMs)
		if o := run.Outcome; o != nil && !o.Converged {
			lastBack = fmt.Sprintf("%s: %d of %d back by %s", o.Outcome, o.Connected, run.Crash.Clients, fmtMs(o.HorizonMs))
		}
		fmt.Fprintf(tw, "%d\t%d\t%.2f\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", run.Run, run.Seed, l.Average1m,
			load[0], load[1], load[2], load[3], run.Crash.Attempts, lastBack,
			model[0], model[1], model[2], model[3], note)
	}
	for _, run := range r.Real {
		note := ""
		switch {
		case run.Load.Disturbed:
			note = "DISTURBED"
		case !run.Load.Measured:
			note = "load unknown"
		case run.Load.WaitedMs > 0:
			note = fmt.Sprintf("waited %s for quiet", fmtMs(run.Load.WaitedMs))
		}
		if e := perRunErr[run.Run]; e != "" {
			note = strings.TrimSpace(note + " not fitted alone: " + e)
		}
		row(run, note)
	}
	for _, run := range r.Replaced {
		row(run, "disturbed: replaced, not used")
	}
	tw.Flush()
}

func (r *Report) writeChecks(b *strings.Builder) {
	failed := 0
	for _, c := range r.Checks {
		if !c.Pass {
			failed++
		}
	}
	fmt.Fprintf(b, "\nlab checks: %d of %d pass\n", len(r.Checks)-failed, len(r.Checks))
	if failed == 0 {
		return
	}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "run\tkind\tcheck\texpected\tobserved\tok")
	for _, c := range r.Checks {
		if !c.Pass {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", c.Run, c.Kind, c.Name, c.Expected, c.Observed, yesNo(c.Pass))
		}
	}
	tw.Flush()
}

// writeFit prints the fitted sections and what they come from.
func writeFit(b *strings.Builder, f *fit.Fit, runs int) {
	m := f.Model
	fmt.Fprintf(b, "\nfit on %d run(s) (calibration.json fit.method says how):\n", runs)
	fmt.Fprintf(b, "  capacity   admit %.1f/s (mean claim gap while claims waited %s, %d gaps); decide %.0f/s (per run %s)\n",
		m.Capacity.AdmitPerS, fmtMs(f.Claims.GapMs), f.Claims.Gaps, m.Capacity.DecidePerS, waveList(f.FirstWave, func(w fit.WaveRun) string {
			return fmt.Sprintf("%.0f (wave %.0f, backlog %.0f)", w.DecidePerS, w.WavePerS, w.BacklogPerS)
		}))
	if f.Claims.WastedGaps > 0 {
		fmt.Fprintf(b, "             wasted claims %.1f/s (mean gap %s, %d gaps; 0: too few to fit, as admit)\n",
			f.Claims.WastedPerS, fmtMs(f.Claims.WastedGapMs), f.Claims.WastedGaps)
	}
	fmt.Fprintf(b, "  first wave detection %s after the kill (per run: onset %s)\n", describeDist(m.Detection.Delay),
		waveList(f.FirstWave, func(w fit.WaveRun) string { return fmt.Sprintf("%s, span %s", fmtMs(w.OnsetMs), fmtMs(w.SpanMs)) }))
	l := f.Legs
	fmt.Fprintf(b, "  legs       retries out p50 %s p90 %s (their lateness p50 %s p90 %s), back p50 %s p90 %s; first attempts back p50 %s (%d retries, %d first)\n",
		fmtMs(l.RetryOutMs.P50), fmtMs(l.RetryOutMs.P90), fmtMs(l.RetryLagMs.P50), fmtMs(l.RetryLagMs.P90),
		fmtMs(l.RetryBackMs.P50), fmtMs(l.RetryBackMs.P90), fmtMs(l.FirstBackMs.P50), l.Retries, l.Firsts)
	fmt.Fprintf(b, "             fitted out %s, back %s, first back %s\n", describeDistPtr(m.Network.OutLeg),
		describeDistPtr(m.Network.BackLeg), describeDistPtr(m.Network.FirstBackLeg))
	fmt.Fprintf(b, "  server     server_time %s (admitted latency - own out leg - time at the survivor - median back: p50 %s p90 %s)\n",
		describeDist(m.Network.ServerTime), fmtMs(l.ServerTimeMs.P50), fmtMs(l.ServerTimeMs.P90))
	fmt.Fprintf(b, "  shared     shared_every %v (per run: %s ms)\n", m.Network.SharedEvery, fmtList(f.Shared.RunsMs))
}

func waveList(w fit.FirstWave, f func(fit.WaveRun) string) string {
	parts := make([]string, len(w.Runs))
	for i, r := range w.Runs {
		parts[i] = f(r)
	}
	return strings.Join(parts, "; ")
}

func writeSimulation(b *strings.Builder, sm Simulation) {
	sets := ""
	if n := len(sm.Sections); n > 1 {
		sets = fmt.Sprintf(", %d sets of sections in turn", n)
	}
	if len(sm.Runs) > 0 {
		sets += fmt.Sprintf(" (fitted on runs %v, each alone)", sm.Runs)
	}
	fmt.Fprintf(b, "\n%s model vs real (sim 95%% interval: central 95%% of replications%s; twin: the replications with the real runs' seeds)\n", sm.Role, sets)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "metric\treal\tsim mean\tsim 95% interval\trel error\tinside\ttwin\ttwin error\treal pct\t")
	for _, m := range sm.Metrics {
		fmt.Fprintf(tw, "%s\t%s\t%s\t[%s, %s]\t%s\t%s\t%s\t%s\t%.0f%%\t\n", m.Metric, fmtValue(m.Real, m.Unit), fmtValue(m.SimMean, m.Unit),
			fmtValue(m.SimLo, m.Unit), fmtValue(m.SimHi, m.Unit), fmtRel(m.RelError), yesNo(m.Inside), fmtValue(m.SimTwin, m.Unit),
			fmtRel(m.TwinRelError), 100*m.RealPercentile)
	}
	tw.Flush()
	tw = tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "series per window\tinside spread\tinside 95% band\tW1\tKS\tW1 p\treal/sim sd\t")
	for _, c := range sm.Series {
		if c.Pass == nil {
			fmt.Fprintf(tw, "%s\t%d/%d\t%d/%d\t-\t-\t-\t-\t\n", c.Series, c.WindowsInsideEnvelope, c.Windows, c.WindowsInside, c.Windows)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d/%d\t%d/%d\t%.0f ms\t%.3f\t%.2f\t%s\t\n", c.Series, c.WindowsInsideEnvelope, c.Windows,
			c.WindowsInside, c.Windows, c.W1Ms, c.KS, c.W1P, fmtRatio(c.SpreadRatio))
	}
	tw.Flush()
}

func replications(r *Report) int {
	if len(r.Simulations) == 0 {
		return 0
	}
	return r.Simulations[0].Replications
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "NO"
}

func passFail(ok bool) string {
	if ok {
		return "pass"
	}
	return "FAIL"
}

func fmtMs(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.3gs", v/1000)
	}
	return fmt.Sprintf("%.3gms", v)
}

func fmtValue(v float64, unit string) string {
	if unit == "ms" {
		return fmt.Sprintf("%.0f ms", v)
	}
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// fmtRel is a relative error as a percentage; n/a when it has no value
// (the real figure is 0).
func fmtRel(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%+.1f%%", 100**v)
}

// metricErr is a simulation's relative error on metric, "-" if absent.
func metricErr(sm Simulation, metric string) string {
	for _, m := range sm.Metrics {
		if m.Metric == metric {
			return fmtRel(m.RelError)
		}
	}
	return "-"
}

// metricVs is "sim vs real (relative error)" for a metric.
func metricVs(sm Simulation, metric string) string {
	for _, m := range sm.Metrics {
		if m.Metric == metric {
			return fmt.Sprintf("%.0f vs %.0f (%s)", m.SimMean, m.Real, fmtRel(m.RelError))
		}
	}
	return "-"
}

// seriesInside is "inside/windows (pass)" for a count series.
func seriesInside(sm Simulation, series string) string {
	for _, c := range sm.Series {
		if c.Series == series && c.Pass != nil {
			return fmt.Sprintf("%d/%d %s", c.WindowsInsideEnvelope, c.Windows, passFail(*c.Pass))
		}
	}
	return "-"
}

// fmtList prints values to 0.1, comma-separated.
func fmtList(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.1f", x)
	}
	return strings.Join(parts, ", ")
}

// fmtRatio prints a SpreadRatio, "-" when there is none (one real run).
func fmtRatio(r float64) string {
	if r == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", r)
}

// describeDistPtr is describeDist, "none" for nil.
func describeDistPtr(d *models.Distribution) string {
	if d == nil {
		return "none"
	}
	return describeDist(*d)
}

// describeDist prints a distribution in one short phrase.
func describeDist(d models.Distribution) string {
	switch d.Dist {
	case models.DistLognormal:
		return fmt.Sprintf("lognormal(median %v, sigma %.2f, cap %v)", d.Median, d.Sigma, d.Cap)
	case models.DistUniform:
		return fmt.Sprintf("uniform[%v, %v)", d.Min, d.Max)
	case models.DistEmpirical:
		p := d.Points
		return fmt.Sprintf("empirical(%d points: min %v, median %v, max %v)", len(p), p[0], p[(len(p)-1)/2], p[len(p)-1])
	}
	return fmt.Sprintf("fixed %v", d.Value)
}
