package cli

import (
	"errors"
	"fmt"
	"path/filepath"

	"stormsim/budget"
	"stormsim/htmlreport"
	"stormsim/internal/human"
	"stormsim/internal/outdir"
	"stormsim/internal/safetext"
	"stormsim/solve"
)

// cmdSolve is stormsim solve.
var cmdSolve = &command{
	name:    "solve",
	summary: "find the least or most value of a config key that meets requirements: exit 0 an answer, 1 none",
	usage:   "-c SOLVE.yaml [-o DIR] [--set path=value]... [--replications R] [--workers N] [--max-memory SIZE] [--shard I/N | --shard auto[/N]] [--resume] [--progress auto|plain|none] [--charts=false]",
	run:     runSolve,
}

// solveRun is one stormsim solve: its flags and what they resolve to.
type solveRun struct {
	e    *env
	args []string // as given, for the --resume command
	file string
	out  outFlags
	sets []string
	rf   runFlags
	batchFlags
	limits  budget.Limits
	problem *solve.Problem
}

func runSolve(e *env, cmd *command, args []string) error {
	r := &solveRun{e: e, args: args}
	if done, err := r.parseFlags(cmd, args); done || err != nil {
		return err
	}
	var err error
	if r.problem, err = solve.Load(r.file, solve.Options{Replications: r.rf.replications, Sets: r.sets}); err != nil {
		return badInput(err)
	}
	if r.shard.from != "" {
		r.progress.Say("%s: shard %d/%d from %s", safetext.Terminal(r.problem.Name), r.shard.index, r.shard.count, r.shard.from)
	}
	est, err := r.estimate()
	if err != nil {
		return err
	}
	var dir *outdir.Dir
	if r.out.dir != "" {
		if dir, err = r.out.prepare(cmd.name, outdir.Claim{Owns: solveOwns, Marker: solve.ManifestFile, Key: "solve", ID: r.problem.Hash}); err != nil {
			return err
		}
	}
	ctx, stopSignals := interruptible()
	defer stopSignals()
	stopWatch := e.watchMemory(r.limits, est)
	opt := solve.RunOptions{Workers: r.rf.workers, Shard: r.shard.index, Shards: r.shard.count, Resume: r.resume,
		NoCharts: !r.charts, Progress: r.progress, Context: ctx, Derived: []string{htmlreport.File}}
	if dir != nil {
		opt.Dir = dir.Path
	}
	doc, charts, err := r.problem.Run(opt)
	stopWatch()
	var ie *solve.InterruptedError
	switch {
	case errors.As(err, &ie):
		return r.interrupted(ie)
	case err != nil:
		dir.Abandon()
		return sweepError(err)
	case doc == nil:
		_, err = fmt.Fprintf(e.stdout, "%s: shard %d/%d: wrote %s and %s in %s (join the shards with stormsim merge)\n",
			safetext.Terminal(r.problem.Name), r.shard.index, r.shard.count, solve.ManifestFile, solve.ProbesFile, safetext.Terminal(r.out.dir))
		return err
	}
	if err := doc.WriteTable(e.stdout); err != nil {
		return err
	}
	if r.out.dir != "" {
		if _, err := writeReport(r.out.dir); err != nil {
			return fmt.Errorf("stormsim solve: the report: %w", err)
		}
		fmt.Fprintf(e.stdout, "\nwrote %s, %s, %s, %s, %s and %d chart files in %s\n", solve.ResultFile, solve.CSVFile, solve.ProbesFile, solve.ManifestFile,
			htmlreport.File, len(charts), safetext.Terminal(r.out.dir))
	}
	return solveVerdict(doc)
}

// solveVerdict is the exit code of a finished solve: 0 when every case
// has an answer, 1 (the output says why) when one has none.
func solveVerdict(doc *solve.Document) error {
	if doc.Status == "answer" {
		return nil
	}
	none := 0
	for _, c := range doc.Cases {
		if c.Result.Status != "answer" {
			none++
		}
	}
	what := "no value meets every requirement"
	if len(doc.Cases) > 1 {
		what = fmt.Sprintf("%d of %d cases have no value that meets every requirement", none, len(doc.Cases))
	}
	return &exitError{code: ExitCheckFailed, err: fmt.Errorf("stormsim solve: %s: %s (see above: what fails, what came closest, what to relax)", safetext.Terminal(doc.Name), what)}
}

