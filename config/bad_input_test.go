package config

import (
	"errors"
	"testing"
)

// A valid scenario in block style, so that every key has its own line:
//
//	1 name: t
//	2 seed: 1
//	3 clients: 10
//	4 admission: {kind: slots, slot: 10ms, per_slot: 5}
//	5 policies:
//	6   - {name: exponential, base: 100ms, cap: 3200ms}
//	7   - {name: full, base: 100ms, cap: 3200ms}
const validYAML = "name: t\nseed: 1\nclients: 10\n" +
	"admission: {kind: slots, slot: 10ms, per_slot: 5}\n" +
	"policies:\n" +
	"  - {name: exponential, base: 100ms, cap: 3200ms}\n" +
	"  - {name: full, base: 100ms, cap: 3200ms}\n"

// TestBadInput pins the message, including the line, of each kind of bad
// config the simulator issue lists, and a few more.
func TestBadInput(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"unknown key suggests the closest",
			"name: t\nclients: 10\nadmision: {kind: slots, slot: 10ms, per_slot: 5}\n",
			"bad.yaml:3: admision: unknown key; did you mean admission?"},
		{"unknown nested key suggests the closest",
			"clients: 10\nadmission: {kind: slots, slot: 10ms, per_slot: 5}\npolicies:\n  - name: full\n    bse: 100ms\n",
			"bad.yaml:5: policies[0].bse: unknown key; did you mean base?"},
		{"duplicate key names both lines",
			"name: t\nclients: 10\nseed: 1\nclients: 20\n",
			"bad.yaml:4: clients: duplicate key, also set on line 2 (got 20)"},
		{"duplicate key in a flow mapping",
			"clients: 10\nadmission: {kind: slots, slot: 10ms, kind: token_bucket}\n",
			"bad.yaml:2: admission.kind: duplicate key, also set on line 2 (got \"token_bucket\")"},
		{"wrong type: word for a count",
			"name: t\nclients: many\n",
			`bad.yaml:2: clients: must be an integer (got "many")`},
		{"wrong type: fraction for a count",
			"clients: 1.5\n",
			"bad.yaml:1: clients: must be an integer (got 1.5)"},
		{"wrong type: duration without unit",
			"clients: 10\nadmission: {kind: slots, slot: 10ms, per_slot: 5}\npolicies:\n  - name: full\n    base: 100\n",
			"bad.yaml:5: policies[0].base: must be a duration with a unit, such as 100ms or 3.2s (got 100)"},
		{"wrong type: bad duration string",
			"clients: 10\ninitial_jitter: 10 ms\n",
			`bad.yaml:2: initial_jitter: must be a duration such as 100ms or 3.2s (got "10 ms")`},
		{"wrong type: mapping for a sequence",
			"clients: 10\npolicies: {name: full}\n",
			"bad.yaml:2: policies: must be a sequence (got a mapping)"},
		{"wrong type: yes is not a bool",
			"clients: 10\npolicies:\n  - {name: full, honor_retry_after: yes}\n",
			`bad.yaml:3: policies[0].honor_retry_after: must be true or false (got "yes")`},
		{"wrong type: number for a string",
			"name: 2024\n",
			"bad.yaml:1: name: must be a string (got 2024)"},
		{"wrong type: NaN multiplier",
			"clients: 10\npolicies:\n  - {name: full, multiplier: .nan}\n",
			"bad.yaml:3: policies[0].multiplier: must be a finite number (got .nan)"},
		{"negative count",
			"name: t\nclients: -5\n",
			"bad.yaml:2: clients: must not be negative (got -5)"},
		{"negative per_slot",
			"clients: 10\nadmission: {kind: slots, slot: 10ms, per_slot: -1}\n",
			"bad.yaml:2: admission.per_slot: must not be negative (got -1)"},
		{"negative seed",
			"seed: -1\n",
			"bad.yaml:1: seed: must not be negative (got -1)"},
		{"cap below base",
			validYAML[:len(validYAML)-len("  - {name: full, base: 100ms, cap: 3200ms}\n")] + "  - {name: full, base: 100ms, cap: 50ms}\n",
			"bad.yaml:7: policies[1].cap: must be >= base (100ms) (got 50ms)"},
		{"missing cap falls back to the policy's line",
			"clients: 10\nadmission: {kind: slots, slot: 10ms, per_slot: 5}\npolicies:\n  - name: exponential\n    base: 100ms\n",
			"bad.yaml:4: policies[0].cap: must be >= base (100ms) (got 0s)"},
		{"zero slot",
			"clients: 10\nadmission:\n  kind: slots\n  slot: 0s\n  per_slot: 5\n",
			"bad.yaml:4: admission.slot: must be > 0 (got 0s)"},
		{"missing slot falls back to admission's line",
			"clients: 10\nadmission:\n  kind: slots\n  per_slot: 5\n",
			"bad.yaml:2: admission.slot: must be > 0 (got 0s)"},
		{"token bucket rate 0",
			"clients: 10\nadmission: {kind: token_bucket, rate: 0, burst: 10}\n",
			"bad.yaml:2: admission.rate: must be in [0.001, 1e9] tokens per second (got 0)"},
		{"token bucket burst below 1",
			"clients: 10\nadmission:\n  kind: token_bucket\n  rate: 40\n  burst: 0\n",
			"bad.yaml:5: admission.burst: must be in [1, 9000000] (got 0)"},
		{"policy none with min_gap 0",
			"clients: 10\nadmission: {kind: slots, slot: 10ms, per_slot: 5}\npolicies:\n  - {name: none, min_gap: 0s}\n",
			"bad.yaml:4: policies[0].min_gap: must be > 0 for policy none, or retries would loop within one instant (got 0s)"},
		{"policy none without min_gap",
			"clients: 10\nadmission: {kind: slots, slot: 10ms, per_slot: 5}\npolicies:\n  - name: none\n",
			"bad.yaml:4: policies[0].min_gap: must be > 0 for policy none, or retries would loop within one instant (got 0s)"},
		{"a misspelt policy kind gets the closest",
			"clients: 10\nadmission: {kind: slots, slot: 10ms, per_slot: 5}\npolicies:\n  - {name: ful, base: 1s, cap: 2s}\n",
			"bad.yaml:4: policies[0].name: unknown policy; did you mean full? (see `stormsim policies`) (got ful)"},
		{"an unknown policy kind",
			"clients: 10\nadmission: {kind: slots, slot: 10ms, per_slot: 5}\npolicies:\n  - {name: bogus, base: 1s, cap: 2s}\n",
			"bad.yaml:4: policies[0].name: unknown policy (see `stormsim policies`) (got bogus)"},
		{"duplicate policy label falls back to the policy's line",
			"clients: 10\nadmission: {kind: slots, slot: 10ms, per_slot: 5}\npolicies:\n  - {name: full, base: 1s, cap: 2s}\n  - {name: full, base: 2s, cap: 4s}\n",
			"bad.yaml:5: policies[1].label: duplicate policy label; set label to tell them apart (got full)"},
		{"zero clients",
			"clients: 0\n",
			"bad.yaml:1: clients: must be in [1, 2147483648] (got 0)"},
		{"empty file says it is empty",
			"",
			"bad.yaml: the config is empty: a scenario needs at least clients:, admission: and policies:"},
		{"a file of comments is empty",
			"# nothing yet\n",
			"bad.yaml: the config is empty: a scenario needs at least clients:, admission: and policies:"},
		{"a null document is empty",
			"~\n",
			"bad.yaml: the config is empty: a scenario needs at least clients:, admission: and policies:"},
		{"an empty mapping is empty",
			"{}\n",
			"bad.yaml: the config is empty: a scenario needs at least clients:, admission: and policies:"},
		{"tab indentation says tab",
			"admission:\n\tkind: slots\n",
			"bad.yaml:2: invalid YAML: found character that cannot start any token: a tab; YAML indents with spaces only"},
		{"a tab is placed on its own line, not the line before",
			"name: t\nclients: 10\n\tseed: 3\n",
			"bad.yaml:3: invalid YAML: found a tab character that violates indentation: a tab; YAML indents with spaces only"},
		{"a number beyond float64 is out of range, not a word",
			"clients: 10\nadmission: {kind: token_bucket, rate: 1e309, burst: 1}\n",
			`bad.yaml:2: admission.rate: is out of range: a number must be within ±1.8e+308 (got "1e309")`},
		{"a count beyond int64 is too large",
			"clients: 100000000000000000000000\n",
			"bad.yaml:1: clients: is too large (got 100000000000000000000000)"},
		{"a count written beyond float64 is too large",
			"clients: 1e400\n",
			`bad.yaml:1: clients: is too large (got "1e400")`},
		{"two documents",
			"clients: 10\n---\nclients: 20\n",
			"bad.yaml:2: only one YAML document is allowed (remove the ---)"},
		{"top level is not a mapping",
			"- clients: 10\n",
			"bad.yaml:1: the config must be a mapping of keys (name:, clients:, ...) (got a sequence)"},
		{"a list of words as the document is not a mapping",
			"- a\n- b\n",
			"bad.yaml:1: the config must be a mapping of keys (name:, clients:, ...) (got a sequence)"},
		{"empirical points out of order",
			validYAML + "detection:\n  kind: reset\n  delay: {dist: empirical, points: [20ms, 10ms, 30ms]}\n",
			"bad.yaml:10: detection.delay.points[1]: must be >= 0 and >= the point before it (got 10ms)"},
		{"a sweep file given as a scenario says so",
			"name: s\nscenario: {clients: 1}\naxes: {clients: [1, 2]}\n",
			"bad.yaml:2: scenario: a sweep or solve file key: this file is not a scenario (run a sweep with stormsim sweep -c FILE -o DIR, a solve with stormsim solve -c FILE)"},
		{"a sweep file's axes say so",
			"name: s\naxes: {clients: [1, 2]}\n",
			"bad.yaml:2: axes: a sweep file key: this file looks like a sweep, not a scenario (run it with stormsim sweep -c FILE -o DIR)"},
		{"a solve file given as a scenario says so",
			"name: s\nvary: {key: clients}\n",
			"bad.yaml:2: vary: a solve file key: this file looks like a solve, not a scenario (run it with stormsim solve -c FILE)"},
		{"a sweep file with a base says so, though base is close to name",
			"base: seed-lab.yaml\naxes: {clients: [1, 2]}\n",
			"bad.yaml:1: base: a sweep or solve file key: this file is not a scenario (run a sweep with stormsim sweep -c FILE -o DIR, a solve with stormsim solve -c FILE)"},
		{"odd key bytes are quoted",
			"clients: 10\n\"a\\nb\": 1\n",
			`bad.yaml:2: "a\nb": unknown key; valid keys: ` + scenarioKeys},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(tt.yaml), nil)
			if err == nil {
				t.Fatalf("Parse succeeded, want %q", tt.want)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error\n got %s\nwant %s", got, tt.want)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Errorf("error is %T, want *config.Error", err)
			}
		})
	}
}

