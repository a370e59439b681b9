package cli

import (
	"go/build"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDataFlowsOneWay keeps stormsim's packages in the order its data
// flows: config (YAML) -> sim (the engine, with its policies and models)
// -> runner -> results -> check and plots -> sweep (which holds its
// points to the base scenario's checks) -> solve (which searches with
// sweep's points) -> htmlreport (which sets them, and a calibration, on
// one page) -> cli; budget estimates from the scenario and the results'
// shape, upstream of what runs it. No package
// imports one further down the flow, so that, for instance, results takes
// the config hash it is given rather than reaching back for package config.
func TestDataFlowsOneWay(t *testing.T) {
	downstream := map[string][]string{
		"policies": {"budget", "models", "sim", "config", "runner", "results", "check", "plots", "sweep", "solve", "htmlreport", "cli", "calibrate", "gateway"},
		"models":   {"budget", "sim", "config", "runner", "results", "check", "plots", "sweep", "solve", "htmlreport", "cli", "calibrate", "gateway"},
		"sim":      {"budget", "config", "runner", "results", "check", "plots", "sweep", "solve", "htmlreport", "cli", "calibrate", "gateway"},
		"config":   {"runner", "results", "check", "plots", "sweep", "solve", "htmlreport", "cli", "calibrate"},
		"runner":   {"config", "check", "plots", "sweep", "solve", "htmlreport", "cli", "calibrate"},
		"results":  {"budget", "config", "runner", "check", "plots", "sweep", "solve", "htmlreport", "cli", "calibrate"},
		"check":    {"config", "runner", "plots", "sweep", "solve", "htmlreport", "cli", "calibrate"},
		"plots":    {"config", "runner", "results", "check", "sweep", "solve", "htmlreport", "cli", "calibrate"},
		"sweep":    {"solve", "htmlreport", "cli", "calibrate"},
		"solve":    {"htmlreport", "cli", "calibrate"},
		"budget":   {"config", "runner", "check", "plots", "sweep", "solve", "htmlreport", "cli", "calibrate", "gateway"},
		// calibrate's page is drawn from calibrate/report's document, by
		// the command that ran the calibration.
		"calibrate":  {"htmlreport", "cli"},
		"htmlreport": {"cli"},
	}
	for pkg, forbidden := range downstream {
		p, err := build.ImportDir(filepath.Join("..", pkg), 0)
		if err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		for _, imp := range p.Imports {
			name, ok := strings.CutPrefix(imp, "stormsim/")
			if !ok {
				continue
			}
			top, _, _ := strings.Cut(name, "/")
			if slices.Contains(forbidden, top) {
				t.Errorf("%s imports %s, which is downstream of it", pkg, imp)
			}
		}
	}
}
