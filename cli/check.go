package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"stormsim/check"
	"stormsim/config"
	"stormsim/internal/budget"
	"stormsim/internal/human"
	"stormsim/policies"
	"stormsim/results"
	"stormsim/runner"
	"stormsim/sweep"
)

// cmdCheck is stormsim check.
var cmdCheck = &command{
	name:    "check",
	summary: "run configs and test thresholds and baselines, for CI: exit 0 pass, 1 fail",
	usage: "[-c FILE | FILE...] [--check 'METRIC OP NUMBER[unit]']... [--baseline OLD.json | --baseline-dir DIR] [--tolerance 5%] [--update-baseline]\n" +
		"       [--set path=value]... [--policy label]... [--replications R] [--workers N]",
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
	updateBaseline bool
}

// checkTarget is one config file to check, validated before anything runs.
type checkTarget struct {
	file     string
	scenario *config.ScenarioFile // nil for a sweep file
	specs    []policies.Spec      // the policies --policy selects
	plan     *sweep.Plan          // the sweep file's, checked without running
	checks   []check.Check        // expanded to one per policy
	baseline string               // baseline file, "" for none
	base     *results.Document
	estimate budget.Estimate
}

func runCheck(e *env, cmd *command, args []string) error {
	fs := flagSet(cmd.name)
	var cf checkFlags
	fs.StringArrayVarP(&cf.files, "config", "c", nil, "scenario or sweep config `FILE` (repeatable; files may also follow the flags)")
	var sf scenarioFlags
	fs.StringArrayVar(&sf.sets, "set", nil, "override a config key with a YAML `path=value` (repeatable)")
	fs.StringArrayVar(&sf.policies, "policy", nil, "run only the policy with this `label` (repeatable)")
	var rf runFlags
	rf.add(fs)
	fs.StringArrayVar(&cf.checks, "check", nil, "a threshold `'METRIC OP NUMBER[unit]'`, e.g. 'results[full].convergence_ms < 6s' (repeatable; adds to the config's checks:)")
	fs.StringVar(&cf.baseline, "baseline", "", "compare every metric (and every series, if it holds them) with the saved result `OLD.json`")
	fs.StringVar(&cf.baselineDir, "baseline-dir", "", "compare each FILE.yaml with `DIR`/FILE.json (for many configs)")
	fs.StringVar(&cf.tolerance, "tolerance", "0", "largest relative drift from the baseline, as `5%` or 0.05; 0 asks for identical values")
	fs.BoolVar(&cf.updateBaseline, "update-baseline", false, "write the baselines from this run instead of comparing (series left out)")
	if done, err := parse(e, cmd, fs, args); done || err != nil {
		return err
	}
	cf.files = append(cf.files, fs.Args()...)
	if err := rf.check(cmd.name); err != nil {
		return err
	}
	tolerance, err := cf.validate()
	if err != nil {
		return err
	}
	var flagChecks []check.Check
	for _, text := range cf.checks {
		c, err := check.Parse(text)
		if err != nil {
			return usageErrorf("--check %s: %v", strconv.Quote(text), err)
		}
		flagChecks = append(flagChecks, c)
	}
	limits, err := rf.limits(cmd.name)
	if err != nil {
		return err
	}
	// Everything is validated before anything runs.
	var targets []*checkTarget
	for _, file := range cf.files {
		t, err := cf.target(file, sf, rf, flagChecks, limits)
		if err != nil {
			return badInput(err)
		}
		targets = append(targets, t)
	}
	suffix := func(t *checkTarget) string {
		if len(targets) == 1 {
			return ""
		}
		return " [" + t.file + "]"
	}
	ctx, stopSignals := interruptible()
	defer stopSignals()
	passed, failed := 0, 0
	for _, t := range targets {
		if t.plan != nil {
			if line, ok := probeSweep(t, rf); ok {
				fmt.Fprintln(e.stdout, "PASS "+line)
				passed++
			} else {
				fmt.Fprintln(e.stdout, "FAIL "+line)
				failed++
			}
			continue
		}
		stop := e.watchMemory(limits, t.estimate)
		s := t.scenario.Scenario
		doc := results.New(s, t.scenario.Hash(), t.scenario.Echo())
		err := runner.Build(doc, s, t.specs, runner.Options{Workers: rf.workers, Context: ctx})
		stop()
		if errors.Is(err, runner.ErrStopped) {
			return &exitError{code: ExitInterrupted, err: fmt.Errorf("stormsim check: interrupted while running %s; %d checks passed and %d failed before", t.file, passed, failed)}
		}
		if err != nil {
			return err
		}
		warnHorizon(e.stderr, doc)
		for _, c := range t.checks {
			o := c.Eval(doc)
			fmt.Fprintln(e.stdout, o.String()+suffix(t))
			if o.Pass() {
				passed++
			} else {
				failed++
			}
		}
		switch {
		case t.baseline == "":
		case cf.updateBaseline:
			if err := check.DropSeries(doc); err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(t.baseline), 0o755); err != nil {
				return err
			}
			if err := doc.WriteJSON(t.baseline); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "wrote baseline %s%s\n", t.baseline, suffix(t))
		default:
			if reportBaseline(e, t, doc, tolerance, suffix(t)) {
				passed++
			} else {
				failed++
			}
		}
	}
	if failed > 0 {
		return &exitError{code: ExitCheckFailed, err: fmt.Errorf("stormsim check: %d of %d checks failed", failed, passed+failed)}
	}
	return nil
}

