package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"stormsim/results"
)

func init() {
	register(command{
		name:    "run",
		summary: "run the storm of a config once per policy and print a summary or JSON",
		usage:   "-c FILE [--set path=value]... [--policy label]... [--format table|json] [-o DIR]",
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
	outDir := fs.StringP("out", "o", "", "also write the JSON result to `DIR`/"+ResultFile+" (DIR is created)")
	if done, err := parse(e, cmd, fs, args); done || err != nil {
		return err
	}
	if *format != "table" && *format != "json" {
		return usageErrorf("stormsim run: --format must be table or json (got %q)", *format)
	}
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
	doc, err := results.Build(s, sf.policies)
	if err != nil {
		return err
	}
	if *outDir != "" {
		path := filepath.Join(*outDir, ResultFile)
		if err := doc.WriteJSON(path); err != nil {
			return fmt.Errorf("stormsim run: writing %s: %w", path, err)
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
	return doc.WriteTable(e.stdout)
}
