package report

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"stormsim/calibrate/compare"
	"stormsim/calibrate/fit"
	"stormsim/calibrate/measured"
	"stormsim/internal/safetext"
	"stormsim/models"
	"stormsim/results"
)

// Tables are the report's tables, for its page: the runs and the
// machine's load, the lab checks, the fit, each model against the real
// runs (metric by metric, then window by window), the models compared and
// the agreement. Cells read as the terminal writes them; "pass", "FAIL",
// "yes" and "NO" are verdicts.
func (r *Report) Tables() []results.Table {
	out := []results.Table{r.runsTable(), r.checksTable()}
	if r.FitError == "" {
		out = append(out, fitTable(&r.Fit, len(r.Real)))
	}
	for _, sm := range r.Simulations {
		out = append(out, metricsTable(sm), seriesTable(sm))
	}
	return append(out, r.modelsTable(), r.agreementTable())
}

// runsTable is each run's load and its fit alone: how steady the lab was.
func (r *Report) runsTable() results.Table {
	t := results.Table{
		Title: fmt.Sprintf("runs (cores: CPU used, 1 = one core; other work above %.2f cores disturbs a run; per run, its fit alone)", r.DisturbedCores),
		Header: []string{"run", "seed", "load 1m", "other before", "other during", "storm's own", "its clients", "database", "attempts",
			"last back", "notice p50", "admit/s", "decide/s", "onset", "shared", "note"},
	}
	perRun, perRunErr, onset := map[int]*fit.Model{}, map[int]string{}, map[int]string{}
	for _, rf := range r.Fit.Runs {
		perRun[rf.Run], perRunErr[rf.Run] = rf.Model, rf.Error
	}
	for _, w := range r.Fit.FirstWave.Runs {
		onset[w.Run] = fmtMs(w.OnsetMs)
	}
	row := func(run *measured.Run, note string) {
		l := run.Load
		load := []string{"-", "-", "-", "-", "-"}
		if l.Measured {
			clients := "-" // runs measured before the clients' share was kept
			if l.Cores > 0 {
				clients = fmt.Sprintf("%.2f", l.ClientsCores)
			}
			load = []string{fmt.Sprintf("%.2f", l.OtherBeforeCores), fmt.Sprintf("%.2f", l.OtherDuringCores),
				fmt.Sprintf("%.2f", l.OwnDuringCores), clients, fmt.Sprintf("%.2f", l.DatabaseCores)}
		}
		notice := "-"
		if len(run.NoticePointsMs) > 0 {
			notice = fmt.Sprintf("%.0f ms", run.NoticeMs.P50)
		}
		model := []string{"-", "-", "-", "-"}
		if m := perRun[run.Run]; m != nil {
			model = []string{fmt.Sprintf("%.0f", m.Capacity.AdmitPerS), fmt.Sprintf("%.0f", m.Capacity.DecidePerS),
				cmp.Or(onset[run.Run], "-"), m.Network.SharedEvery.String()}
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(run.Run), strconv.FormatUint(run.Seed, 10), fmt.Sprintf("%.2f", l.Average1m),
			load[0], load[1], load[2], load[3], load[4], strconv.FormatInt(run.Crash.Attempts, 10), lastBack(run), notice,
			model[0], model[1], model[2], model[3], note})
	}
	for _, run := range r.Real {
		note := loadNote(run.Load)
		if e := perRunErr[run.Run]; e != "" {
			note = strings.TrimSpace(note + " not fitted alone: " + e)
		}
		row(run, note)
	}
	for _, run := range r.Replaced {
		row(run, "disturbed: replaced, not used")
	}
	return t
}

// lastBack is when a run's last client was back, or how far its storm got.
func lastBack(run *measured.Run) string {
	if o := run.Outcome; o != nil && !o.Converged {
		return fmt.Sprintf("%s: %d of %d back by %s", o.Outcome, o.Connected, run.Crash.Clients, fmtMs(o.HorizonMs))
	}
	return fmtMs(run.Crash.ConvergenceMs)
}

