package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"

	"stormsim/sim"
)

// Document is a parsed config file that can still be edited: overrides and
// sweep axes are applied to it with Set before it is decoded into a
// scenario. Clone it to derive several scenarios from one file read.
type Document struct {
	file   string                // file name used in error messages
	root   *yaml.Node            // the top-level mapping
	origin map[*yaml.Node]string // nodes that came from Set, by the override that made them
}

// Load reads the config file at path, applies the --set overrides in order
// and returns the resolved scenario. Every error is a one-line *Error.
func Load(path string, sets []string) (*sim.Scenario, error) {
	doc, err := LoadDocument(path, sets)
	if err != nil {
		return nil, err
	}
	return doc.Scenario()
}

// LoadDocument reads the config file at path and applies the --set
// overrides in order; the document can then locate keys (Where) for
// errors found after decoding. Every error is a one-line *Error.
func LoadDocument(path string, sets []string) (*Document, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	doc, err := ParseDocument(path, data)
	if err != nil {
		return nil, err
	}
	for _, set := range sets {
		if err := doc.SetArg(set); err != nil {
			return nil, err
		}
	}
	return doc, nil
}

// Parse is Load for a config already in memory; name is the file name
// errors report.
func Parse(name string, data []byte, sets []string) (*sim.Scenario, error) {
	doc, err := ParseDocument(name, data)
	if err != nil {
		return nil, err
	}
	for _, set := range sets {
		if err := doc.SetArg(set); err != nil {
			return nil, err
		}
	}
	return doc.Scenario()
}

// ParseDocument parses one YAML document whose top level is a mapping (an
// empty file is an empty mapping). It checks syntax only; keys and values
// are checked by Scenario.
func ParseDocument(name string, data []byte) (doc *Document, err error) {
	// yaml.v3 is third-party code fed arbitrary bytes: a panic in it must
	// still come out as a one-line config error.
	defer func() {
		if r := recover(); r != nil {
			doc, err = nil, &Error{Where: name, Problem: fmt.Sprintf("invalid YAML: %v", r)}
		}
	}()
	doc = &Document{file: name, origin: map[*yaml.Node]string{}}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var top yaml.Node
	switch err := dec.Decode(&top); {
	case err == io.EOF:
		doc.root = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: 1}
		return doc, nil
	case err != nil:
		return nil, syntaxError(name, data, err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return nil, &Error{Where: fmt.Sprintf("%s:%d", name, max(1, extra.Line)), Problem: "only one YAML document is allowed (remove the ---)"}
	case err != io.EOF:
		return nil, syntaxError(name, data, err)
	}
	doc.root = &top
	if top.Kind == yaml.DocumentNode && len(top.Content) == 1 {
		doc.root = top.Content[0]
	}
	if isNull(doc.root) {
		doc.root = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: max(1, doc.root.Line)}
	}
	if doc.root.Kind != yaml.MappingNode {
		return nil, &Error{Where: doc.where(doc.root), Problem: "the config must be a mapping of keys (name:, clients:, ...)", Got: describe(doc.root)}
	}
	return doc, nil
}

// File is the file name errors report.
func (d *Document) File() string { return d.file }

// Scenario decodes the document into a scenario and resolves it (defaults
// and validation), leaving out its checks. The document is not changed.
func (d *Document) Scenario() (*sim.Scenario, error) {
	f, err := d.ScenarioFile()
	if err != nil {
		return nil, err
	}
	return f.Scenario, nil
}

