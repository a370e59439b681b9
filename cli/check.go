package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"stormsim/budget"
	"stormsim/check"
	"stormsim/config"
	"stormsim/internal/human"
	"stormsim/internal/safetext"
	"stormsim/policies"
	"stormsim/results"
	"stormsim/runner"
	"stormsim/solve"
	"stormsim/sweep"
)

// cmdCheck is stormsim check.
var cmdCheck = &command{
	name:    "check",
	summary: "run configs and test thresholds and baselines, for CI: exit 0 pass, 1 fail",
	usage: "[-c FILE | FILE...] [--check 'METRIC OP NUMBER[unit]']... [--baseline OLD.json | --baseline-dir DIR] [--tolerance 5%] [--tolerance-abs 1ms,1,1/s] [--update-baseline]\n" +
		"       [--set path=value]... [--policy label]... [--replications R] [--workers N] [--max-memory SIZE] [--max-time D]",
	run:       runCheck,
	takesArgs: true,
}

// checkFlags are check's own flags.
type checkFlags struct {
	files          []string
	checks         []string
	baseline       string
	baselineDir    string
	tolerance      string
	toleranceAbs   string
	updateBaseline bool
}

// checkTarget is one config file to check, validated before anything runs.
type checkTarget struct {
	file      string
	scenario  *config.ScenarioFile // nil for a sweep file
	specs     []policies.Spec      // the policies --policy selects
	plan      *sweep.Plan          // the sweep file's, checked without running
	problem   *solve.Problem       // the solve file's
	solveBase *solve.Document      // its baseline
	checks    []check.Check        // expanded to one per policy
	baseline  string               // baseline file, "" for none
	base      *results.Document
	estimate  budget.Estimate
}

// checkRun is one stormsim check: its flags, what they ask for once
// validated, and the tally of checks passed and failed.
type checkRun struct {
	e              *env
	args           []string // as given, for the command that accepts a drift
	cf             checkFlags
	sf             scenarioFlags
	rf             runFlags
	tolerance      check.Tolerance
	flagChecks     []check.Check // from --check
	limits         budget.Limits
	targets        []*checkTarget
	passed, failed int
}

func runCheck(e *env, cmd *command, args []string) error {
	c := &checkRun{e: e, args: args}
	if done, err := c.parseFlags(cmd, args); done || err != nil {
		return err
	}
	// Everything is validated before anything runs.
	for _, file := range c.cf.files {
		t, err := c.target(file)
		if err != nil {
			return badInput(err)
		}
		c.targets = append(c.targets, t)
	}
	ctx, stopSignals := interruptible()
	defer stopSignals()
	for _, t := range c.targets {
		if t.plan != nil {
			line, ok := probeSweep(t, c.rf)
			c.tally(ok, line)
			continue
		}
		if t.problem != nil {
			if err := c.checkSolve(ctx, t); err != nil {
				return err
			}
			continue
		}
		if err := c.checkScenario(ctx, t); err != nil {
			return err
		}
	}
	if c.failed > 0 {
		return &exitError{code: ExitCheckFailed, err: fmt.Errorf("stormsim check: %d of %d checks failed", c.failed, c.passed+c.failed)}
	}
	return nil
}

