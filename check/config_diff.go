package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// ConfigChange is a key whose value differs between two config echoes
// (a result document's config): Key is its path (admission.rate,
// policies[0].base); a side without the key reads "none".
type ConfigChange struct {
	Key, Baseline, Current string
}

// String is the report line: "admission.rate: 130 -> 125".
func (c ConfigChange) String() string {
	return fmt.Sprintf("%s: %s -> %s", c.Key, c.Baseline, c.Current)
}

// ConfigChanges lists the keys whose values differ between the baseline's
// config echo and the current one, in the baseline's key order, then the
// keys only the current one has; a section one side lacks is one change.
// It returns nil when either echo is missing or not JSON.
func ConfigChanges(baseline, current json.RawMessage) []ConfigChange {
	b, errB := decodeTree(baseline)
	c, errC := decodeTree(current)
	if errB != nil || errC != nil || b == nil || c == nil {
		return nil
	}
	var out []ConfigChange
	diffTree("", b, c, &out)
	return out
}

// tree is a JSON value with its object keys in the order written.
type tree struct {
	keys   []string
	fields map[string]*tree // an object's
	items  []*tree          // an array's
	leaf   string           // a scalar, as written (strings unquoted)
	object bool
	array  bool
}

func decodeTree(data json.RawMessage) (*tree, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return readTree(dec)
}

func readTree(dec *json.Decoder) (*tree, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch v := tok.(type) {
	case json.Delim:
		t := &tree{object: v == '{', array: v == '['}
		if t.object {
			t.fields = map[string]*tree{}
		}
		for dec.More() {
			if t.array {
				item, err := readTree(dec)
				if err != nil {
					return nil, err
				}
				t.items = append(t.items, item)
				continue
			}
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key, _ := k.(string)
			val, err := readTree(dec)
			if err != nil {
				return nil, err
			}
			if _, dup := t.fields[key]; !dup {
				t.keys = append(t.keys, key)
			}
			t.fields[key] = val
		}
		_, err := dec.Token() // the closing delimiter
		return t, err
	case string:
		return &tree{leaf: v}, nil
	case nil:
		return &tree{leaf: "null"}, nil
	default:
		return &tree{leaf: fmt.Sprint(v)}, nil
	}
}

// diffTree appends the changes from b to c under path.
func diffTree(path string, b, c *tree, out *[]ConfigChange) {
	switch {
	case b.object && c.object:
		for _, k := range b.keys {
			sub := joinKey(path, k)
			if cv, ok := c.fields[k]; ok {
				diffTree(sub, b.fields[k], cv, out)
			} else {
				*out = append(*out, ConfigChange{sub, b.fields[k].text(), "none"})
			}
		}
		for _, k := range c.keys {
			if _, ok := b.fields[k]; !ok {
				*out = append(*out, ConfigChange{joinKey(path, k), "none", c.fields[k].text()})
			}
		}
	case b.array && c.array && len(b.items) == len(c.items):
		for i := range b.items {
			diffTree(fmt.Sprintf("%s[%d]", path, i), b.items[i], c.items[i], out)
		}
	default:
		if bt, ct := b.text(), c.text(); bt != ct {
			*out = append(*out, ConfigChange{path, bt, ct})
		}
	}
}

func joinKey(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// maxValueText bounds a value in a report line: a whole section changed
// is shown by its start.
const maxValueText = 60

// text is t in YAML's flow style ({kind: slots, per_slot: 5}), cut to
// maxValueText characters.
func (t *tree) text() string {
	var b strings.Builder
	t.write(&b)
	s := b.String()
	if len(s) > maxValueText {
		s = s[:maxValueText-3] + "..."
	}
	return s
}

func (t *tree) write(b *strings.Builder) {
	switch {
	case t.object:
		b.WriteByte('{')
		for i, k := range t.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(k + ": ")
			t.fields[k].write(b)
		}
		b.WriteByte('}')
	case t.array:
		b.WriteByte('[')
		for i, item := range t.items {
			if i > 0 {
				b.WriteString(", ")
			}
			item.write(b)
		}
		b.WriteByte(']')
	case t.leaf == "" || strings.ContainsAny(t.leaf, ",:{}[]\"'\n"):
		b.WriteString(fmt.Sprintf("%q", t.leaf))
	default:
		b.WriteString(t.leaf)
	}
}