// ScenarioFile decodes the document into a scenario and its checks and
// resolves the scenario (defaults and validation). The document is not
// changed.
func (d *Document) ScenarioFile() (*ScenarioFile, error) {
	if len(d.root.Content) == 0 {
		return nil, &Error{Where: d.file, Problem: "the config is empty: a scenario needs at least clients:, admission: and policies:"}
	}
	var l fileLayout
	dec := decoder{doc: d}
	if err := dec.decode(d.root, reflect.ValueOf(&l).Elem(), ""); err != nil {
		return nil, err
	}
	s := &l.Scenario
	if err := s.Resolve(); err != nil {
		var fe *sim.FieldError
		if errors.As(err, &fe) {
			return nil, &Error{Where: d.whereKey(fe.Path), Path: fe.Path, Problem: fe.Problem, Got: fmt.Sprint(fe.Got)}
		}
		return nil, &Error{Where: d.file, Problem: err.Error()}
	}
	f := &ScenarioFile{Scenario: s}
	for _, k := range s.InertKeys() {
		if d.sets(k.Path) {
			f.Warnings = append(f.Warnings, Warning{Where: d.whereKey(k.Path), Path: k.Path, Problem: k.Reason})
		}
	}
	if l.Checks != nil {
		f.Checks = *l.Checks
	}
	return f, nil
}

// Clone returns an independent copy, so that Set on one does not affect
// the other.
func (d *Document) Clone() *Document {
	c := &Document{file: d.file, origin: make(map[*yaml.Node]string, len(d.origin))}
	copies := map[*yaml.Node]*yaml.Node{}
	c.root = d.copyNode(d.root, copies, c.origin)
	return c
}

// copyNode deep-copies n; copies maps originals to copies so that aliases
// in the copy point at the copied anchors.
func (d *Document) copyNode(n *yaml.Node, copies map[*yaml.Node]*yaml.Node, origin map[*yaml.Node]string) *yaml.Node {
	if n == nil {
		return nil
	}
	if c, ok := copies[n]; ok {
		return c
	}
	c := *n
	copies[n] = &c
	if o, ok := d.origin[n]; ok {
		origin[&c] = o
	}
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, child := range n.Content {
		c.Content[i] = d.copyNode(child, copies, origin)
	}
	if n.Alias != nil {
		c.Alias = d.copyNode(n.Alias, copies, origin)
	}
	return &c
}

// where locates node n: the override that made it, or FILE:LINE.
func (d *Document) where(n *yaml.Node) string {
	if o, ok := d.origin[n]; ok {
		return o
	}
	return fmt.Sprintf("%s:%d", d.file, max(1, n.Line))
}

// lineOf is where(n) phrased for the middle of a sentence.
func (d *Document) lineOf(n *yaml.Node) string {
	if o, ok := d.origin[n]; ok {
		return "by " + o
	}
	return fmt.Sprintf("on line %d", max(1, n.Line))
}

// whereKey locates the key at path (e.g. "policies[1].cap"): the line of
// the key, or of its value if an override set it, falling back to the
// nearest enclosing key that is present.
func (d *Document) whereKey(path string) string {
	steps, err := parsePath(path)
	if err != nil {
		return d.file
	}
	cur, at := d.root, d.root
	for _, st := range steps {
		cur = deref(cur)
		var child *yaml.Node
		if st.isIndex {
			if cur.Kind != yaml.SequenceNode || st.index >= len(cur.Content) {
				break
			}
			child = cur.Content[st.index]
			at = child
		} else {
			k, v := lookup(cur, st.key)
			if k == nil {
				break
			}
			child, at = v, k
			if _, set := d.origin[v]; set {
				at = v
			}
		}
		cur = child
	}
	return d.where(at)
}

// lookup returns the first key node named key in mapping m and its value.
func lookup(m *yaml.Node, key string) (k, v *yaml.Node) {
	if m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if kd := deref(m.Content[i]); kd.Kind == yaml.ScalarNode && kd.Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

// SetArg applies one --set argument of the form path=value.
func (d *Document) SetArg(arg string) error {
	path, value, ok := strings.Cut(arg, "=")
	if !ok {
		return &Error{Where: "--set " + arg, Problem: "must be path=value, e.g. admission.per_slot=500"}
	}
	return d.Set(path, value)
}