// parseFlags reads and validates the flags: done is true when help was
// asked for.
func (c *checkRun) parseFlags(cmd *command, args []string) (done bool, err error) {
	fs := flagSet(cmd.name)
	cf := &c.cf
	fs.StringArrayVarP(&cf.files, "config", "c", nil, "scenario or sweep config `FILE` (repeatable; files may also follow the flags)")
	fs.StringArrayVar(&c.sf.sets, "set", nil, "override a config key with a YAML `path=value` (repeatable)")
	fs.StringArrayVar(&c.sf.policies, "policy", nil, "run only the policy with this `label` (repeatable)")
	c.rf.add(fs)
	c.rf.addMaxTime(fs)
	fs.StringArrayVar(&cf.checks, "check", nil, "a threshold `'METRIC OP NUMBER[unit]'`, e.g. 'results[full].convergence_ms < 6s' (repeatable; adds to the config's checks:)")
	fs.StringVar(&cf.baseline, "baseline", "", "compare every metric (and every series, if it holds them) with the saved result `OLD.json`")
	fs.StringVar(&cf.baselineDir, "baseline-dir", "", "compare each FILE.yaml with `DIR`/FILE.json (for many configs)")
	fs.StringVar(&cf.tolerance, "tolerance", "0", "largest relative drift from the baseline, as `5%` or 0.05; 0 asks for identical values")
	fs.StringVar(&cf.toleranceAbs, "tolerance-abs", "", "changes too small to drift, per unit: `FLOORS` such as 1ms,1,1/s,1% (a time, a count, a rate, a fraction); default 1ms,1,1/s with a --tolerance, none without; 0 for none")
	fs.BoolVar(&cf.updateBaseline, "update-baseline", false, "write the baselines from this run instead of comparing (series left out)")
	if done, err := parse(c.e, cmd, fs, args); done || err != nil {
		return done, err
	}
	cf.files = append(cf.files, fs.Args()...)
	if err := c.rf.check(cmd.name); err != nil {
		return false, err
	}
	if c.tolerance, err = cf.validate(); err != nil {
		return false, err
	}
	for _, text := range cf.checks {
		chk, err := check.Parse(text)
		if err != nil {
			return false, usageErrorf("--check %s: %v", strconv.Quote(text), err)
		}
		c.flagChecks = append(c.flagChecks, chk)
	}
	c.limits, err = c.rf.limits(cmd.name)
	return false, err
}

// tally counts a verdict and prints its line.
func (c *checkRun) tally(ok bool, line string) {
	if ok {
		fmt.Fprintln(c.e.stdout, "PASS "+line)
		c.passed++
	} else {
		fmt.Fprintln(c.e.stdout, "FAIL "+line)
		c.failed++
	}
}

// suffix names t's file after each of its lines when several files are
// checked.
func (c *checkRun) suffix(t *checkTarget) string {
	if len(c.targets) == 1 {
		return ""
	}
	return " [" + t.file + "]"
}

// checkScenario runs t's scenario, evaluates its checks and compares it
// with its baseline (or writes the baseline).
func (c *checkRun) checkScenario(ctx context.Context, t *checkTarget) error {
	warnLong(c.e.stderr, "check", t.estimate, c.limits)
	stop := c.e.watchMemory(c.limits, t.estimate)
	s := t.scenario.Scenario
	doc := results.New(s, t.scenario.Hash(), t.scenario.Echo())
	err := runner.Build(doc, s, t.specs, runner.Options{Workers: c.rf.workers, Context: ctx})
	stop()
	if errors.Is(err, runner.ErrStopped) {
		return interruptedf("stormsim check: interrupted while running %s; %d check%s passed and %d failed before", t.file, c.passed, plural(c.passed, "", "s"), c.failed)
	}
	if err != nil {
		return err
	}
	warnHorizon(c.e.stderr, doc)
	for _, chk := range t.checks {
		o := chk.Eval(doc)
		fmt.Fprintln(c.e.stdout, o.String()+c.suffix(t))
		if o.Pass() {
			c.passed++
		} else {
			c.failed++
		}
	}
	switch {
	case t.baseline == "":
		return nil
	case c.cf.updateBaseline:
		return c.writeBaseline(t, doc)
	}
	if c.reportBaseline(t, doc, c.suffix(t)) {
		c.passed++
	} else {
		c.failed++
	}
	return nil
}

// writeBaseline saves doc, without its series, as t's baseline.
func (c *checkRun) writeBaseline(t *checkTarget, doc *results.Document) error {
	if err := check.DropSeries(doc); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(t.baseline), 0o755); err != nil {
		return err
	}
	if err := doc.WriteJSON(t.baseline); err != nil {
		return err
	}
	_, err := fmt.Fprintf(c.e.stdout, "wrote baseline %s%s\n", t.baseline, c.suffix(t))
	return err
}

