package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// SweepFile is a sweep file as written: a base scenario, the axes to vary
// and the metrics to chart. Package sweep gives it meaning (grid, ranges,
// runs); this type only carries the YAML's structure and where each part
// is, so that YAML stays inside this package.
//
//	name: sweep-lease                   # optional; default the file name
//	base: seed-lab.yaml                 # relative to this file; or scenario: {...}
//	replications: 10                    # optional; default the scenario's
//	axes:                               # crossed in this order
//	  lease.duration: [500ms, 1s, 3s]   # a list of YAML values
//	  lease.sweep_every: {from: 100ms, to: 1s, steps: 4, scale: log}
//	metrics: [max(reclaim.reclaim_ms)]  # charted; see results.MetricRef
type SweepFile struct {
	File         string
	Name         string
	Base         *Document // the scenario every point starts from
	BaseFile     string    // the base file as opened; "" for an inline scenario
	Replications int       // 0 means the scenario's own
	// ReplicationsWhere is FILE:LINE of replications:, "" without one.
	ReplicationsWhere string
	Axes              []SweepAxis
	Metrics           []Located
}

// SweepAxis is one axis: a config key path and either a list of values or
// a range.
type SweepAxis struct {
	Path   string
	Where  string   // FILE:LINE of the axis, for errors
	Values []string // list form: each value as one-line YAML, for Document.Set
	Range  *SweepRange
}

// SweepRange is an axis given as {from, to, steps, scale}: From and To as
// written (a number or a duration such as 50ms).
type SweepRange struct {
	From, To string
	Steps    int
	Scale    string // "linear" (default) or "log"
}

// Located is a string from a file with its FILE:LINE.
type Located struct {
	Value string
	Where string
}

var sweepKeys = []field{{key: "name"}, {key: "base"}, {key: "scenario"}, {key: "replications"}, {key: "axes"}, {key: "metrics"}}

// LoadSweep reads and parses the sweep file at path.
func LoadSweep(path string) (*SweepFile, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return ParseSweep(path, data)
}

// MaxFileBytes bounds a config or sweep file: anything larger is a
// mistake (a log, a device such as /dev/zero), refused after reading
// this much rather than read for ever.
const MaxFileBytes = 16 << 20

func readFile(path string) ([]byte, error) {
	fail := func(err error) ([]byte, error) {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &Error{Where: path, Problem: "cannot read config: " + err.Error()}
	}
	f, err := os.Open(path)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return fail(err)
	}
	if len(data) > MaxFileBytes {
		return nil, &Error{Where: path, Problem: fmt.Sprintf("cannot read config: larger than %d MiB; is it a config?", MaxFileBytes>>20)}
	}
	return data, nil
}

// ParseSweep parses a sweep file already in memory; name is its path, used
// in errors and to find a relative base file. The base scenario is parsed
// but not decoded: each grid point decodes its own copy.
func ParseSweep(name string, data []byte) (*SweepFile, error) {
	doc, err := ParseDocument(name, data)
	if err != nil {
		return nil, err
	}
	f := &SweepFile{File: name, Name: strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))}
	d := decoder{doc: doc}
	var n sweepNodes
	err = d.entries(doc.root, doc.root, "", func(k, v *yaml.Node, key string) error {
		return d.sweepKey(f, &n, k, v, key)
	})
	if err != nil {
		return nil, err
	}
	if f.Base, err = n.base.load(f.File, &f.BaseFile, doc, "a sweep"); err != nil {
		return nil, err
	}
	if n.axes == nil {
		return nil, &Error{Where: name, Path: "axes", Problem: "a sweep needs axes: a mapping of config paths to value lists or ranges"}
	}
	if f.Axes, err = d.sweepAxes(n.axes, "axes", "axis"); err != nil {
		return nil, err
	}
	return f, nil
}

// sweepNodes are the parts of a sweep file decoded after its keys are
// read: the base (a file or an inline scenario) and the axes.
type sweepNodes struct {
	base baseNodes
	axes *yaml.Node
}

