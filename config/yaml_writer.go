package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// YAMLOptions shape a config file written by YAML.
type YAMLOptions struct {
	// Header is written first, each line as a comment.
	Header string
	// Digits, when > 0, rounds every non-integer number and every
	// duration to that many significant digits: fitted figures read
	// 0.6315, not 0.6315000000000001.
	Digits int
	// Minimal leaves out every key the file reads back the same without
	// (a zero value, or the default the config fills in), but for name,
	// seed, clients, admission and policies: a resolved scenario echoes
	// every field, a person's file names what matters.
	Minimal bool
}

// flowWidth is the widest a mapping or list is written on one line, as
// the shipped configs write admission: {kind: ..., rate: ...}.
const flowWidth = 100

// YAML writes a config echo (ScenarioFile.Echo, or Echo's) as a YAML
// config file in the shipped configs' style: top-level keys one per
// line, small sections and list items on one line in flow style, larger
// ones as blocks, strings unquoted where YAML allows. Keys keep the
// echo's order. With Minimal, the written file is checked to read back
// as the echo does, so a key is left out only where that holds.
func YAML(echo json.RawMessage, opt YAMLOptions) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(echo, &doc); err != nil { // JSON is YAML
		return nil, fmt.Errorf("config: the echo is not JSON: %w", err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("config: the echo is not a mapping")
	}
	root := doc.Content[0]
	plain(root, opt.Digits)
	if opt.Digits > 0 {
		// Rounded, the figures are what the file says: the file the
		// minimal one must read back as is this one.
		data, err := encodeYAML(root, "")
		if err != nil {
			return nil, err
		}
		if _, err := Parse("the written config", data, nil); err != nil {
			return nil, fmt.Errorf("config: rounded to %d digits, the config is no longer valid: %w", opt.Digits, err)
		}
	}
	if opt.Minimal {
		want, err := echoOf(root)
		if err != nil {
			return nil, err
		}
		if err := dropDefaults(root, root, want, true); err != nil {
			return nil, err
		}
	}
	return encodeYAML(root, opt.Header)
}

// plain clears the styles JSON gave the nodes (every string quoted, every
// mapping in braces) so that the encoder picks YAML's plain ones, and
// rounds numbers and durations to digits.
func plain(n *yaml.Node, digits int) {
	n.Style = 0
	if n.Kind == yaml.ScalarNode && digits > 0 {
		n.Value = rounded(n, digits)
	}
	for _, c := range n.Content {
		plain(c, digits)
	}
}

// rounded is a scalar's value to digits significant digits: a float, or a
// Go duration such as 31.787ms; integers and other strings as they are.
func rounded(n *yaml.Node, digits int) string {
	switch n.Tag {
	case "!!float":
		f, err := strconv.ParseFloat(n.Value, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return n.Value
		}
		r, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'g', digits, 64), 64)
		return strconv.FormatFloat(r, 'f', -1, 64)
	case "!!str":
		d, err := time.ParseDuration(n.Value)
		if err != nil || d == 0 {
			return n.Value
		}
		return durationText(roundDuration(d, digits))
	}
	return n.Value
}

// roundDuration rounds d to digits significant digits of nanoseconds, in
// integers: 31.787ms to 31.79ms at 4, and 100ms stays 100ms.
func roundDuration(d time.Duration, digits int) time.Duration {
	ns := int64(d)
	neg := ns < 0
	if neg {
		ns = -ns
	}
	step := int64(1)
	for k := len(strconv.FormatInt(ns, 10)) - digits; k > 0; k-- {
		step *= 10
	}
	ns = (ns + step/2) / step * step
	if neg {
		ns = -ns
	}
	return time.Duration(ns)
}

// durationText is d as Go writes it, without the zero minutes and
// seconds it adds to whole minutes and hours: 10m, not 10m0s.
func durationText(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// kept are the top-level keys a minimal file still names, defaults or
// not: what a reader looks for first.
var kept = map[string]bool{"name": true, "seed": true, "clients": true, "admission": true, "policies": true}

// dropDefaults removes from mapping m each key whose removal leaves the
// file reading back as want (a zero value, or the default the config
// fills in), and looks inside the keys it keeps.
func dropDefaults(root, m *yaml.Node, want json.RawMessage, top bool) error {
	for i := 0; i+1 < len(m.Content); {
		k, v := m.Content[i], m.Content[i+1]
		if !(top && kept[k.Value]) {
			before := m.Content
			m.Content = append(append([]*yaml.Node{}, before[:i]...), before[i+2:]...)
			if got, err := echoOf(root); err == nil && bytes.Equal(got, want) {
				continue // gone, and the file still means the same
			}
			m.Content = before
		}
		switch v.Kind {
		case yaml.MappingNode:
			if err := dropDefaults(root, v, want, false); err != nil {
				return err
			}
		case yaml.SequenceNode:
			for _, item := range v.Content {
				if item.Kind == yaml.MappingNode {
					if err := dropDefaults(root, item, want, false); err != nil {
						return err
					}
				}
			}
		}
		i += 2
	}
	return nil
}

// echoOf is the echo of the config file root writes, its checks
// included.
func echoOf(root *yaml.Node) (json.RawMessage, error) {
	data, err := encodeYAML(root, "")
	if err != nil {
		return nil, err
	}
	doc, err := ParseDocument("the written config", data)
	if err != nil {
		return nil, err
	}
	f, err := doc.ScenarioFile()
	if err != nil {
		return nil, err
	}
	return f.Echo(), nil
}

// encodeYAML writes root with the header as comments, choosing flow
// style for every mapping and list that fits on one line.
func encodeYAML(root *yaml.Node, header string) ([]byte, error) {
	for _, c := range root.Content {
		setFlow(c, 0)
	}
	var b bytes.Buffer
	for _, line := range strings.Split(strings.TrimRight(header, "\n"), "\n") {
		if header != "" {
			b.WriteString("# " + line + "\n")
		}
	}
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// setFlow marks n, and what it holds, for flow style when its one-line
// form fits in flowWidth less its indent, and returns that form's width
// (or a width past it).
func setFlow(n *yaml.Node, indent int) int {
	switch n.Kind {
	case yaml.ScalarNode:
		out, err := yaml.Marshal(&yaml.Node{Kind: yaml.ScalarNode, Tag: n.Tag, Value: n.Value})
		if err != nil {
			return flowWidth + 1
		}
		return len(strings.TrimSpace(string(out)))
	case yaml.MappingNode, yaml.SequenceNode:
		width := 2
		for i, c := range n.Content {
			width += setFlow(c, indent+2)
			mapKey := n.Kind == yaml.MappingNode && i%2 == 0
			if mapKey {
				width += 2 // ": "
			}
			if i > 0 && (mapKey || n.Kind == yaml.SequenceNode) {
				width += 2 // ", "
			}
		}
		n.Style = 0
		// A list of sections is a block, one section a line, as the
		// shipped configs write policies.
		listOfMaps := n.Kind == yaml.SequenceNode && len(n.Content) > 0 && n.Content[0].Kind == yaml.MappingNode
		if width <= flowWidth-indent-4 && !listOfMaps {
			n.Style = yaml.FlowStyle
		}
		return width
	}
	return flowWidth + 1
}