func (cf *checkFlags) validate() (tolerance float64, err error) {
	switch {
	case len(cf.files) == 0:
		return 0, usageErrorf("stormsim check: give a config: -c FILE or FILE...")
	case cf.baseline != "" && cf.baselineDir != "":
		return 0, usageErrorf("stormsim check: give --baseline or --baseline-dir, not both")
	case cf.baseline != "" && len(cf.files) > 1:
		return 0, usageErrorf("stormsim check: --baseline names one result for one config; use --baseline-dir DIR with several configs")
	case cf.updateBaseline && cf.baseline == "" && cf.baselineDir == "":
		return 0, usageErrorf("stormsim check: --update-baseline needs --baseline FILE or --baseline-dir DIR")
	}
	tolerance, err = check.ParseTolerance(cf.tolerance)
	if err != nil {
		return 0, usageErrorf("stormsim check: %v", err)
	}
	return tolerance, nil
}

// target loads and validates one file: the scenario with its overrides,
// every check's metric name, and the baseline.
func (cf *checkFlags) target(file string, sf scenarioFlags, rf runFlags, flagChecks []check.Check, limits budget.Limits) (*checkTarget, error) {
	t := &checkTarget{file: file}
	doc, err := config.LoadDocument(file, nil)
	if err != nil {
		return nil, err
	}
	if doc.HasKey("axes") {
		t.plan, err = sweep.Load(file, rf.replications)
		return t, err
	}
	for _, set := range rf.sets(sf.sets) {
		if err := doc.SetArg(set); err != nil {
			return nil, err
		}
	}
	if t.scenario, err = doc.ScenarioFile(); err != nil {
		return nil, err
	}
	s := t.scenario.Scenario
	if t.specs, err = runner.SelectPolicies(s, sf.policies); err != nil {
		return nil, err
	}
	cat := results.NewCatalog(s, t.specs)
	t.estimate = budget.Run(s, t.specs, limits, rf.workers)
	if err := t.estimate.CheckRun(limits, s.Replications); err != nil {
		return nil, rf.overBudget(err, doc)
	}
	for i, text := range t.scenario.Checks {
		path := fmt.Sprintf("checks[%d]", i)
		c, err := check.Parse(text)
		if err == nil {
			err = t.add(cat, c)
		}
		if err != nil {
			return nil, &config.Error{Where: doc.Where(path), Path: path, Problem: err.Error()}
		}
	}
	for _, c := range flagChecks {
		if err := t.add(cat, c); err != nil {
			return nil, fmt.Errorf("--check %s: %w", strconv.Quote(c.Text), err)
		}
	}
	t.baseline = cf.baseline
	if cf.baselineDir != "" {
		t.baseline = filepath.Join(cf.baselineDir, strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))+".json")
	}
	if len(t.checks) == 0 && t.baseline == "" {
		return nil, &config.Error{Where: file, Problem: "nothing to check: add checks: to the config, or give --check or --baseline"}
	}
	if t.baseline != "" && !cf.updateBaseline {
		if t.base, err = check.ReadDocument(t.baseline); err != nil {
			flag := "--baseline"
			if cf.baselineDir != "" {
				flag = "--baseline-dir"
			}
			return nil, fmt.Errorf("%s: %v (write it with --update-baseline)", flag, err)
		}
	}
	return t, nil
}