// baseNodes are the base: and scenario: keys of a sweep or solve file.
type baseNodes struct {
	baseFile, scenario *yaml.Node
}

// key decodes base: (into *baseFile) or scenario:, keeping its node.
func (b *baseNodes) key(d *decoder, v *yaml.Node, key string, baseFile *string) error {
	if key == "base" {
		b.baseFile = v
		return d.scalarString(v, key, baseFile)
	}
	b.scenario = deref(v)
	if b.scenario.Kind != yaml.MappingNode {
		return d.fail(v, b.scenario, key, "must be a mapping holding a scenario (name:, clients:, ...)")
	}
	return nil
}

// sweepKey decodes one top-level key of a sweep file into f, or keeps its
// node in n for later.
func (d *decoder) sweepKey(f *SweepFile, n *sweepNodes, k, v *yaml.Node, key string) error {
	switch key {
	case "name":
		return d.scalarString(v, key, &f.Name)
	case "base", "scenario":
		return n.base.key(d, v, key, &f.BaseFile)
	case "replications":
		r, err := d.positive(v, key)
		if err != nil {
			return err
		}
		f.Replications = r
		f.ReplicationsWhere = d.doc.where(k)
	case "axes":
		n.axes = v
	case "metrics":
		var names []string
		if err := d.decode(v, reflectValue(&names), key); err != nil {
			return err
		}
		for i, name := range names {
			f.Metrics = append(f.Metrics, Located{Value: name, Where: d.doc.where(deref(v).Content[i])})
		}
	default:
		problem := "unknown key; valid keys: " + keyList(sweepKeys)
		if best, ok := closestKey(key, sweepKeys); ok {
			problem = "unknown key; did you mean " + best + "?"
		} else if isScenarioKey(key) {
			problem = "a scenario key: this file looks like a scenario, not a sweep file. " +
				"A sweep file names base: SCENARIO.yaml (or holds scenario: {...}) and axes: (run a scenario with stormsim run -c FILE)"
		}
		return &Error{Where: d.doc.where(k), Path: key, Problem: problem}
	}
	return nil
}

// positive decodes an integer >= 1.
func (d *decoder) positive(v *yaml.Node, key string) (int, error) {
	r := 0
	if err := d.decode(v, reflectValue(&r), key); err != nil {
		return 0, err
	}
	if r < 1 {
		return 0, d.fail(v, v, key, "must be >= 1")
	}
	return r, nil
}

// load is the base scenario of the sweep or solve file called file (what
// says which, "a sweep"), parsed: the inline scenario, or the base file
// read relative to it (*baseFile is made so).
func (b *baseNodes) load(file string, baseFile *string, doc *Document, what string) (*Document, error) {
	switch {
	case b.baseFile != nil && b.scenario != nil:
		return nil, &Error{Where: doc.where(b.baseFile), Path: "base", Problem: "give either base: FILE or an inline scenario:, not both"}
	case b.scenario != nil:
		return &Document{file: file, root: b.scenario, origin: map[*yaml.Node]string{}}, nil
	case b.baseFile != nil:
		if !filepath.IsAbs(*baseFile) {
			*baseFile = filepath.Join(filepath.Dir(file), *baseFile)
		}
		data, err := readFile(*baseFile)
		if err != nil {
			return nil, err
		}
		return ParseDocument(*baseFile, data)
	}
	return nil, &Error{Where: file, Problem: what + " needs base: FILE (a scenario config) or an inline scenario: mapping"}
}

// isScenarioKey reports whether key is a top-level key of a scenario file.
func isScenarioKey(key string) bool {
	for _, f := range fieldsOf(fileLayoutType) {
		if f.key == key {
			return true
		}
	}
	return false
}

func (d *decoder) scalarString(v *yaml.Node, path string, out *string) error {
	if err := d.decode(v, reflectValue(out), path); err != nil {
		return err
	}
	if *out == "" {
		return d.fail(v, v, path, "must not be empty")
	}
	return nil
}

