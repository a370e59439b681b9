package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"stormsim/budget"
	"stormsim/config"
	"stormsim/htmlreport"
	"stormsim/internal/atomicfile"
	"stormsim/internal/human"
	"stormsim/internal/outdir"
	"stormsim/internal/safetext"
	"stormsim/plots"
	"stormsim/policies"
	"stormsim/results"
	"stormsim/runner"
	"stormsim/sim"
)

// cmdRun is stormsim run.
var cmdRun = &command{
	name:    "run",
	summary: "run the storm of a config for each policy (and replication); print a summary or JSON, -o DIR writes it with charts",
	usage:   "-c FILE [--set path=value]... [--policy label]... [--replications R] [--workers N] [--max-memory SIZE] [--progress auto|plain|none] [--format table|json] [-o DIR [--charts=false]]",
	run:     runRun,
}

// ResultFile is the name of the result document written into -o DIR.
const ResultFile = "result.json"

// stormRun is one stormsim run: its flags and what they resolve to.
type stormRun struct {
	e              *env
	sf             scenarioFlags
	rf             runFlags
	format, outDir string
	charts         bool
	progress       *runProgress // nil: none
	limits         budget.Limits
}

func runRun(e *env, cmd *command, args []string) error {
	r := &stormRun{e: e}
	if done, err := r.parseFlags(cmd, args); done || err != nil {
		return err
	}
	file, specs, est, err := r.load(cmd)
	if err != nil {
		return err
	}
	// The directory is checked before the run, so that a long run is not
	// lost to a directory it cannot write.
	var dir *outdir.Dir
	if r.outDir != "" {
		if dir, err = outdir.Prepare(r.outDir); err != nil {
			return badInput(fmt.Errorf("stormsim run: %w", err))
		}
	}
	if r.progress != nil && est.MinTime >= LongRun {
		fmt.Fprintf(e.stderr, "stormsim run: at least %s of computing ahead (%s storms of up to %s clients on %d cores, about %s of memory); Ctrl-C stops it\n",
			human.Duration(est.MinTime), human.Count(est.Storms), human.Count(int64(est.Clients)), min(est.Concurrent, r.limits.Cores), human.Bytes(est.MemoryBytes))
	}
	defer e.watchMemory(r.limits, est)()
	ctx, stopSignals := interruptible()
	defer stopSignals()
	res, err := r.build(ctx, file, specs)
	if err != nil {
		dir.Abandon()
		return err
	}
	warnHorizon(e.stderr, res)
	// Standard output first: what ran is shown even if writing files fails.
	if err := writeRun(e.stdout, res, r.format); err != nil {
		return err
	}
	if dir == nil {
		return nil
	}
	return r.writeDir(dir, res, file.Scenario)
}

// parseFlags reads and validates the flags: done is true when help was
// asked for.
func (r *stormRun) parseFlags(cmd *command, args []string) (done bool, err error) {
	fs := flagSet(cmd.name)
	r.sf.add(fs)
	fs.StringVar(&r.format, "format", "table", "stdout `format`: table or json")
	fs.StringVarP(&r.outDir, "out", "o", "", "also write the JSON result to `DIR`/"+ResultFile+" and the charts (DIR is created)")
	fs.BoolVar(&r.charts, "charts", true, "with -o, draw the charts (PNG and SVG) into DIR")
	r.rf.add(fs)
	progress := fs.String("progress", "auto", "progress on stderr once a run takes more than a few seconds: `auto` (a live line on a terminal, else plain), plain (a line every few seconds) or none")
	if done, err := parse(r.e, cmd, fs, args); done || err != nil {
		return done, err
	}
	if r.format != "table" && r.format != "json" {
		return false, usageErrorf("stormsim run: --format must be table or json (got %q)", r.format)
	}
	if r.progress, err = newRunProgress(r.e, cmd.name, *progress); err != nil {
		return false, err
	}
	if err := r.rf.check(cmd.name); err != nil {
		return false, err
	}
	r.sf.sets = r.rf.sets(r.sf.sets)
	return false, nil
}

