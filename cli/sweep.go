package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"stormsim/budget"
	"stormsim/config"
	"stormsim/htmlreport"
	"stormsim/internal/human"
	"stormsim/internal/outdir"
	"stormsim/internal/safetext"
	"stormsim/sweep"
)

// cmdSweep is stormsim sweep.
var cmdSweep = &command{
	name:    "sweep",
	summary: "run a scenario over a grid of config values: sweep.ndjson, sweep.csv and charts",
	usage:   "-c SWEEP.yaml -o DIR [--set path=value]... [--replications R] [--workers N] [--max-memory SIZE] [--shard I/N | --shard auto[/N]] [--resume] [--overwrite] [--progress auto|plain|none] [--charts=false]",
	run:     runSweep,
}

// sweepRun is one stormsim sweep: its flags and what they resolve to.
type sweepRun struct {
	e    *env
	args []string // as given, for the --resume command
	file string
	sets []string // --set, on the base scenario of every point
	out  outFlags
	rf   runFlags
	batchFlags
	limits budget.Limits
	plan   *sweep.Plan
	name   string // the sweep's name, safe for a terminal
	points int    // points this shard runs
}

func runSweep(e *env, cmd *command, args []string) error {
	r := &sweepRun{e: e, args: args}
	if done, err := r.parseFlags(cmd, args); done || err != nil {
		return err
	}
	var err error
	if r.plan, err = sweep.Open(r.file, r.rf.replications); err != nil {
		return badInput(err)
	}
	if err := r.plan.Override(r.sets); err != nil {
		return badInput(err)
	}
	r.name = safetext.Terminal(r.plan.Name)
	r.points = r.plan.ShardSize(r.shard.index, r.shard.count)
	if r.shard.from != "" {
		r.progress.Say("%s: shard %d/%d from %s", r.name, r.shard.index, r.shard.count, r.shard.from)
	}
	ctx, stopSignals := interruptible()
	defer stopSignals()
	if err := r.checkGrid(ctx); err != nil {
		return err
	}
	est, err := r.estimate()
	if err != nil {
		return err
	}
	files := append(r.plan.Manifest().Files(), htmlreport.File)
	// The same sweep run before with other metrics drew other charts: they
	// are its own, which the sweep removes, not files to keep.
	if earlier, err := sweep.ReadManifest(r.out.dir); err == nil && earlier.Sweep == r.plan.Hash {
		files = append(files, earlier.Files()...)
	}
	dir, err := r.out.prepare(cmd.name, outdir.Claim{Owns: owns(files), Marker: sweep.ManifestFile, Key: "sweep", ID: r.plan.Hash})
	if err != nil {
		return err
	}
	stopWatch := e.watchMemory(r.limits, est)
	written, err := r.plan.Run(sweep.Options{Dir: dir.Path, Workers: r.rf.workers, Shard: r.shard.index, Shards: r.shard.count,
		Resume: r.resume, NoCharts: !r.charts, Progress: r.progress, Context: ctx, Derived: []string{htmlreport.File}})
	stopWatch()
	var ie *sweep.InterruptedError
	if errors.As(err, &ie) {
		return r.interrupted(ie)
	}
	if err != nil {
		dir.Abandon()
		return sweepError(err)
	}
	if r.shard.count <= 1 { // a shard's report is the merged sweep's
		if _, err := writeReport(r.out.dir); err != nil {
			return fmt.Errorf("stormsim sweep: the report: %w", err)
		}
	}
	_, err = fmt.Fprintln(e.stdout, r.summary(written))
	return err
}

// parseFlags reads and validates the flags: done is true when help was
// asked for.
func (r *sweepRun) parseFlags(cmd *command, args []string) (done bool, err error) {
	fs := flagSet(cmd.name)
	fs.StringVarP(&r.file, "config", "c", "", "sweep `FILE` (YAML: base or scenario, axes, metrics)")
	r.out.add(fs, "write sweep.json, sweep.ndjson, sweep.csv and charts into `DIR` (created)")
	fs.StringArrayVar(&r.sets, "set", nil, "override a key of the base scenario at every point with a YAML `path=value`, e.g. seed=7 (repeatable; not a key an axis sets)")
	r.rf.add(fs)
	r.batchFlags.add(fs, "run only points whose index % N == I", "keep the points already in DIR/sweep.ndjson (of the same sweep) and run the rest")
	if done, err := parse(r.e, cmd, fs, args); done || err != nil {
		return done, err
	}
	if err := r.rf.check(cmd.name); err != nil {
		return false, err
	}
	if r.file == "" || r.out.dir == "" {
		return false, usageErrorf("stormsim sweep: -c SWEEP.yaml and -o DIR are required")
	}
	if err := r.batchFlags.resolve(r.e, cmd.name); err != nil {
		return false, err
	}
	r.limits, err = r.rf.limits(cmd.name)
	return false, err
}

