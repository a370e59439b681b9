package cli

import (
	"fmt"
	"io"
	"path/filepath"

	"stormsim/internal/budget"
	"stormsim/internal/outdir"
	"stormsim/plots"
	"stormsim/results"
)

func init() {
	register(command{
		name:    "run",
		summary: "run the storm of a config for each policy (and replication); print a summary or JSON, -o DIR writes it with charts",
		usage:   "-c FILE [--set path=value]... [--policy label]... [--replications R] [--workers N] [--format table|json] [-o DIR [--charts=false]]",
		run:     run,
	})
}

// ResultFile is the name of the result document written into -o DIR.
const ResultFile = "result.json"

func run(e *env, args []string) error {
	cmd, _ := lookup("run")
	fs := flagSet(cmd.name)
	var sf scenarioFlags
	sf.add(fs)
	format := fs.String("format", "table", "stdout `format`: table or json")
	outDir := fs.StringP("out", "o", "", "also write the JSON result to `DIR`/"+ResultFile+" and the charts (DIR is created)")
	charts := fs.Bool("charts", true, "with -o, draw the charts (PNG and SVG) into DIR")
	var rf runFlags
	rf.add(fs)
	if done, err := parse(e, cmd, fs, args); done || err != nil {
		return err
	}
	if *format != "table" && *format != "json" {
		return usageErrorf("stormsim run: --format must be table or json (got %q)", *format)
	}
	if err := rf.check(cmd.name); err != nil {
		return err
	}
	sf.sets = rf.sets(sf.sets)
	s, doc, err := sf.loadDocument(cmd.name)
	if err != nil {
		return err
	}
	specs, err := results.SelectPolicies(s, sf.policies)
	if err != nil {
		return badInput(err)
	}
	limits, err := rf.limits(cmd.name)
	if err != nil {
		return err
	}
	est := budget.Run(s, len(specs), limits, rf.workers)
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
	defer e.watchMemory(limits, est)()
	res, err := results.BuildParallel(s, sf.policies, rf.workers)
	if err != nil {
		dir.Abandon()
		return err
	}
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