// probeSweep runs a sweep file's corner points (each axis at its first
// and last value) with at most 2 replications, and reports whether every
// charted metric has a value at one of them at least: a sweep is tested
// without running its whole grid.
func probeSweep(t *checkTarget, rf runFlags) (line string, ok bool) {
	corners := t.plan.Corners()
	reps := min(t.plan.Replications, 2)
	head := fmt.Sprintf("%s: sweep of %s points x %d replications, every point valid; its %d corner points run with %d replication%s",
		t.file, human.Count(int64(t.plan.Size)), t.plan.Replications, len(corners), reps, plural(reps, "", "s"))
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

// reportBaseline prints the baseline verdict and its drifts; it reports
// whether the run is within tolerance.
func reportBaseline(e *env, t *checkTarget, doc *results.Document, tolerance float64, suffix string) bool {
	cmp := check.Compare(t.base, doc, tolerance)
	tol := strconv.FormatFloat(tolerance*100, 'f', -1, 64) + "%"
	switch {
	case !cmp.Drifted() && cmp.SeriesCompared == 0:
		fmt.Fprintf(e.stdout, "PASS baseline %s: %d metrics within %s%s\n", t.baseline, cmp.Compared, tol, suffix)
	case !cmp.Drifted():
		fmt.Fprintf(e.stdout, "PASS baseline %s: %d metrics and %d series within %s%s\n", t.baseline, cmp.Compared, cmp.SeriesCompared, tol, suffix)
	case cmp.SeriesCompared == 0:
		fmt.Fprintf(e.stdout, "FAIL baseline %s: %d of %d metrics drifted beyond %s%s\n", t.baseline, len(cmp.Drifts), cmp.Compared, tol, suffix)
	default:
		fmt.Fprintf(e.stdout, "FAIL baseline %s: %d of %d metrics and %d of %d series drifted beyond %s%s\n",
			t.baseline, len(cmp.Drifts), cmp.Compared, len(cmp.SeriesDrifts), cmp.SeriesCompared, tol, suffix)
	}
	for _, d := range cmp.Drifts {
		fmt.Fprintf(e.stdout, "  drift %s\n", d)
	}
	for _, d := range cmp.SeriesDrifts {
		fmt.Fprintf(e.stdout, "  drift %s\n", d)
	}
	if len(cmp.New) > 0 {
		fmt.Fprintf(e.stdout, "  note: %d metrics are not in the baseline (first: %s); refresh it with --update-baseline\n", len(cmp.New), cmp.New[0])
	}
	if len(cmp.NewSeries) > 0 {
		fmt.Fprintf(e.stdout, "  note: %d series are not in the baseline (first: %s); refresh it with this run's result (stormsim run --format json)\n", len(cmp.NewSeries), cmp.NewSeries[0])
	}
	if t.base.ConfigHash != doc.ConfigHash {
		fmt.Fprintf(e.stdout, "  note: the baseline ran config %s, this run %s\n", t.base.ConfigHash, doc.ConfigHash)
	}
	return !cmp.Drifted()
}
