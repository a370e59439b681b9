package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const inlineSweep = `name: s
scenario:
  clients: 10
  admission: {kind: slots, slot: 10ms, per_slot: 2}
  policies: [{name: full, base: 100ms, cap: 1s}]
replications: 3
axes:
  policies[0].base: [50ms, "10", {x: 1, y: [a, b]}]
  admission.per_slot: {from: 1, to: 100, steps: 3, scale: log}
metrics: [convergence_ms, p95(attempts)]
`

func TestParseSweepInline(t *testing.T) {
	f, err := ParseSweep("dir/s.yaml", []byte(inlineSweep))
	if err != nil {
		t.Fatal(err)
	}
	want := []SweepAxis{
		{Path: "policies[0].base", Where: "dir/s.yaml:8", Values: []string{"50ms", `"10"`, "{x: 1, y: [a, b]}"}},
		{Path: "admission.per_slot", Where: "dir/s.yaml:9", Range: &SweepRange{From: "1", To: "100", Steps: 3, Scale: "log"}},
	}
	if !reflect.DeepEqual(f.Axes, want) {
		t.Errorf("axes\n got %+v\nwant %+v", f.Axes, want)
	}
	if f.Name != "s" || f.Replications != 3 || f.BaseFile != "" {
		t.Errorf("name %q replications %d base %q", f.Name, f.Replications, f.BaseFile)
	}
	if len(f.Metrics) != 2 || f.Metrics[1] != (Located{"p95(attempts)", "dir/s.yaml:10"}) {
		t.Errorf("metrics %+v", f.Metrics)
	}
	s, err := f.Base.Scenario()
	if err != nil || s.Clients != 10 {
		t.Fatalf("inline scenario: %v, %+v", err, s)
	}
	// Errors in the inline scenario point into the sweep file.
	badFile, err := ParseSweep("dir/s.yaml", []byte(strings.Replace(inlineSweep, "clients: 10", "clients: -1", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := badFile.Base.Scenario(); err == nil || err.Error() != "dir/s.yaml:3: clients: must not be negative (got -1)" {
		t.Errorf("inline scenario error %v", err)
	}
	if got := f.Base.Where("admission.per_slot"); got != "dir/s.yaml:4" {
		t.Errorf("Where = %s, want dir/s.yaml:4", got)
	}
	if !f.Base.HasKey("clients") || f.Base.HasKey("axes") {
		t.Error("HasKey wrong")
	}
}

func TestParseSweepBaseFileIsRelative(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "configs"), 0o755)
	base := "name: b\nclients: 5\nadmission: {kind: unlimited}\npolicies: [{name: full, base: 1s, cap: 2s}]\n"
	if err := os.WriteFile(filepath.Join(dir, "configs", "b.yaml"), []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	sweepPath := filepath.Join(dir, "configs", "sweep.yaml")
	os.WriteFile(sweepPath, []byte("base: b.yaml\naxes: {clients: [1, 2]}\n"), 0o644)
	f, err := LoadSweep(sweepPath)
	if err != nil {
		t.Fatal(err)
	}
	if f.BaseFile != filepath.Join(dir, "configs", "b.yaml") || f.Name != "sweep" {
		t.Errorf("base %s name %s", f.BaseFile, f.Name)
	}
	if s, err := f.Base.Scenario(); err != nil || s.Name != "b" {
		t.Errorf("base scenario %v %v", s, err)
	}
}

func TestParseSweepErrors(t *testing.T) {
	const sc = "scenario: {clients: 1}\n"
	tests := []struct{ name, yaml, want string }{
		{"unknown key", sc + "axis: {clients: [1]}\n", "s.yaml:2: axis: unknown key; did you mean axes?"},
		{"no axes", sc, "s.yaml: axes: a sweep needs axes: a mapping of config paths to value lists or ranges"},
		{"no scenario", "axes: {clients: [1]}\n", "s.yaml: a sweep needs base: FILE (a scenario config) or an inline scenario: mapping"},
		{"both", sc + "base: x.yaml\naxes: {clients: [1]}\n", "s.yaml:2: base: give either base: FILE or an inline scenario:, not both"},
		{"missing base file", "base: nope.yaml\naxes: {clients: [1]}\n", "nope.yaml: cannot read config: no such file or directory"},
		{"empty axes", sc + "axes: {}\n", "s.yaml:2: axes: needs at least one axis (got a mapping)"},
		{"empty list", sc + "axes:\n  clients: []\n", "s.yaml:3: axes.clients: needs at least one value (got a sequence)"},
		{"scalar axis", sc + "axes:\n  clients: 5\n", "s.yaml:3: axes.clients: must be a list of values or a range {from, to, steps, scale} (got 5)"},
		{"bad path", sc + "axes:\n  a..b: [1]\n", `s.yaml:3: axes.a..b: bad key path "a..b": empty key (want e.g. policies[0].base)`},
		{"range without steps", sc + "axes:\n  clients: {from: 1, to: 2}\n", "s.yaml:3: axes.clients: a range needs from, to and steps (got no steps)"},
		{"one step", sc + "axes:\n  clients: {from: 1, to: 2, steps: 1}\n", "s.yaml:3: axes.clients.steps: must be >= 2 (a single value is a list: [x]) (got 1)"},
		{"bad scale", sc + "axes:\n  clients: {from: 1, to: 2, steps: 2, scale: exp}\n", `s.yaml:3: axes.clients.scale: must be linear or log (got "exp")`},
		{"misspelt range key", sc + "axes:\n  clients: {from: 1, to: 2, step: 2}\n", "s.yaml:3: axes.clients.step: unknown key; did you mean steps?"},
		{"zero replications", sc + "replications: 0\naxes: {clients: [1]}\n", "s.yaml:2: replications: must be >= 1 (got 0)"},
		{"metrics not a list", sc + "metrics: attempts\naxes: {clients: [1]}\n", `s.yaml:2: metrics: must be a sequence (got "attempts")`},
		{"a scenario given as a sweep says so", "name: lab\nseed: 1\nclients: 60\n",
			"s.yaml:2: seed: a scenario key: this file looks like a scenario, not a sweep file. A sweep file names base: SCENARIO.yaml (or holds scenario: {...}) and axes: (run a scenario with stormsim run -c FILE)"},
		{"alias in a value", sc + "x: &a 1\n", "s.yaml:2: x: unknown key; valid keys: name, base, scenario, replications, axes, metrics"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSweep("s.yaml", []byte(tt.yaml))
			if err == nil || err.Error() != tt.want {
				t.Errorf("error\n %v\nwant\n %s", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Error("error spans lines")
			}
		})
	}
}
