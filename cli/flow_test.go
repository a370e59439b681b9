package cli

import (
	"errors"
	"go/build"
	"io/fs"
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
		for _, imp := range moduleImports(t, pkg) {
			top, _, _ := strings.Cut(imp, "/")
			if slices.Contains(forbidden, top) {
				t.Errorf("%s imports %s, which is downstream of it", pkg, imp)
			}
		}
	}
}

// layers places every package of the module: a package imports only
// packages of lower layers. The leaves (layer 0) import nothing of the
// module; the rules the simulator and the gateway share (policies,
// models) come next, then the engine and the gateway, and the thin mains
// last. Two packages of one layer know nothing of each other: policies and
// models, sim and the gateway, the model's side and the lab's, calibrate
// and the one-file report (htmlreport), which draws calibrate/report's
// document.
var layers = [][]string{
	{"policies/rng", "internal/param", "internal/quantile", "internal/atomicfile", "internal/finitejson", "internal/human",
		"internal/safetext", "internal/suggest", "internal/outdir", "internal/outdir/outdirtest", "internal/chromium", "internal/imagediff", "internal/syncbuf",
		"gateway/logline", "gateway/protocol"},
	{"policies", "models", "internal/orderedjson", "gateway/store"},
	{"sim", "gateway", "gateway/client", "internal/pgtest"},
	{"config", "results", "plots", "gateway/storm"},
	{"runner", "check", "calibrate/measured"},
	{"budget", "calibrate/compare", "calibrate/fit", "calibrate/lab"},
	{"sweep", "calibrate/report"},
	{"solve"},
	{"calibrate", "htmlreport"},
	{"cli"},
	{"cmd/stormsim", "cmd/gateway"},
}

// TestEveryPackageHasItsLayer: every package of the module is in layers,
// once, and imports only packages of lower layers, so that a new package,
// or an import that runs against the flow, is a decision made here.
func TestEveryPackageHasItsLayer(t *testing.T) {
	layerOf := map[string]int{}
	for l, pkgs := range layers {
		for _, p := range pkgs {
			if _, twice := layerOf[p]; twice {
				t.Errorf("%s is in layers twice", p)
			}
			layerOf[p] = l
		}
	}
	found := modulePackages(t)
	for _, p := range found {
		if _, ok := layerOf[p]; !ok {
			t.Errorf("package %s has no layer: add it to layers", p)
		}
	}
	for p := range layerOf {
		if !slices.Contains(found, p) {
			t.Errorf("layers lists %s, which is not a package of the module", p)
		}
	}
	for _, p := range found {
		l, ok := layerOf[p]
		if !ok {
			continue
		}
		for _, imp := range moduleImports(t, p) {
			if il, ok := layerOf[imp]; ok && il >= l {
				t.Errorf("%s (layer %d) imports %s (layer %d): only lower layers may be imported", p, l, imp, il)
			}
		}
	}
}

// modulePackages lists the module's packages as paths below its root,
// found by walking the tree (testdata and hidden directories aside).
func modulePackages(t *testing.T) []string {
	t.Helper()
	var pkgs []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if path != ".." && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		_, err = build.ImportDir(path, 0)
		var none *build.NoGoError
		switch {
		case errors.As(err, &none):
			return nil
		case err != nil:
			return err
		}
		rel, _ := filepath.Rel("..", path)
		pkgs = append(pkgs, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// moduleImports lists what package pkg (a path below the module's root)
// imports of the module, its tests aside.
func moduleImports(t *testing.T, pkg string) []string {
	t.Helper()
	p, err := build.ImportDir(filepath.Join("..", pkg), 0)
	if err != nil {
		t.Fatalf("%s: %v", pkg, err)
	}
	var out []string
	for _, imp := range p.Imports {
		if name, ok := strings.CutPrefix(imp, "stormsim/"); ok {
			out = append(out, name)
		}
	}
	return out
}
