package cli

import (
	"fmt"

	"stormsim/htmlreport"
	"stormsim/internal/outdir"
	"stormsim/solve"
	"stormsim/sweep"
)

// cmdMerge is stormsim merge.
var cmdMerge = &command{
	name:      "merge",
	summary:   "join the output directories of a sharded sweep or solve into what an unsharded run writes",
	usage:     "DIR... -o OUT [--charts=false]",
	run:       runMerge,
	takesArgs: true,
}

func runMerge(e *env, cmd *command, args []string) error {
	fs := flagSet(cmd.name)
	out := fs.StringP("out", "o", "", "write the merged sweep or solve into `OUT` (created)")
	charts := fs.Bool("charts", true, "draw the charts")
	if done, err := parse(e, cmd, fs, args); done || err != nil {
		return err
	}
	if *out == "" || fs.NArg() == 0 {
		return usageErrorf("stormsim merge: give the shard directories and -o OUT")
	}
	solves := 0
	for _, d := range fs.Args() {
		if solve.IsDir(d) {
			solves++
		}
	}
	if solves > 0 && solves < fs.NArg() {
		return usageErrorf("stormsim merge: %d of the %d directories hold a solve (%s), the others not: merge the shards of one sweep or of one solve", solves, fs.NArg(), solve.ManifestFile)
	}
	dir, err := outdir.Prepare(*out)
	if err != nil {
		return badInput(fmt.Errorf("stormsim merge: %w", err))
	}
	if solves > 0 {
		doc, written, err := solve.Merge(dir.Path, fs.Args(), *charts)
		if err != nil {
			dir.Abandon()
			return sweepError(err)
		}
		if _, err := fmt.Fprintf(e.stdout, "merged %d shard directories into %s (%d chart files)\n\n", fs.NArg(), *out, len(written)); err != nil {
			return err
		}
		if err := doc.WriteTable(e.stdout); err != nil {
			return err
		}
		return solveVerdict(doc)
	}
	written, err := sweep.Merge(dir.Path, fs.Args(), *charts, htmlreport.File)
	if err != nil {
		dir.Abandon()
		return sweepError(err)
	}
	report, err := writeReport(dir.Path)
	if err != nil {
		return fmt.Errorf("stormsim merge: the report: %w", err)
	}
	_, err = fmt.Fprintf(e.stdout, "merged %d shard directories into %s (%d chart files and %s)\n", fs.NArg(), *out, len(written), report)
	return err
}
