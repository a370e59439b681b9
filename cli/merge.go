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
	usage:     "DIR... -o OUT [--charts=false] [--overwrite]",
	run:       runMerge,
	takesArgs: true,
}

func runMerge(e *env, cmd *command, args []string) error {
	fs := flagSet(cmd.name)
	var out outFlags
	out.add(fs, "write the merged sweep into `OUT` (created)")
	charts := fs.Bool("charts", true, "draw the charts")
	if done, err := parse(e, cmd, fs, args); done || err != nil {
		return err
	}
	if out.dir == "" || fs.NArg() == 0 {
		return usageErrorf("stormsim merge: give the shard directories and -o OUT")
	}
	// The merged sweep is the shards' sweep: its manifest names it (merge
	// says why when the shards disagree or have none).
	m, err := sweep.ReadManifest(fs.Arg(0))
	if err != nil {
		return badInput(fmt.Errorf("stormsim merge: %w", err))
	}
	dir, err := out.prepare(cmd.name, outdir.Claim{Owns: owns(append(m.Files(), htmlreport.File)), Marker: sweep.ManifestFile, Key: "sweep", ID: m.Sweep})
	if err != nil {
		return err
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
	_, err = fmt.Fprintf(e.stdout, "merged %d shard directories into %s (%d chart files and %s)\n", fs.NArg(), out.dir, len(written), report)
	return err
}
