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
// -> runner -> results -> check, plots and sweep -> solve -> cli. No package
// imports one further down the flow, so that, for instance, results takes
// the config hash it is given rather than reaching back for package config.
func TestDataFlowsOneWay(t *testing.T) {
	downstream := map[string][]string{
		"policies": {"models", "sim", "config", "runner", "results", "check", "plots", "sweep", "solve", "cli", "calibrate", "gateway"},
		"models":   {"sim", "config", "runner", "results", "check", "plots", "sweep", "solve", "cli", "calibrate", "gateway"},
		"sim":      {"config", "runner", "results", "check", "plots", "sweep", "solve", "cli", "calibrate", "gateway"},
		"config":   {"runner", "results", "check", "plots", "sweep", "solve", "cli", "calibrate"},
		"runner":   {"config", "check", "plots", "sweep", "solve", "cli", "calibrate"},
		"results":  {"config", "runner", "check", "plots", "sweep", "solve", "cli", "calibrate"},
		"check":    {"config", "runner", "plots", "sweep", "solve", "cli", "calibrate"},
		"plots":    {"config", "runner", "results", "check", "sweep", "solve", "cli", "calibrate"},
		"sweep":    {"check", "solve", "cli", "calibrate"},
		"solve":    {"cli", "calibrate"},
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