// batchFlags are the flags of a command that runs many storms into a
// directory, sharded and resumed: sweep and solve.
type batchFlags struct {
	shardFlag, progressMode string
	resume, charts          bool
	shard                   shard
	progress                *sweep.Progress // nil: none
}

// add defines --shard (sharding says what a shard runs), --resume
// (resuming says what it keeps), --progress and --charts.
func (b *batchFlags) add(fs *pflag.FlagSet, sharding, resuming string) {
	fs.StringVar(&b.shardFlag, "shard", "", sharding+", given as `I/N`; auto takes I and N from a Slurm array, "+
		"auto/N takes I from a Kubernetes Indexed Job of N completions (join the shards with stormsim merge)")
	fs.BoolVar(&b.resume, "resume", false, resuming)
	fs.StringVar(&b.progressMode, "progress", "auto", "progress on stderr: `auto` (a live line on a terminal, else plain), plain (a line every few seconds) or none")
	fs.BoolVar(&b.charts, "charts", true, "draw the charts")
}

// resolve reads --shard and --progress.
func (b *batchFlags) resolve(e *env, cmd string) (err error) {
	if b.shard, err = parseShard(b.shardFlag, e.lookupEnv); err != nil {
		return err
	}
	b.progress, err = progressFlag(e, cmd, b.progressMode)
	return err
}

// checkGrid checks every point of the plan, saying how far it got on a
// large grid; Ctrl-C stops it.
func (r *sweepRun) checkGrid(ctx context.Context) error {
	grid := human.Count(int64(r.plan.Size)) + " points (" + r.plan.Dimensions() + ")"
	if r.shard.count > 1 {
		grid = fmt.Sprintf("%s of %s: shard %d/%d", human.Count(int64(r.points)), grid, r.shard.index, r.shard.count)
	}
	err := r.plan.Check(func(done int) bool {
		r.progress.Checking(r.name+": "+grid, done, r.plan.Size)
		return ctx.Err() == nil
	})
	var ie *sweep.InterruptedError
	if errors.As(err, &ie) {
		return interruptedf("stormsim sweep: interrupted while checking the grid (%s of %s points checked); nothing was run or written",
			human.Count(int64(ie.Done)), human.Count(int64(ie.Points)))
	}
	return badInput(err)
}

// estimate estimates what this shard of the sweep asks of the machine,
// refuses what is beyond its limits and announces the rest.
func (r *sweepRun) estimate() (budget.Estimate, error) {
	plan := r.plan
	est := budget.Sweep(shardShape(plan.Shape(), r.points, plan.Size, r.shard.count > 1), r.limits, r.rf.workers)
	free := budget.FreeDisk(r.out.dir)
	if err := est.CheckSweep(r.limits, free, plan.Replications, r.out.dir); err != nil {
		return est, sweepOverBudget(err, plan, r.rf)
	}
	cores := min(est.Concurrent, r.limits.Cores)
	r.progress.Say("%s: %s storms (%d replication%s of %d polic%s a point) of up to %s clients: at least %s of computing on %d core%s, about %s of memory (budget %s), about %s of files in %s%s",
		r.name, human.Count(est.Storms), plan.Replications, plural(plan.Replications, "", "s"), len(plan.Labels), plural(len(plan.Labels), "y", "ies"),
		human.Count(int64(est.Clients)), human.Duration(est.MinTime), cores, plural(cores, "", "s"),
		human.Bytes(est.MemoryBytes), human.Bytes(r.limits.MemoryBytes), human.Bytes(est.OutputBytes), safetext.Terminal(r.out.dir), freeNote(free))
	return est, nil
}