func (cf *checkFlags) validate() (tol check.Tolerance, err error) {
	switch {
	case len(cf.files) == 0:
		return tol, usageErrorf("stormsim check: give a config: -c FILE or FILE...")
	case cf.baseline != "" && cf.baselineDir != "":
		return tol, usageErrorf("stormsim check: give --baseline or --baseline-dir, not both")
	case cf.baseline != "" && len(cf.files) > 1:
		return tol, usageErrorf("stormsim check: --baseline names one result for one config; use --baseline-dir DIR with several configs")
	case cf.updateBaseline && cf.baseline == "" && cf.baselineDir == "":
		return tol, usageErrorf("stormsim check: --update-baseline needs --baseline FILE or --baseline-dir DIR")
	}
	if tol.Relative, err = check.ParseTolerance(cf.tolerance); err != nil {
		return tol, usageErrorf("stormsim check: %v", err)
	}
	switch {
	case cf.toleranceAbs != "":
		if tol.Floors, err = check.ParseFloors(cf.toleranceAbs); err != nil {
			return tol, usageErrorf("stormsim check: %v", err)
		}
	case tol.Relative > 0:
		tol.Floors = check.DefaultFloors
	}
	return tol, nil
}

// target loads and validates one file: a sweep file's plan, or the
// scenario with its overrides, every check's metric name, and the
// baseline.
func (c *checkRun) target(file string) (*checkTarget, error) {
	t := &checkTarget{file: file}
	doc, err := config.LoadDocument(file, nil)
	if err != nil {
		return nil, err
	}
	if doc.HasKey("axes") {
		if t.plan, err = sweep.Open(file, c.rf.replications); err != nil {
			return t, err
		}
		if err := t.plan.Override(c.sf.sets); err != nil {
			return t, err
		}
		return t, t.plan.Check(nil)
	}
	if doc.HasKey("vary") {
		return c.solveTarget(t)
	}
	for _, set := range c.rf.sets(c.sf.sets) {
		if err := doc.SetArg(set); err != nil {
			return nil, err
		}
	}
	if t.scenario, err = doc.ScenarioFile(); err != nil {
		return nil, err
	}
	s := t.scenario.Scenario
	if t.specs, err = runner.SelectPolicies(s, c.sf.policies); err != nil {
		return nil, err
	}
	t.estimate = budget.Run(s, t.specs, c.limits, c.rf.workers)
	if err := c.rf.bound(t.estimate, c.limits, s, doc); err != nil {
		return nil, err
	}
	if err := t.addChecks(doc, c.flagChecks); err != nil {
		return nil, err
	}
	t.baseline = c.cf.baselineFor(file)
	if len(t.checks) == 0 && t.baseline == "" {
		return nil, &config.Error{Where: file, Problem: "nothing to check: add checks: to the config, or give --check or --baseline"}
	}
	if t.baseline != "" && !c.cf.updateBaseline {
		if t.base, err = check.ReadDocument(t.baseline); err != nil {
			flag := "--baseline"
			if c.cf.baselineDir != "" {
				flag = "--baseline-dir"
			}
			return nil, fmt.Errorf("%s: %v (write it with --update-baseline)", flag, err)
		}
	}
	return t, nil
}

// baselineFor is the baseline file of config file, "" for none.
func (cf *checkFlags) baselineFor(file string) string {
	if cf.baselineDir != "" {
		return filepath.Join(cf.baselineDir, strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))+".json")
	}
	return cf.baseline
}

// addChecks validates and adds the checks of t's file, each located at its
// line in doc, and then those of --check.
func (t *checkTarget) addChecks(doc *config.Document, flagChecks []check.Check) error {
	cat := results.NewCatalog(t.scenario.Scenario, t.specs)
	for i, text := range t.scenario.Checks {
		path := fmt.Sprintf("checks[%d]", i)
		c, err := check.Parse(text)
		if err == nil {
			err = t.add(cat, c)
		}
		if err != nil {
			return &config.Error{Where: doc.Where(path), Path: path, Problem: err.Error()}
		}
	}
	for _, c := range flagChecks {
		if err := t.add(cat, c); err != nil {
			return fmt.Errorf("--check %s: %w", strconv.Quote(c.Text), err)
		}
	}
	return nil
}

