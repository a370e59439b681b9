package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"stormsim/config"
	"stormsim/internal/budget"
	"stormsim/internal/human"
	"stormsim/internal/outdir"
	"stormsim/internal/safetext"
	"stormsim/sweep"
)

// cmdSweep is stormsim sweep.
var cmdSweep = &command{
	name:    "sweep",
	summary: "run a scenario over a grid of config values: sweep.ndjson, sweep.csv and charts",
	usage:   "-c SWEEP.yaml -o DIR [--replications R] [--workers N] [--max-memory SIZE] [--shard I/N] [--resume] [--progress auto|plain|none] [--charts=false]",
	run:     runSweep,
}

func runSweep(e *env, cmd *command, args []string) error {
	fs := flagSet(cmd.name)
	file := fs.StringP("config", "c", "", "sweep `FILE` (YAML: base or scenario, axes, metrics)")
	outDir := fs.StringP("out", "o", "", "write sweep.json, sweep.ndjson, sweep.csv and charts into `DIR` (created)")
	var rf runFlags
	rf.add(fs)
	shard := fs.String("shard", "", "run only points whose index % N == I, given as `I/N` (join the shards with stormsim merge)")
	resume := fs.Bool("resume", false, "keep the points already in DIR/sweep.ndjson (of the same sweep) and run the rest")
	progress := fs.String("progress", "auto", "progress on stderr: `auto` (a live line on a terminal, else plain), plain (a line every few seconds) or none")
	charts := fs.Bool("charts", true, "draw the charts")
	if done, err := parse(e, cmd, fs, args); done || err != nil {
		return err
	}
	if err := rf.check(cmd.name); err != nil {
		return err
	}
	if *file == "" || *outDir == "" {
		return usageErrorf("stormsim sweep: -c SWEEP.yaml and -o DIR are required")
	}
	shardI, shardN, err := parseShard(*shard)
	if err != nil {
		return err
	}
	pr, err := progressFlag(e, cmd.name, *progress)
	if err != nil {
		return err
	}
	limits, err := rf.limits(cmd.name)
	if err != nil {
		return err
	}
	plan, err := sweep.Open(*file, rf.replications)
	if err != nil {
		return badInput(err)
	}
	name := safetext.Terminal(plan.Name)
	points := plan.ShardSize(shardI, shardN)
	grid := human.Count(int64(plan.Size)) + " points (" + plan.Dimensions() + ")"
	if shardN > 1 {
		grid = fmt.Sprintf("%s of %s: shard %d/%d", human.Count(int64(points)), grid, shardI, shardN)
	}
	ctx, stopSignals := interruptible()
	defer stopSignals()
	err = plan.Check(func(done int) bool {
		pr.Checking(name+": "+grid, done, plan.Size)
		return ctx.Err() == nil
	})
	var ie *sweep.InterruptedError
	if errors.As(err, &ie) {
		return &exitError{code: ExitInterrupted, err: fmt.Errorf("stormsim sweep: interrupted while checking the grid (%s of %s points checked); nothing was run or written",
			human.Count(int64(ie.Done)), human.Count(int64(ie.Points)))}
	}
	if err != nil {
		return badInput(err)
	}
	est := budget.Sweep(shardShape(plan.Shape(), points, plan.Size, shardN > 1), limits, rf.workers)
	free := budget.FreeDisk(*outDir)
	if err := est.CheckSweep(limits, free, plan.Replications, *outDir); err != nil {
		return sweepOverBudget(err, plan, rf)
	}
	pr.Say("%s: %s storms (%d replication%s of %d polic%s a point) of up to %s clients: at least %s of computing on %d core%s, about %s of memory (budget %s), about %s of files in %s%s",
		name, human.Count(est.Storms), plan.Replications, plural(plan.Replications, "", "s"), len(plan.Labels), plural(len(plan.Labels), "y", "ies"),
		human.Count(int64(est.Clients)), human.Duration(est.MinTime), min(est.Concurrent, limits.Cores), plural(min(est.Concurrent, limits.Cores), "", "s"),
		human.Bytes(est.MemoryBytes), human.Bytes(limits.MemoryBytes), human.Bytes(est.OutputBytes), safetext.Terminal(*outDir), freeNote(free))
	dir, err := outdir.Prepare(*outDir)
	if err != nil {
		return badInput(fmt.Errorf("stormsim sweep: %w", err))
	}
	stopWatch := e.watchMemory(limits, est)
	written, err := plan.Run(sweep.Options{Dir: dir.Path, Workers: rf.workers, Shard: shardI, Shards: shardN,
		Resume: *resume, NoCharts: !*charts, Progress: pr, Context: ctx})
	stopWatch()
	if errors.As(err, &ie) {
		what := fmt.Sprintf("interrupted: %s of %s points are in %s, each line whole; continue with", human.Count(int64(ie.Done)), human.Count(int64(ie.Points)), ie.File)
		if ie.Finishing {
			what = fmt.Sprintf("interrupted while writing %s and the charts; all %s points are in %s; write them with", sweep.CSVFile, human.Count(int64(ie.Points)), ie.File)
		}
		return &exitError{code: ExitInterrupted, err: fmt.Errorf("stormsim sweep: %s: %s", what, resumeCommand(args))}
	}
	if err != nil {
		dir.Abandon()
		return sweepError(err)
	}
	files := []string{sweep.ManifestFile, sweep.PointsFile}
	if shardN <= 1 {
		files = append(files, sweep.CSVFile)
	}
	msg := fmt.Sprintf("%s: %d points, %d replications per policy: wrote %s in %s", name, plan.Size, plan.Replications, strings.Join(files, ", "), *outDir)
	switch {
	case shardN > 1:
		msg += fmt.Sprintf(" (shard %d/%d; join the shards with stormsim merge)", shardI, shardN)
	case len(written) > 0:
		msg += fmt.Sprintf(", and %d chart files", len(written))
	}
	_, err = fmt.Fprintln(e.stdout, msg)
	return err
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

// resumeCommand is the command line that continues an interrupted sweep:
// this one, with --resume.
func resumeCommand(args []string) string {
	parts := []string{"stormsim", "sweep"}
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

// parseShard reads --shard I/N; "" means no sharding.
func parseShard(s string) (i, n int, err error) {
	if s == "" {
		return 0, 1, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, usageErrorf("stormsim sweep: --shard must be I/N with 0 <= I < N, e.g. 0/4 (got %q)", s)
	}
	return i, n, nil
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
