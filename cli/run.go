package cli

import (
	"fmt"
	"os"
	"path/filepath"

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
	s, err := sf.load(cmd.name)
	if err != nil {
		return err
	}
	if _, err := results.SelectPolicies(s, sf.policies); err != nil {
		return badInput(err)
	}
	if *outDir != "" {
		if err := os.MkdirAll(*outDir, 0o755); err != nil {
			return usageErrorf("stormsim run: -o %s: %v", *outDir, err)
		}
	}
	doc, err := results.BuildParallel(s, sf.policies, rf.workers)
	if err != nil {
		return err
	}
	if *outDir != "" {
		path := filepath.Join(*outDir, ResultFile)
		if err := doc.WriteJSON(path); err != nil {
			return fmt.Errorf("stormsim run: writing %s: %w", path, err)
		}
		if *charts {
			if _, err := plots.Write(*outDir, chartRun(doc, s), plots.Options{}); err != nil {
				return fmt.Errorf("stormsim run: %w", err)
			}
		}
	}
	if *format == "json" {
		data, err := doc.JSON()
		if err != nil {
			return err
		}
		_, err = e.stdout.Write(data)
		return err
	}
	if err := doc.WriteTable(e.stdout); err != nil {
		return err
	}
	return doc.WriteSummaryTable(e.stdout)
}
