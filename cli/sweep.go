package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"stormsim/sweep"
)

func init() {
	register(command{
		name:    "sweep",
		summary: "run a scenario over a grid of config values: sweep.ndjson, sweep.csv and charts",
		usage:   "-c SWEEP.yaml -o DIR [--replications R] [--workers N] [--shard I/N] [--resume] [--progress auto|plain|none] [--charts=false]",
		run:     runSweep,
	})
}

func runSweep(e *env, args []string) error {
	cmd, _ := lookup("sweep")
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
	var pr *sweep.Progress
	switch *progress {
	case "auto":
		pr = sweep.NewProgress(e.stderr, isTerminal(e.stderr))
	case "plain":
		pr = sweep.NewProgress(e.stderr, false)
	case "none":
	default:
		return usageErrorf("stormsim sweep: --progress must be auto, plain or none (got %q)", *progress)
	}
	plan, err := sweep.Load(*file, rf.replications)
	if err != nil {
		return badInput(err)
	}
	written, err := plan.Run(sweep.Options{Dir: *outDir, Workers: rf.workers, Shard: shardI, Shards: shardN,
		Resume: *resume, NoCharts: !*charts, Progress: pr})
	if err != nil {
		return sweepError(err)
	}
	files := []string{sweep.ManifestFile, sweep.PointsFile}
	if shardN <= 1 {
		files = append(files, sweep.CSVFile)
	}
	msg := fmt.Sprintf("%s: %d points, %d replications per policy: wrote %s in %s", plan.Name, len(plan.Points), plan.Replications, strings.Join(files, ", "), *outDir)
	switch {
	case shardN > 1:
		msg += fmt.Sprintf(" (shard %d/%d; join the shards with stormsim merge)", shardI, shardN)
	case len(written) > 0:
		msg += fmt.Sprintf(", and %d chart files", len(written))
	}
	_, err = fmt.Fprintln(e.stdout, msg)
	return err
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
