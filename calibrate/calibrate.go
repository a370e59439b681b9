// Package calibrate runs a scenario's storm for real and simulated, side by
// side, and reports how far apart they are. It only wires its parts along
// the data flow:
//
//   - lab runs the storm for real (PostgreSQL, the gateway processes, the
//     clients) into measured.Runs, and judges each run by the seed lab's
//     checks and the machine's load;
//   - fit turns the runs into the simulator's capacity, network and
//     detection, the sections that carry over to another storm;
//   - the simulator runs each model: predicted (the sections fitted on
//     another storm, --model), calibrated (fitted on each of these runs),
//     pooled (fitted once on all of them) and uncalibrated (the config as
//     written);
//   - compare sets each model beside the real runs and judges the agreement;
//   - report writes calibration.json, calibrated.yaml, the table and the
//     charts.
package calibrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"stormsim/calibrate/compare"
	"stormsim/calibrate/fit"
	"stormsim/calibrate/lab"
	"stormsim/calibrate/measured"
	"stormsim/calibrate/report"
	"stormsim/config"
	"stormsim/internal/atomicfile"
	"stormsim/internal/outdir"
	"stormsim/policies"
	"stormsim/results"
	"stormsim/runner"
	"stormsim/sim"
)

// Defaults of Options.
const (
	DefaultRuns         = 1
	DefaultReplications = 200
	DefaultMaxClients   = 2000
	DefaultTimeout      = 10 * time.Minute
)

// Output file names inside Options.OutDir.
const (
	ReportFile     = "calibration.json"
	RecordFile     = "real.ndjson"
	ChartsDir      = "charts"
	CalibratedFile = "calibrated.yaml" // the scenario with the pooled fit, for stormsim run and sweep
	// CalibratedRunFile names the scenario with run K's fit alone
	// (calibrated-run-K.yaml): together, what calibrate --model takes to
	// predict another storm with the lab's run-to-run spread.
	CalibratedRunFile = "calibrated-run-%d.yaml"
)

// Options configures a calibration. Zero values take the defaults above.
type Options struct {
	OutDir       string // created if missing
	DatabaseURL  string // "" = $DATABASE_URL, then a throwaway cluster
	GatewayBin   string // "" = go build ./cmd/gateway into a temporary directory
	Runs         int    // real storms compared; run k uses seed Seed+k-1
	Replications int    // simulated storms per model
	MaxClients   int    // refuse larger scenarios
	Timeout      time.Duration
	Policy       string // policy label under test; "" = the scenario's first
	// Models, if set, are scenario files written by a calibration of
	// another storm (its calibrated-run-K.yaml, or its calibrated.yaml),
	// or glob patterns of them: their capacity, network and detection are
	// simulated on this storm as the predicted model, replication r taking
	// file r mod K's, with nothing fitted on this storm's runs.
	Models []string
	// Replace is how many runs that other work disturbed may be replaced
	// by fresh ones; negative: as many as Runs.
	Replace int
	// WaitQuiet is how long each run may wait for other work on the
	// machine to calm down before it begins; 0: it begins at once.
	WaitQuiet time.Duration
	// Progress, if set, receives one line per step.
	Progress io.Writer
}