func TestValidInputs(t *testing.T) {
	tests := []struct {
		name, yaml string
	}{
		{"block and flow styles", validYAML},
		{"integral float for a count", "clients: 1e3\nadmission: {kind: unlimited}\npolicies: [{name: fixed, base: 1s}]\n"},
		{"integer zero for a duration", "clients: 1\ninitial_jitter: 0\nadmission: {kind: unlimited}\npolicies: [{name: fixed, base: 1s}]\n"},
		{"anchors and aliases", "clients: 1\nadmission: {kind: unlimited}\npolicies:\n  - &p {name: full, base: 1s, cap: 2s}\n  - {name: full, label: other, base: 1s, cap: 2s}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Parse("ok.yaml", []byte(tt.yaml), nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestSyntaxErrorLines checks that syntax errors name the line a reader
// would look at, whichever part of yaml.v3 found them.
func TestSyntaxErrorLines(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"unclosed flow mapping on line 2", "clients: 1\nadmission: {kind: slots\n",
			"bad.yaml:2: invalid YAML: did not find expected ',' or '}'"},
		{"unclosed flow sequence on line 3", "clients: 1\n\npolicies: [{name: full}\n",
			"bad.yaml:3: invalid YAML: did not find expected ',' or ']'"},
		{"bad indentation on line 3", "clients: 1\nadmission:\n  kind: slots\n slot: 10ms\n",
			"bad.yaml:4: invalid YAML: did not find expected key"},
		{"mapping value in a scalar on line 2", "clients: 1\nname: a: b\n",
			"bad.yaml:2: invalid YAML: mapping values are not allowed in this context"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(tt.yaml), nil)
			if err == nil || err.Error() != tt.want {
				t.Errorf("error\n got %v\nwant %s", err, tt.want)
			}
		})
	}
}

// scenarioKeys are the top-level keys of a scenario file in the order the
// decoder offers them: sim.Scenario's fields, with checks (which the
// config package keeps beside the scenario) after horizon.
const scenarioKeys = "name, seed, clients, disconnect, initial_jitter, admission, policies, metrics, replications, horizon, " +
	"checks, failure, detection, lease, network, capacity, gateways, database, drain_policy, then_drain, drain, deploy"
