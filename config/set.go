package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// step is one element of a key path: a mapping key or a sequence index.
type step struct {
	key     string
	index   int
	isIndex bool
}

// parsePath splits a key path such as "policies[0].base" into steps.
func parsePath(path string) ([]step, error) {
	bad := func(why string) ([]step, error) {
		return nil, fmt.Errorf("bad key path %q: %s (want e.g. policies[0].base)", path, why)
	}
	var steps []step
	for i := 0; i < len(path); {
		j := i
		for j < len(path) && !strings.ContainsRune(".[]", rune(path[j])) {
			j++
		}
		if j == i {
			return bad("empty key")
		}
		steps = append(steps, step{key: path[i:j]})
		for i = j; i < len(path) && path[i] == '['; {
			end := strings.IndexByte(path[i:], ']')
			if end < 0 {
				return bad("missing ]")
			}
			n, err := strconv.Atoi(path[i+1 : i+end])
			if err != nil || n < 0 {
				return bad("index must be a non-negative integer")
			}
			steps = append(steps, step{index: n, isIndex: true})
			i += end + 1
		}
		if i < len(path) {
			if path[i] != '.' || i == len(path)-1 {
				return bad("expected . between keys")
			}
			i++
		}
	}
	if len(steps) == 0 {
		return bad("empty")
	}
	return steps, nil
}

// Set replaces the value at path (e.g. "clients", "admission.per_slot",
// "policies[0].base") with valueYAML parsed as a YAML fragment, so that
// "500", "50ms" and "{kind: token_bucket, rate: 40, burst: 10}" all work.
// Missing mapping keys are created; an index may name an existing entry or
// the next one, which appends. Errors, and later decode errors in the new
// value, are located at "--set path=value".
func (d *Document) Set(path, valueYAML string) error {
	v, err := ParseValue(valueYAML)
	if err != nil {
		return &Error{Where: "--set " + path + "=" + valueYAML, Path: path, Problem: "invalid YAML value: " + err.Error()}
	}
	return d.SetValue(path, v)
}

// Value is a YAML value parsed once, to be set into many documents (a
// sweep axis's value at every grid point).
type Value struct {
	text string
	node *yaml.Node
}

// ParseValue parses a value as Set does; an empty one is null.
func ParseValue(valueYAML string) (*Value, error) {
	n, err := parseFragment(valueYAML)
	if err != nil {
		return nil, err
	}
	return &Value{text: valueYAML, node: n}, nil
}

// SetValue is Set with a value already parsed; each call sets a copy.
func (d *Document) SetValue(path string, v *Value) error {
	where := "--set " + path + "=" + v.text
	steps, err := parsePath(path)
	if err != nil {
		return &Error{Where: where, Problem: err.Error()}
	}
	value := d.copyNode(v.node, map[*yaml.Node]*yaml.Node{}, d.origin)
	d.markOrigin(value, where)

	cur := d.root
	for i, st := range steps {
		shown := showPath(steps[:i+1])
		var slot **yaml.Node
		if st.isIndex {
			if cur.Kind != yaml.SequenceNode {
				return &Error{Where: where, Path: showPath(steps[:i]), Problem: "is not a sequence", Got: describe(cur)}
			}
			switch n := len(cur.Content); {
			case st.index == n:
				cur.Content = append(cur.Content, d.placeholder(where))
			case st.index > n:
				return &Error{Where: where, Path: shown, Problem: fmt.Sprintf("index out of range (there are %d entries)", n)}
			}
			slot = &cur.Content[st.index]
		} else {
			if cur.Kind != yaml.MappingNode {
				return &Error{Where: where, Path: showPath(steps[:i]), Problem: "is not a mapping", Got: describe(cur)}
			}
			j := keyIndex(cur, st.key)
			if j < 0 {
				key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: st.key}
				d.origin[key] = where
				cur.Content = append(cur.Content, key, d.placeholder(where))
				j = len(cur.Content) - 2
			}
			slot = &cur.Content[j+1]
		}
		if i == len(steps)-1 {
			*slot = value
			return nil
		}
		if (*slot).Kind == yaml.AliasNode {
			// Editing through an alias would change every place that uses
			// the anchor; edit a private copy instead.
			*slot = d.copyNode(deref(*slot), map[*yaml.Node]*yaml.Node{}, d.origin)
		}
		if isNull(*slot) {
			kind, tag := yaml.MappingNode, "!!map"
			if steps[i+1].isIndex {
				kind, tag = yaml.SequenceNode, "!!seq"
			}
			*slot = &yaml.Node{Kind: kind, Tag: tag, Line: (*slot).Line}
			d.origin[*slot] = where
		}
		cur = *slot
	}
	return nil
}

func (d *Document) placeholder(where string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
	d.origin[n] = where
	return n
}

// markOrigin records that n and everything under it came from an override.
func (d *Document) markOrigin(n *yaml.Node, where string) {
	d.origin[n] = where
	for _, c := range n.Content {
		d.markOrigin(c, where)
	}
}

// keyIndex is the position of key in mapping m's Content, or -1.
func keyIndex(m *yaml.Node, key string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if kd := deref(m.Content[i]); kd.Kind == yaml.ScalarNode && kd.Value == key {
			return i
		}
	}
	return -1
}

// parseFragment parses an override value; an empty value is null.
func parseFragment(valueYAML string) (n *yaml.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			n, err = nil, fmt.Errorf("%v", r)
		}
	}()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(valueYAML), &doc); err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}, nil
	}
	if hasAlias(doc.Content[0]) {
		return nil, errors.New("anchors and aliases are not supported in --set values")
	}
	return doc.Content[0], nil
}

func hasAlias(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		return true
	}
	for _, c := range n.Content {
		if hasAlias(c) {
			return true
		}
	}
	return false
}

func showPath(steps []step) string {
	var b strings.Builder
	for _, st := range steps {
		if st.isIndex {
			fmt.Fprintf(&b, "[%d]", st.index)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(st.key)
	}
	return b.String()
}