// parseFlags reads and validates the flags: done is true when help was
// asked for.
func (r *solveRun) parseFlags(cmd *command, args []string) (done bool, err error) {
	fs := flagSet(cmd.name)
	fs.StringVarP(&r.file, "config", "c", "", "solve `FILE` (YAML: base or scenario, vary, require; across, given)")
	r.out.add(fs, "write solve.json, solve.csv, probes.ndjson, charts and report.html into `DIR` (created)")
	fs.StringArrayVar(&r.sets, "set", nil, "override a key of the base scenario with a YAML `path=value` (repeatable)")
	r.rf.add(fs)
	r.batchFlags.add(fs, "solve only the across values whose index % N == I", "reuse the probes already in DIR/probes.ndjson (of the same solve) and run the rest")
	if done, err := parse(r.e, cmd, fs, args); done || err != nil {
		return done, err
	}
	if err := r.rf.check(cmd.name); err != nil {
		return false, err
	}
	if r.file == "" {
		return false, usageErrorf("stormsim solve: -c SOLVE.yaml is required")
	}
	if err := r.batchFlags.resolve(r.e, cmd.name); err != nil {
		return false, err
	}
	if r.out.dir == "" && (r.resume || r.shard.count > 1) {
		return false, usageErrorf("stormsim solve: --resume and --shard keep probes in a directory: give -o DIR")
	}
	r.limits, err = r.rf.limits(cmd.name)
	return false, err
}

// estimate bounds what the solve can ask of the machine, refuses what is
// beyond its limits and announces the rest.
func (r *solveRun) estimate() (budget.Estimate, error) {
	p := r.problem
	sh := p.Shape()
	est := budget.Sweep(sh, r.limits, r.rf.workers)
	free := int64(-1)
	if r.out.dir != "" {
		free = budget.FreeDisk(r.out.dir)
	}
	if err := est.CheckSweep(r.limits, free, p.Replications, r.out.dir); err != nil {
		return est, solveOverBudget(err, p, r.rf)
	}
	cases := ""
	if n := p.Cases(); n > 1 {
		cases = fmt.Sprintf(" over %d across values", n)
	}
	cores := min(est.Concurrent, r.limits.Cores)
	r.progress.Say("%s: at most %s probes%s of %d replication%s of %d polic%s, up to %s clients: at least %s of computing on %d core%s, at most about %s of memory (budget %s)",
		safetext.Terminal(p.Name), human.Count(int64(sh.Points)), cases, p.Replications, plural(p.Replications, "", "s"), len(p.Policies), plural(len(p.Policies), "y", "ies"),
		human.Count(int64(est.Clients)), human.Duration(est.MinTime), cores, plural(cores, "", "s"), human.Bytes(est.MemoryBytes), human.Bytes(r.limits.MemoryBytes))
	return est, nil
}

// solveOverBudget turns a budget refusal into a config error at the key
// to change.
func solveOverBudget(err error, p *solve.Problem, rf runFlags) error {
	var oe *budget.OverError
	if !errors.As(err, &oe) {
		return err
	}
	where := p.Where(oe.Key)
	if oe.Key == "replications" && rf.fs.Changed("replications") {
		where = fmt.Sprintf("--replications %d", rf.replications)
	}
	if oe.Key == "axes" {
		where = p.Where("vary")
	}
	return badInput(fmt.Errorf("%s: %s: %s", where, oe.Key, oe.Message))
}

// interrupted is the error of a solve Ctrl-C stopped: what is kept and
// the command that goes on.
func (r *solveRun) interrupted(ie *solve.InterruptedError) error {
	if ie.File == "" {
		return &exitError{code: ExitInterrupted, err: fmt.Errorf("stormsim solve: %v; nothing was written (give -o DIR to keep probes and --resume)", ie)}
	}
	return &exitError{code: ExitInterrupted, err: fmt.Errorf("stormsim solve: interrupted: %s probes are in %s, each line whole; continue with: %s",
		human.Count(int64(ie.Probes)), ie.File, resumeCommand("solve", r.args))}
}

// solveOwns reports whether a solve writes the directory entry name: its
// files, and its charts, whose names follow its requirements.
func solveOwns(name string) bool {
	switch name {
	case solve.ResultFile, solve.CSVFile, solve.ProbesFile, solve.ManifestFile, htmlreport.File:
		return true
	}
	ext := filepath.Ext(name)
	return ext == ".png" || ext == ".svg"
}