// interrupted is the error of a sweep Ctrl-C stopped: what is written and
// the command that goes on.
func (r *sweepRun) interrupted(ie *sweep.InterruptedError) error {
	what := fmt.Sprintf("interrupted: %s of %s points are in %s, each line whole; continue with", human.Count(int64(ie.Done)), human.Count(int64(ie.Points)), ie.File)
	if ie.Finishing {
		what = fmt.Sprintf("interrupted while writing %s and the charts; all %s points are in %s; write them with", sweep.CSVFile, human.Count(int64(ie.Points)), ie.File)
	}
	return interruptedf("stormsim sweep: %s: %s", what, resumeCommand("sweep", r.args))
}

// summary is the line that says what a finished sweep wrote.
func (r *sweepRun) summary(charts []string) string {
	files := []string{sweep.ManifestFile, sweep.PointsFile}
	if r.shard.count <= 1 {
		files = append(files, sweep.CSVFile, htmlreport.File)
	}
	msg := fmt.Sprintf("%s: %d point%s, %d replication%s per policy: wrote %s in %s", r.name, r.plan.Size, plural(r.plan.Size, "", "s"),
		r.plan.Replications, plural(r.plan.Replications, "", "s"), strings.Join(files, ", "), r.out.dir)
	switch {
	case r.shard.count > 1:
		msg += fmt.Sprintf(" (shard %d/%d; join the shards with stormsim merge)", r.shard.index, r.shard.count)
	case len(charts) > 0:
		msg += fmt.Sprintf(", and %d chart files", len(charts))
	}
	return msg
}

// progressFlag reads --progress: nil for none.
func progressFlag(e *env, cmd, mode string) (*sweep.Progress, error) {
	switch mode {
	case "auto":
		return sweep.NewProgress(e.stderr, isTerminal(e.stderr)), nil
	case "plain":
		return sweep.NewProgress(e.stderr, false), nil
	case "none":
		return nil, nil
	}
	return nil, usageErrorf("stormsim %s: --progress must be auto, plain or none (got %q)", cmd, mode)
}

// shardShape is the part of a sweep's shape one shard of points runs:
// the sweep's totals scaled by its share of points, and no charts.
func shardShape(sh budget.SweepShape, points, size int, sharded bool) budget.SweepShape {
	if !sharded || size == 0 {
		return sh
	}
	f := float64(points) / float64(size)
	sh.Points = points
	sh.Storms = int64(float64(sh.Storms) * f)
	sh.ClientStorms *= f
	sh.Work = sh.Work.Times(f)
	sh.OutputBytes = int64(float64(sh.OutputBytes) * f)
	sh.ChartFiles, sh.ChartValues = 0, 0
	return sh
}

// sweepOverBudget turns a sweep's budget refusal into a config error at
// the key to change.
func sweepOverBudget(err error, plan *sweep.Plan, rf runFlags) error {
	var oe *budget.OverError
	if !errors.As(err, &oe) {
		return err
	}
	where := plan.Where(oe.Key)
	if oe.Key == "replications" && rf.fs.Changed("replications") {
		where = "--replications " + strconv.Itoa(rf.replications)
	}
	return badInput(&config.Error{Where: where, Path: oe.Key, Problem: oe.Message})
}

func freeNote(free int64) string {
	if free < 0 {
		return ""
	}
	return " (" + human.Bytes(free) + " free)"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// resumeCommand is the command line that continues an interrupted sweep
// or calibration: stormsim cmd with args, and --resume.
func resumeCommand(cmd string, args []string) string {
	parts := []string{"stormsim", cmd}
	resumed := false
	for _, a := range args {
		resumed = resumed || a == "--resume" || a == "--resume=true"
		parts = append(parts, shellQuote(a))
	}
	if !resumed {
		parts = append(parts, "--resume")
	}
	return strings.Join(parts, " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,%+@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(safetext.Terminal(s), "'", `'\''`) + "'"
}

// sweepError gives a sweep's input errors (resume into another sweep,
// shards that do not fit) exit code 2.
func sweepError(err error) error {
	var ie *sweep.InputError
	if errors.As(err, &ie) {
		return badInput(err)
	}
	return err
}
