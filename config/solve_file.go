package config

import (
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// SolveFile is a solve file as written: a base scenario, the key to vary
// and the requirements its value must meet. Package solve gives it
// meaning (the search, the answer); this type only carries the YAML's
// structure and where each part is, so that YAML stays inside this
// package.
//
//	name: seed-window                    # optional; default the file name
//	base: capacity-60s-window.yaml       # relative to this file; or scenario: {...}
//	replications: 20                     # optional; the same seeds at every probe
//	vary: {key: admission.rate, min: 50, max: 5000, goal: least, resolution: 1%}
//	require:                             # check expressions, all of which a probe must pass
//	  - p95(results[full].convergence_ms) <= 60s
//	across: {key: clients, values: [25000, 50000]}  # optional: a solve per value
//	given:                               # optional: the answer holds for every combination
//	  gateways.balancer: [random, least_connections]
//	check: {replications: 4}             # optional: what stormsim check runs
type SolveFile struct {
	File     string
	Name     string
	Base     *Document // the scenario every probe starts from
	BaseFile string    // the base file as opened; "" for an inline scenario
	// Replications is 0 for the scenario's own; ReplicationsWhere is
	// FILE:LINE of replications:, "" without one.
	Replications      int
	ReplicationsWhere string
	Vary              SolveVary
	Require           []Located // check expressions, in file order
	RequireWhere      string    // FILE:LINE of require:
	Across            *SweepAxis
	Given             []SweepAxis
	// CheckReplications is check: {replications: N}, 0 without one: the
	// replications stormsim check runs, for a solve too heavy for CI at
	// its own.
	CheckReplications int
	CheckWhere        string
}

// SolveVary is the vary: mapping. Every field keeps its FILE:LINE; an
// absent optional one (Start, Scan) has an empty Value.
type SolveVary struct {
	Where      string // FILE:LINE of vary:
	Key        Located
	Min, Max   Located // numbers or durations, as written
	Goal       Located // least or most
	Resolution Located // in the key's unit (5, 10ms) or a percentage (1%)
	Start      Located // optional: grow from here by doubling instead of probing min and max first
	Scan       Located // optional: grid points when the verdict is not monotone
}

var solveKeys = []field{{key: "name"}, {key: "base"}, {key: "scenario"}, {key: "replications"}, {key: "vary"}, {key: "require"},
	{key: "across"}, {key: "given"}, {key: "check"}}

var varyKeys = []field{{key: "key"}, {key: "min"}, {key: "max"}, {key: "goal"}, {key: "resolution"}, {key: "start"}, {key: "scan"}}

var acrossKeys = []field{{key: "key"}, {key: "values"}}

var solveCheckKeys = []field{{key: "replications"}}

// LoadSolve reads and parses the solve file at path.
func LoadSolve(path string) (*SolveFile, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return ParseSolve(path, data)
}

// ParseSolve parses a solve file already in memory; name is its path,
// used in errors and to find a relative base file. The base scenario is
// parsed but not decoded: each probe decodes its own copy.
func ParseSolve(name string, data []byte) (*SolveFile, error) {
	doc, err := ParseDocument(name, data)
	if err != nil {
		return nil, err
	}
	f := &SolveFile{File: name, Name: strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))}
	d := decoder{doc: doc}
	var base baseNodes
	var vary, require *yaml.Node
	err = d.entries(doc.root, doc.root, "", func(k, v *yaml.Node, key string) error {
		switch key {
		case "vary":
			vary = k
			return d.solveVary(f, k, v)
		case "require":
			require = k
			return d.solveRequire(f, k, v)
		}
		return d.solveKey(f, &base, k, v, key)
	})
	if err != nil {
		return nil, err
	}
	if f.Base, err = base.load(f.File, &f.BaseFile, doc, "a solve"); err != nil {
		return nil, err
	}
	switch {
	case vary == nil:
		return nil, &Error{Where: name, Path: "vary", Problem: "a solve needs vary: {key, min, max, goal, resolution}, the config key to solve for"}
	case require == nil:
		return nil, &Error{Where: name, Path: "require", Problem: "a solve needs require: a list of checks such as p95(results[full].convergence_ms) <= 60s"}
	}
	return f, nil
}

