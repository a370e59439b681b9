package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"stormsim/htmlreport"
	"stormsim/internal/outdir"
	"stormsim/solve"
	"stormsim/sweep"
)

// cmdMerge is stormsim merge.
var cmdMerge = &command{
	name:      "merge",
	summary:   "join the output directories of a sharded sweep or solve into what an unsharded run writes",
	usage:     "DIR... -o OUT [--charts=false] [--overwrite]",
	run:       runMerge,
	takesArgs: true,
}

func runMerge(e *env, cmd *command, args []string) error {
	fs := flagSet(cmd.name)
	var out outFlags
	out.add(fs, "write the merged sweep or solve into `OUT` (created)")
	charts := fs.Bool("charts", true, "draw the charts")
	if done, err := parse(e, cmd, fs, args); done || err != nil {
		return err
	}
	if out.dir == "" || fs.NArg() == 0 {
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
	if solves > 0 {
		return mergeSolve(e, cmd, &out, fs.Args(), *charts)
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

// mergeSolve joins the shards of one solve into out, as an unsharded solve
// writes it, and prints its table; its exit code is the solve's.
func mergeSolve(e *env, cmd *command, out *outFlags, shards []string, charts bool) error {
	var head struct {
		Solve string `json:"solve"`
	}
	if data, err := os.ReadFile(filepath.Join(shards[0], solve.ManifestFile)); err == nil {
		_ = json.Unmarshal(data, &head) // solve.Merge says why a manifest is wrong
	}
	dir, err := out.prepare(cmd.name, outdir.Claim{Owns: solveOwns, Marker: solve.ManifestFile, Key: "solve", ID: head.Solve})
	if err != nil {
		return err
	}
	doc, written, err := solve.Merge(dir.Path, shards, charts, htmlreport.File)
	if err != nil {
		dir.Abandon()
		return sweepError(err)
	}
	report, err := writeReport(dir.Path)
	if err != nil {
		return fmt.Errorf("stormsim merge: the report: %w", err)
	}
	if _, err := fmt.Fprintf(e.stdout, "merged %d shard directories into %s (%d chart files and %s)\n\n", len(shards), out.dir, len(written), report); err != nil {
		return err
	}
	if err := doc.WriteTable(e.stdout); err != nil {
		return err
	}
	return solveVerdict(doc)
}