func (o Options) withDefaults() Options {
	if o.Runs == 0 {
		o.Runs = DefaultRuns
	}
	if o.Replications == 0 {
		o.Replications = DefaultReplications
	}
	if o.MaxClients == 0 {
		o.MaxClients = DefaultMaxClients
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Replace < 0 {
		o.Replace = o.Runs
	}
	return o
}

// UsageError is bad input: a flag, a scenario the lab cannot run or runs
// that cannot be fitted.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error, for errors.Is and errors.As.
func (e *UsageError) Unwrap() error { return e.Err }

// calibration is one Run in progress.
type calibration struct {
	s         *sim.Scenario
	opt       Options
	policy    policies.Spec
	plan      lab.Plan
	predicted []fit.Model // none without Options.Models
	rep       *report.Report
	// files are the calibrated scenarios as written, by file name: what
	// the calibrated and pooled models simulate is what they read back.
	files map[string][]byte
}

// Run calibrates the resolved scenario s: real runs, fit, simulations,
// calibration.json, calibrated.yaml, real.ndjson and charts in opt.OutDir.
// ctx's cancellation (Ctrl-C) stops everything and removes every process
// and schema it started. Errors about the scenario, the flags or the
// database are *UsageError, found before anything is written.
//
// What the real runs measured is written to calibration.json as soon as
// they are fitted, before anything that can fail late: if the fit is
// impossible, or simulating, comparing, charting or writing fails, that
// file holds the runs, their checks and the fit, with the failure named
// (Report.FitError, Report.Error), and Run returns the report with the
// error.
func Run(ctx context.Context, s *sim.Scenario, opt Options) (*report.Report, error) {
	c, err := prepare(s, opt.withDefaults())
	if err != nil {
		return nil, &UsageError{err}
	}
	ctx, cancel := context.WithTimeout(ctx, c.opt.Timeout)
	defer cancel()
	if err := c.measure(ctx); err != nil {
		return nil, err
	}
	return c.rep, c.conclude()
}

// conclude fits, simulates, compares and writes what measure measured,
// calibration.json with the measurements first.
func (c *calibration) conclude() error {
	f, fitErr := fit.Runs(c.rep.Real)
	c.rep.Fit = f
	if fitErr != nil {
		c.rep.FitError = fitErr.Error()
	}
	measuredFile := filepath.Join(c.opt.OutDir, ReportFile)
	if err := c.rep.WriteJSON(measuredFile); err != nil {
		return err
	}
	switch {
	case fitErr != nil && len(c.predicted) == 0:
		return &UsageError{fmt.Errorf("the real runs cannot be fitted: %w; what they measured is in %s. "+
			"To compare them with a model fitted on another storm, give it with --model (e.g. --model 'DIR/calibrated-run-*.yaml')", fitErr, measuredFile)}
	case fitErr != nil:
		// A storm may lack what a section is fitted on (a storm nobody
		// is refused has no rejected retries to time the legs by): the
		// model fitted on another storm still predicts it.
		c.logf("not fitted on these runs (%v): the predicted model, and one with the claim rates measured on each run", fitErr)
	default:
		c.logf("fitted: capacity admit %.1f/s, decide %.0f/s; first attempts decided from %v; shared every %v",
			f.Model.Capacity.AdmitPerS, f.Model.Capacity.DecidePerS, f.Model.Detection.Delay.Value, f.Model.Network.SharedEvery)
	}
	err := c.simulate()
	if err == nil {
		err = c.write()
	}
	if err != nil {
		c.rep.Error = err.Error()
		if werr := c.rep.WriteJSON(measuredFile); werr != nil {
			return fmt.Errorf("%w; and writing %s: %v", err, measuredFile, werr)
		}
		return fmt.Errorf("%w (what the real runs measured is in %s)", err, measuredFile)
	}
	return nil
}

// prepare checks the options and the scenario and reads the predicted
// model, before anything runs.
func prepare(s *sim.Scenario, opt Options) (*calibration, error) {
	switch {
	case opt.OutDir == "":
		return nil, errors.New("an output directory is required")
	case opt.Runs < 1 || opt.Runs > 100:
		return nil, fmt.Errorf("--runs must be in [1, 100] (got %d)", opt.Runs)
	case opt.Replications < 2 || opt.Replications > 100_000:
		return nil, fmt.Errorf("--replications must be in [2, 100000] (got %d)", opt.Replications)
	case s.Clients > opt.MaxClients:
		return nil, fmt.Errorf("clients: %d real clients exceed --max-clients %d", s.Clients, opt.MaxClients)
	case opt.Replications < opt.Runs:
		return nil, fmt.Errorf("--replications (%d) must be at least --runs (%d), so every real run has its simulated twin", opt.Replications, opt.Runs)
	case opt.WaitQuiet < 0:
		return nil, fmt.Errorf("--wait-quiet must be >= 0 (got %v)", opt.WaitQuiet)
	case opt.GatewayBin != "" && !lab.IsExecutable(opt.GatewayBin):
		return nil, fmt.Errorf("--gateway-bin %s: not an executable file", opt.GatewayBin)
	}
	c := &calibration{s: s, opt: opt}
	var err error
	if c.policy, err = pickPolicy(s, opt.Policy); err != nil {
		return nil, err
	}
	if c.plan, err = lab.NewPlan(s, c.policy); err != nil {
		return nil, err
	}
	files, err := modelFiles(opt.Models)
	if err != nil {
		return nil, err
	}
	for _, file := range files {
		m, err := loadModel(file)
		if err != nil {
			return nil, err
		}
		c.predicted = append(c.predicted, m)
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	c.rep = &report.Report{SchemaVersion: report.SchemaVersion, Tool: "stormsim " + results.Version, Name: s.Name, Seed: s.Seed,
		ConfigHash: config.Hash(s), Clients: s.Clients, Policy: c.policy.Label, Models: files, DisturbedCores: lab.DisturbedCores,
		Config: config.Echo(s), Frame: report.Frame{WindowMs: ms(c.plan.Window), AcceptBound: c.plan.AcceptBound,
			ReclaimLoMs: ms(c.plan.ReclaimLo), ReclaimHiMs: ms(c.plan.ReclaimHi)}}
	return c, nil
}

func (c *calibration) logf(format string, args ...any) {
	if c.opt.Progress != nil {
		fmt.Fprintf(c.opt.Progress, "calibrate: "+format+"\n", args...)
	}
}

// measure runs the real storms until Runs of them were not disturbed by
// other work, or the replacements are spent (the disturbed runs then stay,
// and the report fails on them).
func (c *calibration) measure(ctx context.Context) (err error) {
	// The database is the user's to give: one that cannot be used is bad
	// input, found before anything is written.
	db, err := lab.OpenDatabase(ctx, c.opt.DatabaseURL)
	if err != nil {
		return &UsageError{err}
	}
	defer db.Close()
	c.rep.Database = db.Source
	c.logf("PostgreSQL from %s", db)
	dir, err := outdir.Prepare(c.opt.OutDir)
	if err != nil {
		return &UsageError{err}
	}
	bin := c.opt.GatewayBin
	if bin == "" {
		tmp, err := os.MkdirTemp("", "stormsim-gateway-")
		if err != nil {
			dir.Abandon()
			return err
		}
		defer os.RemoveAll(tmp)
		c.logf("building cmd/gateway")
		if bin, err = lab.BuildGateway(ctx, tmp); err != nil {
			dir.Abandon()
			return err
		}
	}
	record, err := os.Create(filepath.Join(c.opt.OutDir, RecordFile))
	if err != nil {
		return err
	}
	defer func() {
		if cerr := record.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	l := &lab.Lab{GatewayBin: bin, DatabaseURL: db.URL, Dir: c.opt.OutDir, MaxClients: c.opt.MaxClients, WaitQuiet: c.opt.WaitQuiet,
		Record: record, Progress: c.logf}
	replace := c.opt.Replace
	for k := 1; len(c.rep.Real) < c.opt.Runs; k++ {
		r, err := l.Run(ctx, c.plan, k, c.s.Seed+uint64(k-1))
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("real run %d: %w", k, context.Cause(ctx))
			}
			return fmt.Errorf("real run %d: %w", k, err)
		}
		if r.Load.Disturbed && replace > 0 {
			replace--
			c.rep.Replaced = append(c.rep.Replaced, r)
			c.logf("run %d: disturbed by other work (%.2f cores before, %.2f during; threshold %.2f): replaced by a fresh run",
				k, r.Load.OtherBeforeCores, r.Load.OtherDuringCores, lab.DisturbedCores)
			continue
		}
		c.rep.Real = append(c.rep.Real, r)
		c.rep.Checks = append(c.rep.Checks, lab.Checks(c.plan, r)...)
	}
	return nil
}

// model is a role's scenarios: replication r runs scenarios[r mod len];
// for the calibrated model, runs are the real runs they were fitted on.
type model struct {
	role      report.Role
	scenarios []*sim.Scenario
	runs      []int
	borrowed  string // what a calibrated model takes from the predicted one
}

// models are the models to simulate, in the report's order: predicted
// when there is one, calibrated, pooled, uncalibrated. Calibrated takes
// each run's own fit; a run that cannot be fitted alone is left out of it,
// and the report says which and why (Simulation.LeftOut), never a silent
// stand-in. With no run that can, there is no calibrated model: an error.
func (c *calibration) models() ([]model, error) {
	var ms []model
	if len(c.predicted) > 0 {
		m := model{role: report.Predicted}
		for _, p := range c.predicted {
			m.scenarios = append(m.scenarios, p.Apply(c.s))
		}
		ms = append(ms, m)
	}
	if c.rep.FitError != "" {
		return append(ms, c.measuredCapacity(), model{role: report.Uncalibrated, scenarios: []*sim.Scenario{c.s}}), nil
	}
	calibrated := model{role: report.Calibrated}
	c.files = map[string][]byte{}
	var why []string
	for _, r := range c.rep.Fit.Runs {
		if r.Model == nil {
			why = append(why, fmt.Sprintf("run %d: %s", r.Run, r.Error))
			continue
		}
		s, err := c.written(fmt.Sprintf(CalibratedRunFile, r.Run), fmt.Sprintf("real run %d alone", r.Run), r.Model.Apply(c.s))
		if err != nil {
			return nil, err
		}
		calibrated.scenarios = append(calibrated.scenarios, s)
		calibrated.runs = append(calibrated.runs, r.Run)
	}
	if len(calibrated.scenarios) == 0 {
		return nil, &UsageError{fmt.Errorf("no real run can be fitted alone: %s", strings.Join(why, "; "))}
	}
	fittedOn := fmt.Sprintf("%d real runs", len(c.rep.Real))
	if len(c.rep.Real) == 1 {
		fittedOn = "1 real run"
	}
	pooled, err := c.written(CalibratedFile, fittedOn, c.rep.Fit.Model.Apply(c.s))
	if err != nil {
		return nil, err
	}
	c.rep.CalibratedConfig = config.Echo(pooled)
	return append(ms, calibrated, model{role: report.Pooled, scenarios: []*sim.Scenario{pooled}},
		model{role: report.Uncalibrated, scenarios: []*sim.Scenario{c.s}}), nil
}

// written writes the calibrated scenario s as the file name will hold it
// (report.ScenarioYAML: rounded, defaults left out), keeps the bytes for
// write, and returns the scenario the file reads back as: the model the
// calibration simulates and checks is the file.
func (c *calibration) written(name, fittedOn string, s *sim.Scenario) (*sim.Scenario, error) {
	data, err := report.ScenarioYAML(c.s.Name, fittedOn, config.Echo(s))
	if err != nil {
		return nil, err
	}
	back, err := config.Parse(name, data, nil)
	if err != nil {
		return nil, fmt.Errorf("%s as written does not read back: %w", name, err)
	}
	c.files[name] = data
	return back, nil
}

// measuredCapacity is the calibrated model of runs that cannot be fitted
// whole: the predicted model (file k mod K for run k) with the capacity
// measured on each run alone (its claim rates), when it has a backlog of
// claims to measure them by. Simulation.Borrowed says so.
func (c *calibration) measuredCapacity() model {
	m := model{role: report.Calibrated, borrowed: "network, detection and capacity.decide_per_s from the predicted model"}
	for k, r := range c.rep.Real {
		claims, err := fit.ClaimsOf([]*measured.Run{r})
		if err != nil {
			continue
		}
		p := c.predicted[k%len(c.predicted)]
		p.Capacity.AdmitPerS, p.Capacity.WastedPerS = claims.AdmitPerS, claims.WastedPerS
		m.scenarios = append(m.scenarios, p.Apply(c.s))
		m.runs = append(m.runs, r.Run)
	}
	return m
}

// simulate runs and compares each model.
func (c *calibration) simulate() error {
	ms, err := c.models()
	if err != nil {
		return err
	}
	window := float64(c.plan.Window) / float64(time.Millisecond)
	for _, m := range ms {
		if len(m.scenarios) == 0 {
			continue // no run had a backlog of claims to measure
		}
		reps, err := replicate(m.scenarios, c.policy, c.opt.Replications)
		if err != nil {
			return err
		}
		sm := report.Simulation{Role: m.role, Runs: m.runs, Borrowed: m.borrowed, Replications: c.opt.Replications, FirstSeed: c.s.Seed,
			Metrics: compare.Metrics(c.rep.Real, reps, c.s.Seed), Series: compare.Series(c.rep.Real, reps, window),
			PerReplication: report.FiguresOf(reps)}
		for _, s := range m.scenarios {
			sm.Sections = append(sm.Sections, report.SectionsOf(s))
		}
		sm.Outcome = compare.Outcomes(c.rep.Real, reps)
		c.rep.Simulations = append(c.rep.Simulations, sm)
		if sm.Outcome != nil {
			c.rep.Agreement = append(c.rep.Agreement, sm.Outcome.Agreement(string(m.role)))
		}
		c.rep.Agreement = append(c.rep.Agreement, compare.Agreements(string(m.role), sm.Metrics, sm.Series)...)
		c.logf("simulated %d replications (%s)", c.opt.Replications, m.role)
	}
	return nil
}

// write writes calibration.json, calibrated.yaml and the charts.
func (c *calibration) write() error {
	if err := c.rep.WriteJSON(filepath.Join(c.opt.OutDir, ReportFile)); err != nil {
		return err
	}
	// Per-run files of an earlier calibration into this directory would
	// join a --model glob: they go.
	stale, _ := filepath.Glob(filepath.Join(c.opt.OutDir, strings.Replace(CalibratedRunFile, "%d", "*", 1)))
	for _, f := range stale {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	if c.rep.FitError != "" {
		if err := os.Remove(filepath.Join(c.opt.OutDir, CalibratedFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return c.writeCharts()
	}
	for _, name := range slices.Sorted(maps.Keys(c.files)) { // calibrated.yaml and each run's alone
		if err := atomicfile.Write(filepath.Join(c.opt.OutDir, name), c.files[name]); err != nil {
			return err
		}
	}
	return c.writeCharts()
}

// writeCharts draws the charts of the report.
func (c *calibration) writeCharts() error {
	_, err := c.rep.WriteCharts(filepath.Join(c.opt.OutDir, ChartsDir))
	return err
}

// pickPolicy returns the policy labelled label, or the first one.
func pickPolicy(s *sim.Scenario, label string) (policies.Spec, error) {
	if label == "" {
		return s.Policies[0], nil
	}
	picked, err := runner.SelectPolicies(s, []string{label})
	if err != nil {
		return policies.Spec{}, err
	}
	return picked[0], nil
}

// replicate runs reps replications under policy spec, replication r of
// scenarios[r mod len] with seed Seed+r (real run k uses seed Seed+k-1, so
// its twin is replication k-1), on every core.
func replicate(scenarios []*sim.Scenario, spec policies.Spec, reps int) ([]sim.Result, error) {
	b, err := policies.New(spec)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", spec.Label, err)
	}
	out := make([]sim.Result, reps)
	seed := scenarios[0].Seed
	err = runner.ForEach(reps, 0, func(r int) error {
		out[r] = sim.Run(scenarios[r%len(scenarios)], b, seed+uint64(r))
		return nil
	})
	return out, err
}

// modelFiles expands the --model arguments: each a file, or a glob
// pattern of files in the order they sort.
func modelFiles(args []string) ([]string, error) {
	var files []string
	for _, a := range args {
		matches, err := filepath.Glob(a)
		if err != nil {
			return nil, fmt.Errorf("--model %s: %w", a, err)
		}
		if len(matches) == 0 {
			matches = []string{a} // not a pattern, or nothing matches: loading says why
		}
		files = append(files, matches...)
	}
	return files, nil
}

// loadModel reads the fitted sections of a scenario file.
func loadModel(file string) (fit.Model, error) {
	a, err := config.Load(file, nil)
	if err != nil {
		return fit.Model{}, err
	}
	m, err := fit.FromScenario(a)
	if err == nil {
		err = m.Validate()
	}
	if err != nil {
		return fit.Model{}, fmt.Errorf("--model %s: %w", file, err)
	}
	return m, nil
}
