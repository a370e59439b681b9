package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"slices"

	"stormsim/internal/safetext"
	"stormsim/sim"
)

// ScenarioFile is a scenario config file decoded and resolved: the
// scenario the engine runs and, beside it, the checks that stormsim check
// tests its results against. Checks sit at the top level of the file
// among the scenario's keys, but they are not part of the scenario: the
// engine never sees them.
type ScenarioFile struct {
	Scenario *sim.Scenario
	// Checks are thresholds such as "results[full].convergence_ms < 6s"
	// (grammar in package check), as written; nil when the file has no
	// checks: key (an empty list is kept as one, so that it echoes as
	// written).
	Checks []string
	// Warnings name the keys the file (or an override) sets that cannot
	// act in this scenario, one line each: the run goes on, and the user
	// is told.
	Warnings []Warning
}

// Warning is a key that is set but can have no effect (sim.InertKeys).
type Warning struct {
	Where   string // "FILE:LINE", or the --set override that set the key
	Path    string // e.g. "policies[0].timeout"
	Problem string // why it does nothing
}

// String is the warning as one line: "FILE:LINE: warning: PATH: PROBLEM".
func (w Warning) String() string {
	return safetext.OneLine(w.Where + ": warning: " + w.Path + ": " + w.Problem)
}

// fileLayout is the top level of a scenario file as the decoder and the
// echo walk it: the scenario's keys, and checks among them (see
// fileFields).
type fileLayout struct {
	Scenario sim.Scenario
	Checks   *[]string // a pointer: a file without checks: echoes no key
}

var fileLayoutType = reflect.TypeFor[fileLayout]()

// checksAfter is the scenario key that checks: follows in the echo. The
// echo is hashed, so this place is part of every config hash that has
// checks: moving it would change them all.
const checksAfter = "horizon"

// fileFields are the keys of a scenario file in echo order: the
// scenario's fields, with checks right after checksAfter. fieldsOf
// caches them as the fields of fileLayout.
func fileFields() []field {
	var out []field
	for _, f := range fieldsOf(reflect.TypeFor[sim.Scenario]()) {
		f.index = append([]int{0}, f.index...)
		out = append(out, f)
		if f.key == checksAfter {
			out = append(out, field{key: "checks", index: []int{1}})
		}
	}
	if !slices.ContainsFunc(out, func(f field) bool { return f.key == "checks" }) {
		panic("config: sim.Scenario has no " + checksAfter + " field to place checks after")
	}
	return out
}

func (f *ScenarioFile) layout() fileLayout {
	l := fileLayout{Scenario: *f.Scenario}
	if f.Checks != nil {
		l.Checks = &f.Checks
	}
	return l
}

// Echo renders the file as compact JSON: keys in the order of fileFields
// under their YAML names, durations as Go duration strings ("3.2s"), nil
// optional sections and empty or zero omitempty keys left out. The
// output is valid YAML too, so parsing it gives the file back, and it is
// byte-identical for equal files.
func (f *ScenarioFile) Echo() json.RawMessage {
	return echoValue(reflect.ValueOf(f.layout()))
}

// Hash identifies the resolved file: "sha256:" and the hex SHA-256 of its
// Echo.
func (f *ScenarioFile) Hash() string {
	sum := sha256.Sum256(f.Echo())
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Echo is the echo of a file holding the resolved scenario s and no
// checks (see ScenarioFile.Echo).
func Echo(s *sim.Scenario) json.RawMessage { return (&ScenarioFile{Scenario: s}).Echo() }

// Hash is the hash of a file holding the resolved scenario s and no
// checks (see ScenarioFile.Hash).
func Hash(s *sim.Scenario) string { return (&ScenarioFile{Scenario: s}).Hash() }