// load reads the scenario file, selects its policies and estimates the
// run, refusing one beyond the machine's limits.
func (r *stormRun) load(cmd *command) (*config.ScenarioFile, []policies.Spec, budget.Estimate, error) {
	var est budget.Estimate
	file, doc, err := r.sf.loadDocument(cmd.name)
	if err != nil {
		return nil, nil, est, err
	}
	s := file.Scenario
	specs, err := runner.SelectPolicies(s, r.sf.policies)
	if err != nil {
		return nil, nil, est, badInput(err)
	}
	if r.limits, err = r.rf.limits(cmd.name); err != nil {
		return nil, nil, est, err
	}
	est = budget.Run(s, specs, r.limits, r.rf.workers)
	if err := est.CheckRun(r.limits, s.Replications); err != nil {
		return nil, nil, est, r.rf.overBudget(err, doc)
	}
	return file, specs, est, nil
}

// build runs the storms, reporting progress, until ctx stops them.
func (r *stormRun) build(ctx context.Context, file *config.ScenarioFile, specs []policies.Spec) (*results.Document, error) {
	s := file.Scenario
	r.progress.begin(runner.Storms(s, len(specs)))
	started := time.Now()
	res := results.New(s, file.Hash(), file.Echo())
	err := runner.Build(res, s, specs, runner.Options{Workers: r.rf.workers, Context: ctx, Progress: r.progress.report})
	r.progress.end()
	if errors.Is(err, runner.ErrStopped) {
		return nil, &exitError{code: ExitInterrupted, err: fmt.Errorf("stormsim run: interrupted after %s; nothing was written (a run has no --resume; the scenario's horizon: bounds how far it simulates)",
			human.Duration(time.Since(started)))}
	}
	return res, err
}

// writeDir writes the result and, unless --charts=false, its charts into
// dir, and removes what an earlier run wrote there and this one did not.
func (r *stormRun) writeDir(dir *outdir.Dir, res *results.Document, s *sim.Scenario) error {
	path := filepath.Join(dir.Path, ResultFile)
	data, err := res.JSON()
	if err == nil {
		err = atomicfile.Write(path, data)
	}
	if err != nil {
		dir.Abandon()
		return fmt.Errorf("stormsim run: writing %s: %w", path, err)
	}
	written := []string{path}
	if r.charts {
		paths, err := plots.Write(dir.Path, htmlreport.ChartRun(res, s), plots.Options{})
		written = append(written, paths...)
		if err != nil {
			return fmt.Errorf("stormsim run: %w", err)
		}
	}
	page, err := htmlreport.RunPage(data)
	if err == nil {
		path, err = htmlreport.Write(dir.Path, page)
	}
	if err != nil {
		return fmt.Errorf("stormsim run: the report: %w", err)
	}
	written = append(written, path)
	return dir.RemoveStale(runFiles(), written)
}

// LongRun is the least computing time estimated before a run for which
// run says so before it starts.
const LongRun = time.Minute

// interruptible is a context cancelled by the first Ctrl-C (SIGINT) or
// SIGTERM; a second one ends the process at once, as usual.
func interruptible() (context.Context, func()) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}

// warnHorizon says, on w, which storms their horizon stopped before they
// converged: their numbers are those of a storm still going on.
func warnHorizon(w io.Writer, doc *results.Document) {
	for _, r := range doc.Results {
		o := r.OutcomeResult
		if o == nil || o.Converged {
			continue
		}
		fmt.Fprintf(w, "stormsim: %s stopped at its horizon, %s of simulated time, without converging (%s): %s of %s clients connected; horizon: in the config looks further\n",
			safetext.Terminal(r.Policy), human.Millis(o.HorizonMs), o.Outcome, human.Count(o.Connected), human.Count(int64(r.Clients)))
	}
}

// runFiles are the names of every file run -o may write.
func runFiles() []string {
	return append([]string{ResultFile, htmlreport.File}, plots.FileNames(plots.ChartNames...)...)
}

// writeRun prints doc as a table or as JSON.
func writeRun(w io.Writer, doc *results.Document, format string) error {
	if format == "json" {
		data, err := doc.JSON()
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	if err := doc.WriteTable(w); err != nil {
		return err
	}
	return doc.WriteSummaryTable(w)
}
