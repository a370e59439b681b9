package cli

import (
	"fmt"
	"path/filepath"
	"strings"

	"stormsim/check"
	"stormsim/htmlreport"
	"stormsim/internal/outdir"
	"stormsim/plots"
)

// cmdPlot is stormsim plot.
var cmdPlot = &command{
	name:      "plot",
	summary:   "redraw the charts of saved results, overlaying several runs with their names",
	usage:     "RESULT.json... -o DIR [--label NAME]...",
	run:       runPlot,
	takesArgs: true,
}

func runPlot(e *env, cmd *command, args []string) error {
	fs := flagSet(cmd.name)
	outDir := fs.StringP("out", "o", "", "write the charts into `DIR` (created)")
	labels := fs.StringArray("label", nil, "legend `name` of each result, in order (repeatable); default each config's name, or its file when names repeat")
	if done, err := parse(e, cmd, fs, args); done || err != nil {
		return err
	}
	files := fs.Args()
	if *outDir == "" || len(files) == 0 {
		return usageErrorf("stormsim plot: give result files and -o DIR")
	}
	if len(*labels) > 0 && len(*labels) != len(files) {
		return usageErrorf("stormsim plot: %d --label for %d results; give one per result or none", len(*labels), len(files))
	}
	var runs []plots.Run
	for _, f := range files {
		doc, err := check.ReadDocument(f)
		if err != nil {
			return badInput(err)
		}
		run := htmlreport.ChartRun(doc, scenarioOf(f, doc))
		if err := run.Validate(); err != nil {
			return usageErrorf("%s: cannot chart it: %v", f, err)
		}
		runs = append(runs, run)
	}
	if err := labelRuns(runs, files, *labels); err != nil {
		return err
	}
	dir, err := outdir.Prepare(*outDir)
	if err != nil {
		return badInput(fmt.Errorf("stormsim plot: %w", err))
	}
	written, err := plots.Overlay(dir.Path, runs, plots.Options{})
	if err != nil {
		dir.Abandon()
		return err
	}
	if err := dir.RemoveStale(plots.FileNames(plots.ChartNames...), written); err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "wrote %d chart files into %s\n", len(written), *outDir)
	return err
}

// labelRuns names each run in the legends: by --label when given (labels,
// one per file), else by its config's name, or by its file when names
// repeat. Two runs may not share a legend name.
func labelRuns(runs []plots.Run, files, labels []string) error {
	names := map[string]int{}
	for _, run := range runs {
		names[run.Name]++
	}
	labelled := map[string]int{}
	for i := range runs {
		switch {
		case len(labels) > 0:
			runs[i].Label = labels[i]
		case names[runs[i].Name] > 1:
			runs[i].Label = fileLabel(files[i])
		}
		label := runs[i].Label
		if label == "" {
			label = runs[i].Name
		}
		if j, dup := labelled[label]; dup && len(runs) > 1 {
			return usageErrorf("stormsim plot: %s and %s would both be labelled %q in the legends; name each with --label NAME (one per result, in order)", files[j], files[i], label)
		}
		labelled[label] = i
	}
	return nil
}

// fileLabel names a result by its file: "runs/before/result.json" is
// "before", "old.json" is "old".
func fileLabel(path string) string {
	base := strings.TrimSuffix(filepath.Base(path), ".json")
	if base == strings.TrimSuffix(ResultFile, ".json") {
		return filepath.Base(filepath.Dir(path))
	}
	return base
}
