package cli

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"stormsim/config"
	"stormsim/internal/safetext"
	"stormsim/sim"
)

// scenarioFlags are the flags that pick and adjust a scenario.
type scenarioFlags struct {
	configPath string
	sets       []string
	policies   []string
}

func (f *scenarioFlags) add(fs *pflag.FlagSet) {
	fs.StringVarP(&f.configPath, "config", "c", "", "scenario config `FILE` (YAML)")
	// StringArray, not StringSlice: a value such as {kind: slots, slot: 10ms}
	// contains commas that must not split it.
	fs.StringArrayVar(&f.sets, "set", nil, "override a config key with a YAML `path=value`, e.g. admission.per_slot=500 or policies[0].base=50ms (repeatable)")
	fs.StringArrayVar(&f.policies, "policy", nil, "run only the policy with this `label` (repeatable)")
}

// load reads and resolves the scenario; every failure is bad input.
func (f *scenarioFlags) load(cmd string) (*sim.Scenario, error) {
	file, _, err := f.loadDocument(cmd)
	if err != nil {
		return nil, err
	}
	return file.Scenario, nil
}

// warnInert says on w which keys of the scenario file cannot act; the
// command goes on, its exit code unchanged.
func warnInert(w io.Writer, file *config.ScenarioFile) {
	for _, warning := range file.Warnings {
		fmt.Fprintln(w, safetext.Terminal(warning.String()))
	}
}

// loadDocument reads and resolves the scenario file, and returns the
// document too, which locates keys for errors found later.
func (f *scenarioFlags) loadDocument(cmd string) (*config.ScenarioFile, *config.Document, error) {
	if f.configPath == "" {
		return nil, nil, usageErrorf("stormsim %s: -c/--config FILE is required", cmd)
	}
	doc, err := config.LoadDocument(f.configPath, f.sets)
	if err != nil {
		return nil, nil, badInput(err)
	}
	file, err := doc.ScenarioFile()
	return file, doc, badInput(err)
}
