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
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
	// Overwrite writes into an OutDir that holds another calibration's
	// outputs, or files calibrate does not write (left alone).
	Overwrite bool
	// Derived names files the caller writes into OutDir from
	// calibration.json (report.html): calibrate's own there, to replace.
	Derived []string
	// Size, if set, sizes the storm to this machine before its real runs
	// (see Size); a resumed calibration keeps the size it chose.
	Size *Size
	// Resume keeps the real runs that a calibration of the same scenario
	// and policy, stopped before it ended, left in OutDir (its
	// calibration.json and real.ndjson) and runs only the rest.
	Resume bool
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

// InterruptedError is a calibration stopped (Ctrl-C, or its timeout)
// before it ended. The real runs that finished are kept, in
// calibration.json and real.ndjson (the one running is dropped, with its
// logs), every process and schema it started is gone, and Options.Resume
// goes on from them.
type InterruptedError struct {
	During string // what was stopped: "real run 2", "simulating the models"
	Kept   int    // real runs finished and kept (replaced ones included)
	Dir    string // Options.OutDir
	Err    error  // why: the context's cause
}

func (e *InterruptedError) Error() string { return fmt.Sprintf("stopped %s (%v)", e.What(), e.Err) }

// What says what was stopped and what is kept, without why.
func (e *InterruptedError) What() string {
	kept := "no real run had finished: nothing is kept"
	switch {
	case e.Kept == 1:
		kept = "the real run that finished is kept in " + filepath.Join(e.Dir, ReportFile) + " and " + filepath.Join(e.Dir, RecordFile)
	case e.Kept > 1:
		kept = fmt.Sprintf("the %d real runs that finished are kept in %s and %s", e.Kept, filepath.Join(e.Dir, ReportFile), filepath.Join(e.Dir, RecordFile))
	}
	return fmt.Sprintf("during %s: %s, and every process and schema it started is gone", e.During, kept)
}

// Unwrap returns the context's cause.
func (e *InterruptedError) Unwrap() error { return e.Err }

