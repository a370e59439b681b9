package config

import (
	"reflect"
	"strings"
	"testing"
)

const inlineSolve = `name: s
scenario:
  clients: 10
  admission: {kind: slots, slot: 10ms, per_slot: 2}
  policies: [{name: full, base: 100ms, cap: 1s}]
replications: 3
vary: {key: admission.per_slot, min: 1, max: 100, goal: least, resolution: 1}
require:
  - p95(results[full].convergence_ms) <= 2s
  - max(results[full].attempts) < 500
across: {key: clients, values: [10, 20]}
given:
  policies[0].cap: [500ms, 2s]
check: {replications: 2}
`

func TestParseSolveInline(t *testing.T) {
	f, err := ParseSolve("dir/s.yaml", []byte(inlineSolve))
	if err != nil {
		t.Fatal(err)
	}
	at := func(line string, v string) Located { return Located{Value: v, Where: "dir/s.yaml:" + line} }
	wantVary := SolveVary{Where: "dir/s.yaml:7", Key: at("7", "admission.per_slot"), Min: at("7", "1"), Max: at("7", "100"),
		Goal: at("7", "least"), Resolution: at("7", "1")}
	if f.Vary != wantVary {
		t.Errorf("vary\n got %+v\nwant %+v", f.Vary, wantVary)
	}
	wantRequire := []Located{at("9", "p95(results[full].convergence_ms) <= 2s"), at("10", "max(results[full].attempts) < 500")}
	if !reflect.DeepEqual(f.Require, wantRequire) {
		t.Errorf("require %+v", f.Require)
	}
	if want := (&SweepAxis{Path: "clients", Where: "dir/s.yaml:11", Values: []string{"10", "20"}}); !reflect.DeepEqual(f.Across, want) {
		t.Errorf("across %+v", f.Across)
	}
	if want := []SweepAxis{{Path: "policies[0].cap", Where: "dir/s.yaml:13", Values: []string{"500ms", "2s"}}}; !reflect.DeepEqual(f.Given, want) {
		t.Errorf("given %+v", f.Given)
	}
	if f.Name != "s" || f.Replications != 3 || f.CheckReplications != 2 || f.ReplicationsWhere != "dir/s.yaml:6" {
		t.Errorf("name %q replications %d check %d", f.Name, f.Replications, f.CheckReplications)
	}
	if s, err := f.Base.Scenario(); err != nil || s.Clients != 10 {
		t.Fatalf("inline scenario: %v", err)
	}
	ranged, err := ParseSolve("s.yaml", []byte(strings.Replace(inlineSolve, "values: [10, 20]", "values: {from: 10, to: 40, steps: 3}", 1)))
	if err != nil || ranged.Across.Range == nil || *ranged.Across.Range != (SweepRange{From: "10", To: "40", Steps: 3, Scale: "linear"}) {
		t.Errorf("across range: %v %+v", err, ranged)
	}
}

func TestParseSolveErrors(t *testing.T) {
	for _, tt := range []struct{ name, from, to, want string }{
		{"no vary", "vary: {key: admission.per_slot, min: 1, max: 100, goal: least, resolution: 1}\n", "",
			"s.yaml: vary: a solve needs vary: {key, min, max, goal, resolution}, the config key to solve for"},
		{"no require", "require:\n  - p95(results[full].convergence_ms) <= 2s\n  - max(results[full].attempts) < 500\n", "",
			"s.yaml: require: a solve needs require: a list of checks such as p95(results[full].convergence_ms) <= 60s"},
		{"empty require", "require:\n  - p95(results[full].convergence_ms) <= 2s\n  - max(results[full].attempts) < 500\n", "require: []\n",
			"s.yaml:8: require: needs at least one check, for example - p95(results[full].convergence_ms) <= 60s (got an empty list)"},
		{"missing goal", "goal: least, ", "", "s.yaml:7: vary: vary needs key, min, max, goal (least or most) and resolution (e.g. 1% or 10ms) (got no goal)"},
		{"unknown vary key", "goal: least", "goal: least, strat: 2", "s.yaml:7: vary.strat: unknown key; did you mean start?"},
		{"list value", "min: 1", "min: [1]", "s.yaml:7: vary.min: must be a single value (got a sequence)"},
		{"bad key path", "key: admission.per_slot", "key: admission..x", `s.yaml:7: vary.key: bad key path "admission..x": empty key (want e.g. policies[0].base)`},
		{"across without values", "across: {key: clients, values: [10, 20]}", "across: {key: clients}",
			"s.yaml:11: across: across needs key: and values: (a list, or a range {from, to, steps, scale})"},
		{"across unknown key", "across: {key: clients, values: [10, 20]}", "across: {key: clients, value: [1]}", "s.yaml:11: across.value: unknown key; did you mean values?"},
		{"check key", "check: {replications: 2}", "check: {reps: 2}", "s.yaml:14: check.reps: unknown key; valid keys: replications"},
		{"check replications", "check: {replications: 2}", "check: {replications: 0}", "s.yaml:14: check.replications: must be >= 1 (got 0)"},
		{"a sweep key", "given:", "axes: {clients: [1]}\ngiven:", "s.yaml:12: axes: a sweep file key: a solve file varies one key with vary: {key, min, max, goal, resolution}"},
		{"typo", "given:", "givne:", "s.yaml:12: givne: unknown key; did you mean given?"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSolve("s.yaml", []byte(strings.Replace(inlineSolve, tt.from, tt.to, 1)))
			if err == nil || err.Error() != tt.want {
				t.Errorf("error\n %v\nwant\n %s", err, tt.want)
			}
		})
	}
}

func TestKind(t *testing.T) {
	for _, tt := range []struct {
		path string
		want KeyKind
		err  string
	}{
		{"clients", KindInteger, ""},
		{"admission.per_slot", KindInteger, ""},
		{"admission.rate", KindNumber, ""},
		{"policies[0].cap", KindDuration, ""},
		{"gateways.admission.rate", KindNumber, ""},
		{"capacity.admit_per_s", KindNumber, ""},
		{"lease.duration", KindDuration, ""},
		{"gateways.balancer", 0, "gateways.balancer is a string, not a number or a duration"},
		{"policies", 0, "policies is a list, not a number or a duration"},
		{"admission", 0, "admission is a mapping, not a number or a duration"},
		{"admission.rat", 0, "no scenario key admission.rat; did you mean admission.rate?"},
		{"clients.x", 0, "clients has no keys"},
		{"admission[0]", 0, "admission is not a list"},
	} {
		got, err := Kind(tt.path)
		if got != tt.want || (err == nil) != (tt.err == "") || err != nil && err.Error() != tt.err {
			t.Errorf("Kind(%s) = %v, %v; want %v, %s", tt.path, got, err, tt.want, tt.err)
		}
	}
}
