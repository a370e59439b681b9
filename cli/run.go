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

	"stormsim/internal/budget"
	"stormsim/internal/human"
	"stormsim/internal/outdir"
	"stormsim/internal/safetext"
	"stormsim/plots"
	"stormsim/results"
	"stormsim/runner"
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

func runRun(e *env, cmd *command, args []string) error {
	fs := flagSet(cmd.name)
	var sf scenarioFlags
	sf.add(fs)
	format := fs.String("format", "table", "stdout `format`: table or json")
	outDir := fs.StringP("out", "o", "", "also write the JSON result to `DIR`/"+ResultFile+" and the charts (DIR is created)")
	charts := fs.Bool("charts", true, "with -o, draw the charts (PNG and SVG) into DIR")
	var rf runFlags
	rf.add(fs)
	progress := fs.String("progress", "auto", "progress on stderr once a run takes more than a few seconds: `auto` (a live line on a terminal, else plain), plain (a line every few seconds) or none")
	if done, err := parse(e, cmd, fs, args); done || err != nil {
		return err
	}
	if *format != "table" && *format != "json" {
		return usageErrorf("stormsim run: --format must be table or json (got %q)", *format)
	}
	pr, err := newRunProgress(e, cmd.name, *progress)
	if err != nil {
		return err
	}
	if err := rf.check(cmd.name); err != nil {
		return err
	}
	sf.sets = rf.sets(sf.sets)
	file, doc, err := sf.loadDocument(cmd.name)
	if err != nil {
		return err
	}
	s := file.Scenario
	specs, err := runner.SelectPolicies(s, sf.policies)
	if err != nil {
		return badInput(err)
	}
	limits, err := rf.limits(cmd.name)
	if err != nil {
		return err
	}
	est := budget.Run(s, specs, limits, rf.workers)
	if err := est.CheckRun(limits, s.Replications); err != nil {
		return rf.overBudget(err, doc)
	}
	// The directory is checked before the run, so that a long run is not
	// lost to a directory it cannot write.
	var dir *outdir.Dir
	if *outDir != "" {
		if dir, err = outdir.Prepare(*outDir); err != nil {
			return badInput(fmt.Errorf("stormsim run: %w", err))
		}
	}
	if pr != nil && est.MinTime >= LongRun {
		fmt.Fprintf(e.stderr, "stormsim run: at least %s of computing ahead (%s storms of up to %s clients on %d cores, about %s of memory); Ctrl-C stops it\n",
			human.Duration(est.MinTime), human.Count(est.Storms), human.Count(int64(est.Clients)), min(est.Concurrent, limits.Cores), human.Bytes(est.MemoryBytes))
	}
	defer e.watchMemory(limits, est)()
	ctx, stopSignals := interruptible()
	defer stopSignals()
	pr.begin(runner.Storms(s, len(specs)))
	started := time.Now()
	res := results.New(s, file.Hash(), file.Echo())
	err = runner.Build(res, s, specs, runner.Options{Workers: rf.workers, Context: ctx, Progress: pr.report})
	pr.end()
	if err != nil {
		dir.Abandon()
		if errors.Is(err, runner.ErrStopped) {
			return &exitError{code: ExitInterrupted, err: fmt.Errorf("stormsim run: interrupted after %s; nothing was written (a run has no --resume; the scenario's horizon: bounds how far it simulates)",
				human.Duration(time.Since(started)))}
		}
		return err
	}
	warnHorizon(e.stderr, res)
	// Standard output first: what ran is shown even if writing files fails.
	if err := writeRun(e.stdout, res, *format); err != nil {
		return err
	}
	if dir == nil {
		return nil
	}
	path := filepath.Join(dir.Path, ResultFile)
	if err := res.WriteJSON(path); err != nil {
		dir.Abandon()
		return fmt.Errorf("stormsim run: writing %s: %w", path, err)
	}
	written := []string{path}
	if *charts {
		paths, err := plots.Write(dir.Path, chartRun(res, s), plots.Options{})
		written = append(written, paths...)
		if err != nil {
			return fmt.Errorf("stormsim run: %w", err)
		}
	}
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
	return append([]string{ResultFile}, plots.FileNames(plots.ChartNames...)...)
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
