package cli

import (
	"fmt"

	"stormsim/htmlreport"
	"stormsim/internal/outdir"
	"stormsim/sweep"
)

// cmdMerge is stormsim merge.
var cmdMerge = &command{
	name:      "merge",
	summary:   "join the output directories of a sharded sweep into what an unsharded run writes",
	usage:     "DIR... -o OUT [--charts=false]",
	run:       runMerge,
	takesArgs: true,
}

func runMerge(e *env, cmd *command, args []string) error {
	fs := flagSet(cmd.name)
	out := fs.StringP("out", "o", "", "write the merged sweep into `OUT` (created)")
	charts := fs.Bool("charts", true, "draw the charts")
	if done, err := parse(e, cmd, fs, args); done || err != nil {
		return err
	}
	if *out == "" || fs.NArg() == 0 {
		return usageErrorf("stormsim merge: give the shard directories and -o OUT")
	}
	dir, err := outdir.Prepare(*out)
	if err != nil {
		return badInput(fmt.Errorf("stormsim merge: %w", err))
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