// loadNote says what the machine's load made of a run.
func loadNote(l measured.Load) string {
	switch {
	case l.Disturbed:
		return "DISTURBED"
	case !l.Measured:
		return "load unknown"
	case l.WaitedMs > 0:
		return fmt.Sprintf("waited %s for quiet", fmtMs(l.WaitedMs))
	}
	return "quiet"
}

func (r *Report) checksTable() results.Table {
	t := results.Table{Title: fmt.Sprintf("lab checks: %d of %d pass", len(r.Checks)-r.failedChecks(), len(r.Checks)),
		Header: []string{"run", "kind", "check", "expected", "observed", "ok"}}
	for _, c := range r.Checks {
		t.Rows = append(t.Rows, []string{strconv.Itoa(c.Run), c.Kind, c.Name, c.Expected, c.Observed, passFail(c.Pass)})
	}
	return t
}

func (r *Report) failedChecks() int {
	n := 0
	for _, c := range r.Checks {
		if !c.Pass {
			n++
		}
	}
	return n
}

// fitTable is the fitted sections and what they come from.
func fitTable(f *fit.Fit, runs int) results.Table {
	m := f.Model
	t := results.Table{Title: fmt.Sprintf("fit on %d run%s (calibration.json's fit.method says how)", runs, plural(runs)), Header: []string{"section", "fitted"}}
	add := func(section, what string) { t.Rows = append(t.Rows, []string{section, what}) }
	admit := fmt.Sprintf("admit %.1f/s (mean claim gap while claims waited %s, %d gaps)", m.Capacity.AdmitPerS, fmtMs(f.Claims.GapMs), f.Claims.Gaps)
	if m.Capacity.DecisionShare > 0 {
		admit = fmt.Sprintf("admit %.1f/s and decision_share %v (the claims beside decisions line below; the mean claim gap while claims waited %s, %d gaps, is %.1f/s)",
			m.Capacity.AdmitPerS, m.Capacity.DecisionShare, fmtMs(f.Claims.GapMs), f.Claims.Gaps, f.Claims.AdmitPerS)
	}
	decide := fmt.Sprintf("decide %.0f/s (per run", m.Capacity.DecidePerS)
	if m.Capacity.ClaimShare > 0 {
		decide = fmt.Sprintf("decide %.0f/s and claim_share %v (the decisions beside claims line below; the first wave's %.0f/s, per run",
			m.Capacity.DecidePerS, m.Capacity.ClaimShare, f.FirstWave.DecidePerS)
	}
	add("capacity", fmt.Sprintf("%s; %s %s)", admit, decide, waveList(f.FirstWave, func(w fit.WaveRun) string {
		return fmt.Sprintf("%.0f (wave %.0f, backlog %.0f)", w.DecidePerS, w.WavePerS, w.BacklogPerS)
	})))
	if f.Claims.WastedGaps > 0 {
		add("", fmt.Sprintf("wasted claims %.1f/s (mean gap %s, %d gaps; 0: too few to fit, as admit)", f.Claims.WastedPerS, fmtMs(f.Claims.WastedGapMs), f.Claims.WastedGaps))
	}
	if k := f.Claims.Contention; k != nil {
		taken := "modelled: capacity.admit_per_s = 1 / the base, decision_share = the slope"
		if _, _, ok := k.Share(); !ok {
			taken = "not modelled (a term is not positive): the simulator's claims take 1/admit_per_s, the mean gap's, however many are decided beside them"
		}
		add("", fmt.Sprintf("claims beside decisions: a claim %s + %s for each handshake decided beside it (least squares over %d busy windows of %g ms, %.1f decisions per claim on average); %s",
			fmtMs(k.BaseMs), fmtMs(k.PerDecisionMs), k.Windows, float64(fit.LineWindowMs), k.MeanDecisions, taken))
	}
	if d := f.Decisions; d != nil {
		add("", fmt.Sprintf("decisions beside claims: a decision %s + %s for each claim ending beside it (least squares over %d busy windows of %g ms, %s a decision and %.2f claims per decision on average); measured, not modelled: the model's decisions take 1/decide_per_s, the lower bounds', however many claims end beside them",
			fmtMs(d.BaseMs), fmtMs(d.PerClaimMs), d.Windows, float64(fit.LineWindowMs), fmtMs(d.MeanGapMs), d.MeanClaims))
	}
	add("first wave", fmt.Sprintf("first attempts decided from %s after the kill (per run: onset %s)", fmtMs(f.FirstWave.OnsetMs),
		waveList(f.FirstWave, func(w fit.WaveRun) string { return fmt.Sprintf("%s, span %s", fmtMs(w.OnsetMs), fmtMs(w.SpanMs)) })))
	l := f.Legs
	add("legs", fmt.Sprintf("retries out p50 %s p90 %s (their lateness p50 %s p90 %s), back p50 %s p90 %s; first attempts back p50 %s (%d retries, %d first)",
		fmtMs(l.RetryOutMs.P50), fmtMs(l.RetryOutMs.P90), fmtMs(l.RetryLagMs.P50), fmtMs(l.RetryLagMs.P90),
		fmtMs(l.RetryBackMs.P50), fmtMs(l.RetryBackMs.P90), fmtMs(l.FirstBackMs.P50), l.Retries, l.Firsts))
	add("", fmt.Sprintf("fitted out %s, back %s, first back %s", describeDistPtr(m.Network.OutLeg),
		describeDistPtr(m.Network.BackLeg), describeDistPtr(m.Network.FirstBackLeg)))
	add("server", fmt.Sprintf("server_time %s (admitted latency - own out leg - time at the survivor - median back: p50 %s p90 %s)",
		describeDist(m.Network.ServerTime), fmtMs(l.ServerTimeMs.P50), fmtMs(l.ServerTimeMs.P90)))
	add("shared", fmt.Sprintf("shared_every %v (per run: %s ms)", m.Network.SharedEvery, fmtList(f.Shared.RunsMs)))
	if g := f.Lab.GoawayLegsMs; len(g) == measured.NoticePoints {
		add("goaways", fmt.Sprintf("network.goaway, from the drained gateway's goaway_sent line to the client's session's end: p2 %s, p50 %s, p98 %s",
			fmtMs(g[2]), fmtMs(g[50]), fmtMs(g[98])))
	}
	if g := f.Lab.GoneMs; len(g) == measured.NoticePoints {
		add("departures", fmt.Sprintf("network.gone, from a client's deadline to the survivor's abandoned line for it: p2 %s, p50 %s, p98 %s",
			fmtMs(g[2]), fmtMs(g[50]), fmtMs(g[98])))
	}
	return t
}