// solveKey decodes one top-level key of a solve file other than vary:
// and require:.
func (d *decoder) solveKey(f *SolveFile, base *baseNodes, k, v *yaml.Node, key string) (err error) {
	switch key {
	case "name":
		return d.scalarString(v, key, &f.Name)
	case "base", "scenario":
		return base.key(d, v, key, &f.BaseFile)
	case "replications":
		f.ReplicationsWhere = d.doc.where(k)
		f.Replications, err = d.positive(v, key)
		return err
	case "across":
		f.Across, err = d.solveAcross(k, v)
		return err
	case "given":
		f.Given, err = d.sweepAxes(v, "given", "key")
		return err
	case "check":
		f.CheckWhere = d.doc.where(k)
		return d.entries(v, deref(v), key, func(ck, cv *yaml.Node, keyPath string) error {
			if deref(ck).Value != "replications" {
				return unknownKey(d, ck, keyPath, deref(ck).Value, solveCheckKeys)
			}
			f.CheckReplications, err = d.positive(cv, keyPath)
			return err
		})
	}
	problem := "unknown key; valid keys: " + keyList(solveKeys)
	if best, ok := closestKey(key, solveKeys); ok {
		problem = "unknown key; did you mean " + best + "?"
	} else if key == "axes" {
		problem = "a sweep file key: a solve file varies one key with vary: {key, min, max, goal, resolution}"
	} else if isScenarioKey(key) {
		problem = "a scenario key: this file looks like a scenario, not a solve file. " +
			"A solve file names base: SCENARIO.yaml (or holds scenario: {...}), vary: and require:"
	}
	return &Error{Where: d.doc.where(k), Path: key, Problem: problem}
}

// unknownKey is the error of an unknown key in a mapping whose keys are
// valid.
func unknownKey(d *decoder, k *yaml.Node, keyPath, key string, valid []field) error {
	problem := "unknown key; valid keys: " + keyList(valid)
	if best, ok := closestKey(key, valid); ok {
		problem = "unknown key; did you mean " + best + "?"
	}
	return &Error{Where: d.doc.where(k), Path: keyPath, Problem: problem}
}

// solveVary decodes vary: as written; package solve checks the values.
func (d *decoder) solveVary(f *SolveFile, k, v *yaml.Node) error {
	sv := SolveVary{Where: d.doc.where(k)}
	slots := map[string]*Located{"key": &sv.Key, "min": &sv.Min, "max": &sv.Max, "goal": &sv.Goal,
		"resolution": &sv.Resolution, "start": &sv.Start, "scan": &sv.Scan}
	err := d.entries(v, deref(v), "vary", func(vk, vv *yaml.Node, keyPath string) error {
		key := deref(vk).Value
		slot, ok := slots[key]
		if !ok {
			return unknownKey(d, vk, keyPath, key, varyKeys)
		}
		vd := deref(vv)
		if vd.Kind != yaml.ScalarNode || isNull(vd) || vd.Value == "" {
			return d.fail(vv, vd, keyPath, "must be a single value")
		}
		*slot = Located{Value: vd.Value, Where: d.doc.where(vv)}
		return nil
	})
	if err != nil {
		return err
	}
	for _, key := range []string{"key", "min", "max", "goal", "resolution"} {
		if slots[key].Value == "" {
			return &Error{Where: sv.Where, Path: "vary", Problem: "vary needs key, min, max, goal (least or most) and resolution (e.g. 1% or 10ms)", Got: "no " + key}
		}
	}
	if _, err := parsePath(sv.Key.Value); err != nil {
		return &Error{Where: sv.Key.Where, Path: "vary.key", Problem: err.Error()}
	}
	f.Vary = sv
	return nil
}

// solveRequire decodes require: a list of check expressions.
func (d *decoder) solveRequire(f *SolveFile, k, v *yaml.Node) error {
	var texts []string
	if err := d.decode(v, reflectValue(&texts), "require"); err != nil {
		return err
	}
	if len(texts) == 0 {
		return &Error{Where: d.doc.where(v), Path: "require", Problem: "needs at least one check, for example - p95(results[full].convergence_ms) <= 60s (got an empty list)"}
	}
	f.RequireWhere = d.doc.where(k)
	for i, text := range texts {
		f.Require = append(f.Require, Located{Value: text, Where: d.doc.where(deref(v).Content[i])})
	}
	return nil
}

// solveAcross decodes across: {key: PATH, values: [...] or {from, to,
// steps, scale}} into an axis.
func (d *decoder) solveAcross(k, v *yaml.Node) (*SweepAxis, error) {
	var key, values *yaml.Node
	err := d.entries(v, deref(v), "across", func(ak, av *yaml.Node, keyPath string) error {
		switch deref(ak).Value {
		case "key":
			key = av
		case "values":
			values = av
		default:
			return unknownKey(d, ak, keyPath, deref(ak).Value, acrossKeys)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if key == nil || values == nil {
		return nil, &Error{Where: d.doc.where(k), Path: "across", Problem: "across needs key: and values: (a list, or a range {from, to, steps, scale})"}
	}
	var path string
	if err := d.scalarString(key, "across.key", &path); err != nil {
		return nil, err
	}
	// The values are read as an axis of one key, so that a list and a
	// range mean what they mean in a sweep.
	axis := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: key.Line,
		Content: []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: path, Line: key.Line}, values}}
	axes, err := d.sweepAxes(axis, "across", "value")
	if err != nil {
		return nil, err
	}
	return &axes[0], nil
}