// sweepAxes decodes a mapping of config paths to value lists or ranges:
// a sweep's axes, a solve's given keys. prefix names the mapping in
// errors ("axes") and entry one of its entries ("axis").
func (d *decoder) sweepAxes(n *yaml.Node, prefix, entry string) ([]SweepAxis, error) {
	var axes []SweepAxis
	err := d.entries(n, deref(n), prefix, func(k, v *yaml.Node, _ string) error {
		path := deref(k).Value
		keyPath := prefix + "." + path
		if _, err := parsePath(path); err != nil {
			return &Error{Where: d.doc.where(k), Path: keyPath, Problem: err.Error()}
		}
		ax := SweepAxis{Path: path, Where: d.doc.where(k)}
		switch vd := deref(v); vd.Kind {
		case yaml.SequenceNode:
			if len(vd.Content) == 0 {
				return d.fail(v, vd, keyPath, "needs at least one value")
			}
			for _, item := range vd.Content {
				if hasAlias(item) {
					return d.fail(item, item, keyPath, "anchors and aliases are not supported in axis values")
				}
				ax.Values = append(ax.Values, fragment(item))
			}
		case yaml.MappingNode:
			r, err := d.sweepRange(v, keyPath)
			if err != nil {
				return err
			}
			ax.Range = r
		default:
			return d.fail(v, vd, keyPath, "must be a list of values or a range {from, to, steps, scale}")
		}
		axes = append(axes, ax)
		return nil
	})
	if err == nil && len(axes) == 0 {
		err = d.fail(n, deref(n), prefix, "needs at least one "+entry)
	}
	return axes, err
}

var rangeKeys = []field{{key: "from"}, {key: "to"}, {key: "steps"}, {key: "scale"}}

func (d *decoder) sweepRange(n *yaml.Node, path string) (*SweepRange, error) {
	r := &SweepRange{Scale: "linear"}
	seen := map[string]bool{}
	err := d.entries(n, deref(n), path, func(k, v *yaml.Node, keyPath string) error {
		key := deref(k).Value
		seen[key] = true
		vd := deref(v)
		switch key {
		case "from", "to":
			if vd.Kind != yaml.ScalarNode || isNull(vd) {
				return d.fail(v, vd, keyPath, "must be a number or a duration such as 50ms")
			}
			if key == "from" {
				r.From = vd.Value
			} else {
				r.To = vd.Value
			}
		case "steps":
			if err := d.decode(v, reflectValue(&r.Steps), keyPath); err != nil {
				return err
			}
			if r.Steps < 2 {
				return d.fail(v, vd, keyPath, "must be >= 2 (a single value is a list: [x])")
			}
		case "scale":
			if vd.Kind != yaml.ScalarNode || (vd.Value != "linear" && vd.Value != "log") {
				return d.fail(v, vd, keyPath, "must be linear or log")
			}
			r.Scale = vd.Value
		default:
			problem := "unknown key; valid keys: " + keyList(rangeKeys)
			if best, ok := closestKey(key, rangeKeys); ok {
				problem = "unknown key; did you mean " + best + "?"
			}
			return &Error{Where: d.doc.where(k), Path: keyPath, Problem: problem}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, key := range []string{"from", "to", "steps"} {
		if !seen[key] {
			return nil, &Error{Where: d.doc.where(n), Path: path, Problem: "a range needs from, to and steps", Got: "no " + key}
		}
	}
	return r, nil
}

// fragment writes n as one line of YAML that parses back to the same
// value, so that Document.Set gives the point exactly what the file says.
func fragment(n *yaml.Node) string {
	c := *n
	if c.Kind != yaml.ScalarNode {
		c.Style |= yaml.FlowStyle
	}
	c.HeadComment, c.LineComment, c.FootComment = "", "", ""
	out, err := yaml.Marshal(&c)
	if err != nil {
		return n.Value
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, " ")
}

func reflectValue(p any) reflect.Value { return reflect.ValueOf(p).Elem() }