// sectionsNote says which sections a model simulated.
func sectionsNote(sm Simulation) string {
	var parts []string
	if n := len(sm.Sections); n > 1 {
		parts = append(parts, fmt.Sprintf("%d sets of sections in turn", n))
	}
	if len(sm.Runs) > 0 {
		parts = append(parts, fmt.Sprintf("fitted on runs %v, each alone", sm.Runs))
	}
	if sm.Borrowed != "" {
		parts = append(parts, sm.Borrowed)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

func metricsTable(sm Simulation) results.Table {
	t := results.Table{
		Title:  fmt.Sprintf("%s model against the real runs%s: sim 95%% interval, the central 95%% of replications; twin, the replications with the real runs' seeds", sm.Role, sectionsNote(sm)),
		Header: []string{"metric", "real", "sim mean", "sim 95% interval", "rel error", "inside", "twin", "twin error", "real pct"},
	}
	for _, m := range sm.Metrics {
		t.Rows = append(t.Rows, []string{m.Metric, fmtValue(m.Real, m.Unit), fmtValue(m.SimMean, m.Unit),
			"[" + fmtValue(m.SimLo, m.Unit) + ", " + fmtValue(m.SimHi, m.Unit) + "]", fmtRel(m.RelError), yesNo(m.Inside),
			fmtValue(m.SimTwin, m.Unit), fmtRel(m.TwinRelError), fmt.Sprintf("%.0f%%", 100*m.RealPercentile)})
	}
	return t
}

func seriesTable(sm Simulation) results.Table {
	t := results.Table{Title: fmt.Sprintf("%s model, window by window", sm.Role),
		Header: []string{"series per window", "inside spread", "inside 95% band", "W1", "KS", "W1 p", "real/sim sd"}}
	for _, c := range sm.Series {
		row := []string{c.Series, fmt.Sprintf("%d/%d", c.WindowsInsideEnvelope, c.Windows), fmt.Sprintf("%d/%d", c.WindowsInside, c.Windows), "-", "-", "-", "-"}
		if c.Pass != nil {
			row[3], row[4], row[5], row[6] = fmt.Sprintf("%.0f ms", c.W1Ms), fmt.Sprintf("%.3f", c.KS), fmt.Sprintf("%.2f", c.W1P), fmtRatio(c.SpreadRatio)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// modelsTable sets the models side by side on what decides agreement:
// attempts, the last reconnect and the windows, or, for a storm that did
// not end, its outcome and rates.
func (r *Report) modelsTable() results.Table {
	if compare.Converged(r.Real) {
		t := results.Table{Title: "models compared: sim mean against real mean; per window, the windows inside the spread",
			Header: []string{"model", "", "attempts", "last reconnect", "attempts/window", "accepts/window"}}
		for _, sm := range r.Simulations {
			t.Rows = append(t.Rows, []string{string(sm.Role), checkedWord(sm.Role), metricVs(sm, "attempts"), metricVs(sm, "convergence_ms"),
				seriesInside(sm, "attempts"), seriesInside(sm, "accepts")})
		}
		return t
	}
	t := results.Table{Title: "models compared over the horizon (a real storm did not end: its outcome and its rates, sim mean against real mean)",
		Header: []string{"model", "", "outcome (real; sim)", "useful claims/s", "wasted claims/s", "attempts/s"}}
	for _, sm := range r.Simulations {
		outcome := "-"
		if o := sm.Outcome; o != nil {
			outcome = o.Agreement(string(sm.Role)).Observed
		}
		t.Rows = append(t.Rows, []string{string(sm.Role), checkedWord(sm.Role), outcome, metricVs(sm, "useful_per_s"), metricVs(sm, "wasted_per_s"), metricVs(sm, "attempts_per_s")})
	}
	return t
}

func checkedWord(r Role) string {
	if r.Checked() {
		return "checked"
	}
	return "shown"
}

func (r *Report) agreementTable() results.Table {
	t := results.Table{Title: "agreement: the checked models decide the verdict, the others are shown",
		Header: []string{"model", "", "metric", "criterion", "observed", "verdict"}}
	role := map[string]Role{}
	for _, sm := range r.Simulations {
		role[string(sm.Role)] = sm.Role
	}
	for _, a := range r.Agreement {
		t.Rows = append(t.Rows, []string{a.Model, checkedWord(role[a.Model]), a.Name, a.Criterion, a.Observed, passFail(a.Pass)})
	}
	return t
}

// WriteSummary prints the report's summary for a terminal, about 20
// lines: the storm, the runs and their load, the lab checks, the fit in
// one line, each model beside the real runs, which models are checked,
// and the verdict with its first reasons. Everything else is in the
// page, report.html.
func (r *Report) WriteSummary(w io.Writer) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "%s: %d clients, policy %s, %d real run%s from seed %d, %d replications per model\n",
		safetext.Terminal(r.Name), r.Clients, safetext.Terminal(r.Policy), len(r.Real), plural(len(r.Real)), r.Seed, replications(r))
	if len(r.Models) > 0 {
		fmt.Fprintf(b, "predicted: the sections of %s, fitted on another storm\n", safetext.Terminal(strings.Join(r.Models, ", ")))
	}
	if z := r.Sized; z != nil {
		fmt.Fprintln(b, z.Line())
	}
	fmt.Fprintln(b, r.loadLine())
	fmt.Fprintf(b, "lab checks: %d of %d pass\n", len(r.Checks)-r.failedChecks(), len(r.Checks))
	if r.FitError != "" {
		fmt.Fprintf(b, "not fitted on these runs: %s\n", safetext.Terminal(r.FitError))
	} else {
		m, l := r.Fit.Model, r.Fit.Legs
		fmt.Fprintf(b, "fit: claims %.0f/s, decisions %.0f/s, first attempts decided from %s after the kill, retries out %s and back %s (p50), shared every %v\n",
			m.Capacity.AdmitPerS, m.Capacity.DecidePerS, fmtMs(r.Fit.FirstWave.OnsetMs), fmtMs(l.RetryOutMs.P50), fmtMs(l.RetryBackMs.P50), m.Network.SharedEvery)
	}
	fmt.Fprintln(b)
	models := r.modelsTable()
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(models.Header, "\t")+"\t")
	for _, row := range models.Rows {
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	tw.Flush()
	fmt.Fprintln(b)
	fmt.Fprintln(b, r.checkedLine())
	if f := r.Failures(); len(f) > 0 {
		fmt.Fprintln(b, "FAIL:")
		const shown = 4
		for _, reason := range f[:min(len(f), shown)] {
			fmt.Fprintf(b, "  %s\n", safetext.Terminal(reason))
		}
		if len(f) > shown {
			fmt.Fprintf(b, "  and %d more (report.html)\n", len(f)-shown)
		}
	} else {
		fmt.Fprintln(b, "pass: every lab check and every agreement of the checked models, on runs no other work disturbed")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// loadLine says in one line how the machine was during the runs.
func (r *Report) loadLine() string {
	if len(r.Real) == 0 {
		return "no real run"
	}
	var disturbed []string
	lo, hi, most := math.Inf(1), 0.0, 0.0
	for _, run := range r.Real {
		l := run.Load
		lo, hi = math.Min(lo, l.Average1m), math.Max(hi, l.Average1m)
		most = math.Max(most, math.Max(l.OtherBeforeCores, l.OtherDuringCores))
		if l.Disturbed {
			disturbed = append(disturbed, strconv.Itoa(run.Run))
		}
	}
	s := fmt.Sprintf("load: 1-minute average %.2f", lo)
	if hi > lo {
		s = fmt.Sprintf("load: 1-minute average %.2f-%.2f", lo, hi)
	}
	s += fmt.Sprintf(", other work at most %.2f cores (threshold %.2f)", most, r.DisturbedCores)
	switch {
	case len(disturbed) > 0:
		s += ": runs " + strings.Join(disturbed, ", ") + " DISTURBED"
	default:
		s += ": quiet"
	}
	if n := len(r.Replaced); n > 0 {
		s += fmt.Sprintf("; %d disturbed run%s replaced", n, plural(n))
	}
	return s
}

// checkedLine names the models that decide the verdict and those shown.
func (r *Report) checkedLine() string {
	var checked, shown []string
	for _, sm := range r.Simulations {
		if sm.Role.Checked() {
			checked = append(checked, string(sm.Role))
		} else {
			shown = append(shown, string(sm.Role))
		}
	}
	s := "checked (decide the verdict): " + strings.Join(checked, " and ")
	if len(checked) == 0 {
		s = "checked: none"
	}
	if len(shown) > 0 {
		s += "; shown: " + strings.Join(shown, ", ")
	}
	return s
}

func waveList(w fit.FirstWave, f func(fit.WaveRun) string) string {
	parts := make([]string, len(w.Runs))
	for i, r := range w.Runs {
		parts[i] = f(r)
	}
	return strings.Join(parts, "; ")
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

// metricVs is "sim vs real (relative error)" for a metric, in its unit.
func metricVs(sm Simulation, metric string) string {
	for _, m := range sm.Metrics {
		if m.Metric == metric {
			if m.Unit == "ms" {
				return fmt.Sprintf("%s vs %s (%s)", fmtMs(m.SimMean), fmtMs(m.Real), fmtRel(m.RelError))
			}
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