// calibration is one Run in progress.
type calibration struct {
	s         *sim.Scenario
	opt       Options
	policy    policies.Spec
	plan      lab.Plan
	predicted []fit.Model // none without Options.Models
	rep       *report.Report
	resumed   int // real runs kept from the calibration resumed (replaced ones included)
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
//
// ctx's cancellation keeps the real runs that finished (*InterruptedError),
// and Options.Resume goes on from them.
func Run(ctx context.Context, s *sim.Scenario, opt Options) (*report.Report, error) {
	c, err := prepare(s, opt.withDefaults())
	if err != nil {
		return nil, &UsageError{err}
	}
	if c.opt.Resume {
		if err := c.resume(); err != nil {
			return nil, &UsageError{err}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, c.opt.Timeout)
	defer cancel()
	if len(c.rep.Real) < c.opt.Runs {
		if err := c.measure(ctx); err != nil {
			return nil, err
		}
	}
	return c.rep, c.conclude(ctx)
}

// resume takes the real runs of the calibration stopped in OutDir.
func (c *calibration) resume() error {
	path := filepath.Join(c.opt.OutDir, ReportFile)
	prev, err := report.Read(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("--resume: %s holds no %s to go on from: leave out --resume", c.opt.OutDir, ReportFile)
	case err != nil:
		return fmt.Errorf("--resume: %w", err)
	case prev.ConfigHash != c.rep.ConfigHash || prev.Policy != c.rep.Policy:
		return fmt.Errorf("--resume: %s is a calibration of another scenario or policy (config %s, policy %s; this one %s, %s): use a fresh -o directory or leave out --resume",
			path, prev.ConfigHash, prev.Policy, c.rep.ConfigHash, c.rep.Policy)
	case len(prev.Real) > c.opt.Runs:
		return fmt.Errorf("--resume: %s holds %d real runs, more than --runs %d", path, len(prev.Real), c.opt.Runs)
	}
	switch {
	case prev.Sized != nil && c.opt.Size == nil:
		return fmt.Errorf("--resume: %s was sized to the machine (--size-queue, --size-bucket): give the same flags", path)
	case prev.Sized == nil && c.opt.Size != nil && len(prev.Real)+len(prev.Replaced) > 0:
		return fmt.Errorf("--resume: %s was not sized to the machine: leave out --size-queue and --size-bucket", path)
	case prev.Sized != nil && (prev.Sized.QueueOverTimeout != c.opt.Size.QueueOverTimeout || prev.Sized.BucketFraction != c.opt.Size.BucketFraction):
		return fmt.Errorf("--resume: %s was sized with --size-queue %g --size-bucket %g: give the same", path, prev.Sized.QueueOverTimeout, prev.Sized.BucketFraction)
	case prev.Sized != nil:
		if err := c.applySizing(prev.Sized); err != nil {
			return fmt.Errorf("--resume: %w", err)
		}
	}
	c.rep.Real, c.rep.Replaced, c.rep.Database = prev.Real, prev.Replaced, prev.Database
	for _, r := range c.rep.Real {
		c.rep.Checks = append(c.rep.Checks, lab.Checks(c.plan, r)...)
	}
	c.resumed = len(prev.Real) + len(prev.Replaced)
	c.logf("resuming: %d real run(s) kept from %s", c.resumed, path)
	return nil
}

// conclude fits, simulates, compares and writes what measure measured,
// calibration.json with the measurements first.
func (c *calibration) conclude(ctx context.Context) error {
	var f fit.Fit
	var fitErr error
	if c.plan.Deploy != nil {
		fitErr = errors.New("a rolling deploy has no crash storm to fit the gateway on: its model is the one --model gives")
	} else {
		f, fitErr = fit.Runs(c.rep.Real)
	}
	c.rep.Fit = f
	c.rep.Incomplete = ""
	if fitErr != nil {
		c.rep.FitError = fitErr.Error()
	}
	measuredFile := filepath.Join(c.opt.OutDir, ReportFile)
	if err := c.rep.WriteJSON(measuredFile); err != nil {
		return err
	}
	switch {
	case fitErr != nil && len(c.predicted) == 0:
		// What an earlier calibration into this directory fitted and drew
		// would contradict calibration.json: it goes.
		if err := c.removeFitted(true); err != nil {
			return err
		}
		return &UsageError{fmt.Errorf("the real runs cannot be fitted: %w; what they measured is in %s. "+
			"To compare them with a model fitted on another storm, give it with --model (e.g. --model 'DIR/calibrated-run-*.yaml')", fitErr, measuredFile)}
	case fitErr != nil:
		// A storm may lack what a section is fitted on (a storm nobody
		// is refused has no rejected retries to time the legs by): the
		// model fitted on another storm still predicts it.
		c.logf("not fitted on these runs (%v): the predicted model, and one with the claim rates measured on each run", fitErr)
	default:
		c.logf("fitted: capacity admit %.1f/s, decision share %v, decide %.0f/s, claim share %v; first attempts decided from %.1f ms after the kill; shared every %v",
			f.Model.Capacity.AdmitPerS, f.Model.Capacity.DecisionShare, f.Model.Capacity.DecidePerS, f.Model.Capacity.ClaimShare, f.FirstWave.OnsetMs, f.Model.Network.SharedEvery)
	}
	err := c.simulate(ctx)
	if ctx.Err() != nil {
		c.rep.Incomplete = "stopped while simulating the models: every real run is measured and fitted; stormsim calibrate --resume simulates them"
		if werr := c.rep.WriteJSON(measuredFile); werr != nil {
			return werr
		}
		return &InterruptedError{During: "simulating the models", Kept: len(c.rep.Real) + len(c.rep.Replaced), Dir: c.opt.OutDir, Err: context.Cause(ctx)}
	}
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
	if c.plan.Deploy != nil && len(files) == 0 {
		return nil, errors.New("a rolling deploy is measured against a model fitted on a crash storm: give one with --model (e.g. --model 'DIR/calibrated-run-*.yaml' of a calibration of configs/seed-lab-1000.yaml)")
	}
	for _, file := range files {
		m, err := loadModel(file)
		if err != nil {
			return nil, err
		}
		c.predicted = append(c.predicted, m)
	}
	c.rep = &report.Report{SchemaVersion: report.SchemaVersion, Tool: "stormsim " + results.Version, Name: s.Name, Seed: s.Seed,
		ConfigHash: config.Hash(s), Clients: s.Clients, Policy: c.policy.Label, Models: files, DisturbedCores: lab.DisturbedCores,
		Config: config.Echo(s), Frame: frameOf(c.plan)}
	if opt.Size != nil {
		if err := opt.Size.check(s, c.policy.Timeout); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// frameOf is what the charts draw around the series of plan's storm.
func frameOf(plan lab.Plan) report.Frame {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return report.Frame{WindowMs: ms(plan.Window), AcceptBound: plan.AcceptBound, ReclaimLoMs: ms(plan.ReclaimLo), ReclaimHiMs: ms(plan.ReclaimHi)}
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
	dir, err := outdir.Prepare(c.opt.OutDir, c.claim())
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
	if c.opt.Size != nil && c.rep.Sized == nil {
		z, err := c.warmUp(ctx, lab.Lab{GatewayBin: bin, DatabaseURL: db.URL, MaxClients: c.opt.MaxClients, WaitQuiet: c.opt.WaitQuiet, Progress: c.logf})
		if err != nil {
			dir.Abandon()
			if ctx.Err() != nil {
				return &InterruptedError{During: "the warm-up that sizes the storm", Dir: c.opt.OutDir, Err: context.Cause(ctx)}
			}
			return err
		}
		if err := c.applySizing(z); err != nil {
			return err
		}
	}
	recordPath := filepath.Join(c.opt.OutDir, RecordFile)
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if c.resumed > 0 {
		if err := cutRecord(recordPath, c.resumed); err != nil {
			return err
		}
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	record, err := os.OpenFile(recordPath, flags, 0o644)
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
	replace := c.opt.Replace - len(c.rep.Replaced)
	for k := c.resumed + 1; len(c.rep.Real) < c.opt.Runs; k++ {
		r, err := l.Run(ctx, c.plan, k, c.s.Seed+uint64(k-1))
		if err != nil {
			if ctx.Err() != nil {
				return c.stopped(ctx, dir, k)
			}
			return fmt.Errorf("real run %d: %w", k, err)
		}
		if r.Load.Disturbed && replace > 0 {
			replace--
			c.rep.Replaced = append(c.rep.Replaced, r)
			c.logf("run %d: disturbed by other work (%.2f cores before, %.2f during; threshold %.2f): replaced by a fresh run",
				k, r.Load.OtherBeforeCores, r.Load.OtherDuringCores, lab.DisturbedCores)
		} else {
			c.rep.Real = append(c.rep.Real, r)
			c.rep.Checks = append(c.rep.Checks, lab.Checks(c.plan, r)...)
		}
		// Each finished run is on disk at once: whatever stops the
		// calibration later, it is kept.
		c.rep.Incomplete = fmt.Sprintf("%d of %d real runs measured so far", len(c.rep.Real), c.opt.Runs)
		if err := c.rep.WriteJSON(filepath.Join(c.opt.OutDir, ReportFile)); err != nil {
			return err
		}
	}
	return nil
}

// stopped ends a calibration whose context ended during real run k: the
// runs before it are kept (calibration.json says how it stopped, and
// real.ndjson holds them alone), run k's record and logs go, and with no
// run kept nothing is left.
func (c *calibration) stopped(ctx context.Context, dir *outdir.Dir, k int) error {
	kept := len(c.rep.Real) + len(c.rep.Replaced)
	ie := &InterruptedError{During: fmt.Sprintf("real run %d", k), Kept: kept, Dir: c.opt.OutDir, Err: context.Cause(ctx)}
	os.RemoveAll(filepath.Join(c.opt.OutDir, lab.LogsDir, "run-"+strconv.Itoa(k)))
	if kept == 0 {
		os.Remove(filepath.Join(c.opt.OutDir, RecordFile))
		os.Remove(filepath.Join(c.opt.OutDir, lab.LogsDir)) // only if empty
		dir.Abandon()
		return ie
	}
	if err := cutRecord(filepath.Join(c.opt.OutDir, RecordFile), kept); err != nil {
		return fmt.Errorf("%w; and cutting %s: %v", ie, RecordFile, err)
	}
	c.rep.Incomplete = fmt.Sprintf("stopped during real run %d: %d of %d real runs measured; stormsim calibrate --resume goes on", k, len(c.rep.Real), c.opt.Runs)
	if err := c.rep.WriteJSON(filepath.Join(c.opt.OutDir, ReportFile)); err != nil {
		return fmt.Errorf("%w; and writing %s: %v", ie, ReportFile, err)
	}
	return ie
}

// cutRecord cuts real.ndjson at path after its first runs real runs: at
// the line that opens the next run (lab's run marker), or after the last
// whole line.
func cutRecord(path string, runs int) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<16)
	var at int64
	for {
		line, err := r.ReadBytes('\n')
		if err != nil { // the end, or a line left half-written
			break
		}
		var marker struct {
			Event string `json:"event"`
			Run   int    `json:"run"`
		}
		if bytes.HasPrefix(line, []byte(`{"event":"run",`)) && json.Unmarshal(line, &marker) == nil && marker.Event == "run" && marker.Run > runs {
			break
		}
		at += int64(len(line))
	}
	return f.Truncate(at)
}

// removeFitted removes what an earlier calibration into the directory
// fitted (calibrated-run-K.yaml and, with pooled, calibrated.yaml) and,
// with pooled, the charts and pages drawn from it.
func (c *calibration) removeFitted(pooled bool) error {
	stale, _ := filepath.Glob(filepath.Join(c.opt.OutDir, strings.Replace(CalibratedRunFile, "%d", "*", 1)))
	if pooled {
		stale = append(stale, filepath.Join(c.opt.OutDir, CalibratedFile), filepath.Join(c.opt.OutDir, ChartsDir))
		for _, d := range c.opt.Derived {
			stale = append(stale, filepath.Join(c.opt.OutDir, d))
		}
	}
	for _, f := range stale {
		if err := os.RemoveAll(f); err != nil {
			return err
		}
	}
	return nil
}

// claim is what calibrate writes into its directory: a calibration of
// the same config may be written again there, nothing else replaced.
func (c *calibration) claim() outdir.Claim {
	return outdir.Claim{Command: "calibrate", Marker: ReportFile, Key: "config_hash", ID: c.rep.ConfigHash, Overwrite: c.opt.Overwrite,
		Owns: func(name string) bool {
			switch name {
			case ReportFile, RecordFile, CalibratedFile, ChartsDir, lab.LogsDir:
				return true
			}
			if slices.Contains(c.opt.Derived, name) {
				return true
			}
			var k int
			_, err := fmt.Sscanf(name, CalibratedRunFile, &k)
			return err == nil && name == fmt.Sprintf(CalibratedRunFile, k)
		}}
}

// model is a role's scenarios: replication r runs scenarios[r mod len];
// for the calibrated model, runs are the real runs they were fitted on.
type model struct {
	role      report.Role
	scenarios []*sim.Scenario
	runs      []int
	borrowed  string // what the model takes from elsewhere (report.Simulation.Borrowed)
}

// models are the models to simulate, in the report's order: predicted
// when there is one, calibrated, pooled, uncalibrated. Calibrated takes
// each run's own fit; a run that cannot be fitted alone is left out of it,
// and the report says which and why (Simulation.LeftOut), never a silent
// stand-in. With no run that can, there is no calibrated model: an error.
func (c *calibration) models() ([]model, error) {
	var ms []model
	var lab []fit.Model // the predicted model, file by file, with what it takes from these runs
	if len(c.predicted) > 0 {
		m := model{role: report.Predicted}
		labHere := fit.LabOf(c.rep.Real)
		withLab, withGoaways, withGone, withLegs, withFirstOut, restarts, startup := 0, 0, 0, 0, 0, 0, time.Duration(0)
		warmDecide := false
		for _, p := range c.predicted {
			if z := c.rep.Sized; z != nil {
				// The hour's claim and decision rates, measured on the
				// warm-up (another storm): what the storm was sized by is
				// what predicts it. A model fitted on a slower hour would
				// hold a faster hour's handshakes in its decision stage
				// past their timeout: a storm that ends, predicted not to.
				p.Capacity.AdmitPerS, p.Capacity.DecisionShare = z.Claims(p.Capacity.DecisionShare)
				if decide, share := z.Decide(p.Capacity.ClaimShare); p.Capacity.DecidePerS > 0 && decide > 0 {
					p.Capacity.DecidePerS, p.Capacity.ClaimShare, warmDecide = decide, share, true
				}
			}
			// The lab's client process is the lab's, not the gateway's:
			// its notices and its legs as they were on these
			// runs, at this storm's client count.
			var ok bool
			if p, ok = p.WithLab(labHere); ok {
				withLab++
			}
			if p, ok = p.WithGoawaysOf(labHere); ok {
				withGoaways++
			}
			if p, ok = p.WithGoneOf(labHere); ok {
				withGone++
			}
			if c.rep.FitError == "" {
				if p, ok = p.WithLegsOf(c.rep.Fit.Model); ok {
					withLegs++
				}
			} else if p, ok = p.WithFirstOutOf(c.rep.Fit.FirstWave, labHere); ok {
				withFirstOut++
			}
			lab = append(lab, p)
			s := p.Apply(c.s)
			if s, ok = labHere.Restarts(s); ok {
				restarts, startup = restarts+1, s.Deploy.Startup
			}
			m.scenarios = append(m.scenarios, s)
		}
		var borrowed []string
		switch {
		case warmDecide:
			borrowed = append(borrowed, "capacity.admit_per_s (the warm-up's mean claim gap less the fitted decision_share of its decisions) and decide_per_s (its mean backlogged decision gap less the fitted claim_share of its claims, or with no claim_share its first wave's rate) from the warm-up that sized the storm")
		case c.rep.Sized != nil:
			borrowed = append(borrowed, "capacity.admit_per_s from the warm-up that sized the storm")
		}
		if withLab > 0 {
			borrowed = append(borrowed, fmt.Sprintf("detection.delay (%d of %d files): the clients' notices measured on these runs, the lab's client process at this count",
				withLab, len(c.predicted)))
		}
		if withGoaways > 0 {
			borrowed = append(borrowed, fmt.Sprintf("network.goaway (%d of %d files): the drained clients' goaways' way measured on these runs, the lab's client process reading them",
				withGoaways, len(c.predicted)))
		}
		if withGone > 0 {
			borrowed = append(borrowed, fmt.Sprintf("network.gone (%d of %d files): how long after a client gave up the survivor knew, measured on these runs, the lab's client process at this count",
				withGone, len(c.predicted)))
		}
		if withLegs > 0 {
			borrowed = append(borrowed, fmt.Sprintf("network.out, back, first_out and first_back (%d of %d files): the legs fitted on these runs, the lab's client process's sends and reads at this count",
				withLegs, len(c.predicted)))
		}
		if withFirstOut > 0 {
			borrowed = append(borrowed, fmt.Sprintf("network.first_out (%d of %d files): the first attempts' way, the onset less the first notice of these runs' first wave, "+
				"plus how late each client's first attempt was sent (the rest of the legs cannot be fitted on them)", withFirstOut, len(c.predicted)))
		}
		if restarts > 0 {
			borrowed = append(borrowed, fmt.Sprintf("deploy.startup %v: the lab's restart of a gateway measured on these runs (the config's %v)",
				startup, c.s.Deploy.Startup))
		}
		m.borrowed = strings.Join(borrowed, "; ")
		ms = append(ms, m)
	}
	if c.rep.FitError != "" {
		return append(ms, c.measuredCapacity(lab), model{role: report.Uncalibrated, scenarios: []*sim.Scenario{c.s}}), nil
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
// whole: the predicted model as it predicts these runs (file k mod K for
// run k, with what it takes from them: lab), with the capacity measured
// on each run alone (its claim rates), when it has a backlog of claims to
// measure them by. Simulation.Borrowed says so.
func (c *calibration) measuredCapacity(lab []fit.Model) model {
	m := model{role: report.Calibrated, borrowed: "network, detection and capacity.decide_per_s from the predicted model, as it predicts these runs"}
	labHere := fit.LabOf(c.rep.Real)
	for k, r := range c.rep.Real {
		claims, err := fit.ClaimsOf([]*measured.Run{r})
		if err != nil {
			continue
		}
		p := lab[k%len(lab)]
		p.Capacity.AdmitPerS, p.Capacity.WastedPerS = claims.AdmitPerS, claims.WastedPerS
		s, _ := labHere.Restarts(p.Apply(c.s))
		m.scenarios = append(m.scenarios, s)
		m.runs = append(m.runs, r.Run)
	}
	return m
}

// simulate runs and compares each model, until ctx ends.
func (c *calibration) simulate(ctx context.Context) error {
	ms, err := c.models()
	if err != nil {
		return err
	}
	window := float64(c.plan.Window) / float64(time.Millisecond)
	for _, m := range ms {
		if len(m.scenarios) == 0 {
			continue // no run had a backlog of claims to measure
		}
		reps, err := replicate(ctx, m.scenarios, c.policy, c.opt.Replications)
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
	if err := c.removeFitted(false); err != nil {
		return err
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
// its twin is replication k-1), on every core, until ctx ends.
func replicate(ctx context.Context, scenarios []*sim.Scenario, spec policies.Spec, reps int) ([]sim.Result, error) {
	out := make([]sim.Result, reps)
	seed := scenarios[0].Seed
	err := runner.ForEach(reps, 0, func(r int) (err error) {
		out[r], err = runner.RunOneWith(scenarios[r%len(scenarios)], spec, seed+uint64(r), func(sim.Progress) bool { return ctx.Err() == nil })
		return err
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