// probeSweep runs a sweep file's corner points (each axis at its first
// and last value) with at most 2 replications, and reports whether every
// charted metric has a value at one of them at least: a sweep is tested
// without running its whole grid.
func probeSweep(t *checkTarget, rf runFlags) (line string, ok bool) {
	corners := t.plan.Corners()
	reps := min(t.plan.Replications, 2)
	head := fmt.Sprintf("%s: sweep of %s point%s x %d replication%s, every point valid; its %d corner point%s run with %d replication%s",
		t.file, human.Count(int64(t.plan.Size)), plural(t.plan.Size, "", "s"), t.plan.Replications, plural(t.plan.Replications, "", "s"),
		len(corners), plural(len(corners), "", "s"), reps, plural(reps, "", "s"))
	partial, err := t.plan.Probe(corners, reps, rf.workers)
	if err != nil {
		return head + ": " + err.Error(), false
	}
	if len(partial) > 0 {
		return head + ", every metric has data (" + strings.Join(partial, ", ") + ")", true
	}
	return head + ", every metric has data", true
}

// add validates c's metric against the catalog and adds it, once per
// policy when it names none.
func (t *checkTarget) add(cat results.Catalog, c check.Check) error {
	if err := cat.Check(c.Metric); err != nil {
		return err
	}
	if c.Metric.Policy != "" {
		t.checks = append(t.checks, c)
		return nil
	}
	for _, label := range cat.Labels {
		t.checks = append(t.checks, c.ForPolicy(label))
	}
	return nil
}

// Drift reports: at most reportedDrifts drift lines (the largest), and as
// many lines of config keys changed.
const reportedDrifts = 10

// reportBaseline prints the baseline verdict: the config keys that differ
// from the baseline's, the largest drifts and the command that accepts
// them. It reports whether the run is within tolerance.
func (c *checkRun) reportBaseline(t *checkTarget, doc *results.Document, suffix string) bool {
	w := c.e.stdout
	cmp := check.Compare(t.base, doc, c.tolerance)
	within := strconv.FormatFloat(c.tolerance.Relative*100, 'f', -1, 64) + "%"
	if f := c.tolerance.Floors.String(); f != "" {
		within += " (or " + f + ")"
	}
	switch {
	case !cmp.Drifted() && cmp.SeriesCompared == 0:
		fmt.Fprintf(w, "PASS baseline %s: %d metrics within %s%s\n", t.baseline, cmp.Compared, within, suffix)
	case !cmp.Drifted():
		fmt.Fprintf(w, "PASS baseline %s: %d metrics and %d series within %s%s\n", t.baseline, cmp.Compared, cmp.SeriesCompared, within, suffix)
	case cmp.SeriesCompared == 0:
		fmt.Fprintf(w, "FAIL baseline %s: %d of %d metrics drifted beyond %s%s\n", t.baseline, len(cmp.Drifts), cmp.Compared, within, suffix)
	default:
		fmt.Fprintf(w, "FAIL baseline %s: %d of %d metrics and %d of %d series drifted beyond %s%s\n",
			t.baseline, len(cmp.Drifts), cmp.Compared, len(cmp.SeriesDrifts), cmp.SeriesCompared, within, suffix)
	}
	if cmp.Drifted() {
		changes := check.ConfigChanges(t.base.Config, doc.Config)
		for i, ch := range changes {
			if i == reportedDrifts {
				fmt.Fprintf(w, "  config: and %d more keys\n", len(changes)-i)
				break
			}
			fmt.Fprintf(w, "  config: %s\n", safetext.Terminal(ch.String()))
		}
		if len(changes) == 0 && t.base.ConfigHash == doc.ConfigHash {
			fmt.Fprintf(w, "  config: the baseline's (%s): the model changed, in %s (the baseline's by %s)\n",
				doc.ConfigHash, safetext.Terminal(doc.Tool), safetext.Terminal(t.base.Tool))
		}
		lines, metrics, series := cmp.Worst(reportedDrifts)
		for _, l := range lines {
			fmt.Fprintf(w, "  drift %s\n", l)
		}
		if metrics+series > 0 {
			fmt.Fprintf(w, "  and %d more: %d metric%s and %d series\n", metrics+series, metrics, plural(metrics, "", "s"), series)
		}
		fmt.Fprintf(w, "  if the change is meant, accept it: %s\n", acceptCommand(c.args, t.base))
	}
	if len(cmp.New) > 0 {
		fmt.Fprintf(w, "  note: %d metrics are not in the baseline (first: %s); refresh it with --update-baseline\n", len(cmp.New), cmp.New[0])
	}
	if len(cmp.NewSeries) > 0 {
		fmt.Fprintf(w, "  note: %d series are not in the baseline (first: %s); refresh it with this run's result (stormsim run --format json)\n", len(cmp.NewSeries), cmp.NewSeries[0])
	}
	return !cmp.Drifted()
}

// acceptCommand is the command that makes this run the baseline: this
// one with --update-baseline. A baseline that holds series gets a result
// instead, since --update-baseline keeps none.
func acceptCommand(args []string, base *results.Document) string {
	parts := []string{"stormsim", "check"}
	for _, a := range args {
		parts = append(parts, shellQuote(a))
	}
	cmd := strings.Join(append(parts, "--update-baseline"), " ")
	if slices.ContainsFunc(check.DocumentSeries(base), func(s results.Series) bool { return len(s.Values) > 0 }) {
		cmd += " (it keeps no series; stormsim run -c FILE --format json > BASELINE keeps them)"
	}
	return cmd
}

// solveTarget loads a solve file, as check runs it (its check:
// replications), and its baseline.
func (c *checkRun) solveTarget(t *checkTarget) (*checkTarget, error) {
	var err error
	t.problem, err = solve.Load(t.file, solve.Options{Replications: c.rf.replications, Sets: c.sf.sets, ForCheck: true})
	if err != nil {
		return nil, err
	}
	est := budget.Sweep(t.problem.Shape(), c.limits, c.rf.workers)
	if err := est.CheckSweep(c.limits, -1, t.problem.Replications, ""); err != nil {
		return nil, solveOverBudget(err, t.problem, c.rf)
	}
	t.estimate = est
	t.baseline = c.cf.baselineFor(t.file)
	if t.baseline != "" && !c.cf.updateBaseline {
		if t.solveBase, err = solve.ReadDocument(t.baseline); err != nil {
			return nil, fmt.Errorf("--baseline-dir: %v (write it with --update-baseline)", err)
		}
	}
	return t, nil
}

// checkSolve runs a solve file in memory. Without a baseline it passes
// when every case has an answer; with one, when the answers and every
// probe match it (or it writes the baseline).
func (c *checkRun) checkSolve(ctx context.Context, t *checkTarget) error {
	stop := c.e.watchMemory(c.limits, t.estimate)
	doc, _, err := t.problem.Run(solve.RunOptions{Workers: c.rf.workers, Context: ctx})
	stop()
	var ie *solve.InterruptedError
	if errors.As(err, &ie) {
		return &exitError{code: ExitInterrupted, err: fmt.Errorf("stormsim check: interrupted while solving %s; %d checks passed and %d failed before", t.file, c.passed, c.failed)}
	}
	if err != nil {
		return err
	}
	what := fmt.Sprintf("%s: solve of %d case%s, %d probes x %d replications", t.file, len(doc.Cases), plural(len(doc.Cases), "", "s"), len(doc.Probes), doc.Replications)
	switch {
	case t.baseline == "":
		c.tally(doc.Status == "answer", what+": "+doc.Status)
		return nil
	case c.cf.updateBaseline:
		if err := os.MkdirAll(filepath.Dir(t.baseline), 0o755); err != nil {
			return err
		}
		if err := doc.Write(t.baseline); err != nil {
			return err
		}
		_, err := fmt.Fprintf(c.e.stdout, "wrote baseline %s%s\n", t.baseline, c.suffix(t))
		return err
	}
	cmp := solve.Compare(t.solveBase, doc, c.tolerance.Relative)
	tol := strconv.FormatFloat(c.tolerance.Relative*100, 'f', -1, 64) + "%"
	line := fmt.Sprintf("baseline %s: %d answer%s and %d probes", t.baseline, cmp.Cases, plural(cmp.Cases, "", "s"), cmp.Probes)
	if len(cmp.Drifts) == 0 {
		c.tally(true, line+" within "+tol+" ("+doc.Status+")"+c.suffix(t))
		return nil
	}
	c.tally(false, fmt.Sprintf("%s: %d differ beyond %s%s", line, len(cmp.Drifts), tol, c.suffix(t)))
	for _, d := range cmp.Drifts {
		fmt.Fprintf(c.e.stdout, "  drift %s\n", d)
	}
	return nil
}
