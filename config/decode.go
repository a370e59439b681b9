package config

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

var durationType = reflect.TypeFor[time.Duration]()

// maxAliases bounds alias expansion so a hostile file cannot make decoding
// exponentially slow.
const maxAliases = 10_000

// decoder fills Go values from a node tree, strictly: every key must be a
// tagged field, every scalar must have the field's type, integers are counts
// and so never negative.
type decoder struct {
	doc     *Document
	aliases int
}

func (d *decoder) fail(at, n *yaml.Node, path, problem string) error {
	return &Error{Where: d.doc.where(at), Path: path, Problem: problem, Got: describe(n)}
}

// decode stores node n into v; path names n for errors ("policies[1].cap").
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) error {
	at := n
	if n.Kind == yaml.AliasNode {
		d.aliases++
		if d.aliases > maxAliases {
			return &Error{Where: d.doc.where(at), Path: path, Problem: fmt.Sprintf("more than %d aliases", maxAliases)}
		}
		n = deref(n)
	}
	if v.Type() == durationType {
		return d.duration(at, n, v, path)
	}
	switch v.Kind() {
	case reflect.Pointer:
		if isNull(n) {
			v.SetZero()
			return nil
		}
		p := reflect.New(v.Type().Elem())
		if err := d.decode(at, p.Elem(), path); err != nil {
			return err
		}
		v.Set(p)
		return nil
	case reflect.Struct:
		return d.structure(at, n, v, path)
	case reflect.Slice:
		return d.sequence(at, n, v, path)
	case reflect.Map:
		return d.mapping(at, n, v, path)
	case reflect.String:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
			return d.fail(at, n, path, "must be a string")
		}
		v.SetString(n.Value)
		return nil
	case reflect.Bool:
		var b bool
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
			return d.fail(at, n, path, "must be true or false")
		}
		v.SetBool(b)
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return d.count(at, n, v, path)
	case reflect.Float32, reflect.Float64:
		var f float64
		tag := n.ShortTag()
		if n.Kind == yaml.ScalarNode && tag != "!!null" && outOfRange(n.Value) {
			return d.fail(at, n, path, fmt.Sprintf("is out of range: a number must be within ±%.1e", math.MaxFloat64))
		}
		if n.Kind != yaml.ScalarNode || (tag != "!!int" && tag != "!!float") || n.Decode(&f) != nil {
			return d.fail(at, n, path, "must be a number")
		}
		if math.IsNaN(f) || math.IsInf(f, 0) || v.OverflowFloat(f) {
			return d.fail(at, n, path, "must be a finite number")
		}
		v.SetFloat(f)
		return nil
	}
	return &Error{Where: d.doc.where(at), Path: path, Problem: "cannot be configured (unsupported type " + v.Type().String() + ")"}
}

// outOfRange reports whether a YAML number is well formed but too large
// (or too small) for a float64 or an integer: 1e309, 2^64.
func outOfRange(value string) bool {
	v := strings.ReplaceAll(value, "_", "")
	if _, err := strconv.ParseFloat(v, 64); errors.Is(err, strconv.ErrRange) {
		return true
	}
	_, err := strconv.ParseInt(v, 0, 64)
	return errors.Is(err, strconv.ErrRange)
}

func isNull(n *yaml.Node) bool {
	return n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// duration accepts Go duration strings ("100ms", "3.2s") and the integer 0.
func (d *decoder) duration(at, n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind == yaml.ScalarNode {
		switch n.ShortTag() {
		case "!!str":
			dur, err := time.ParseDuration(n.Value)
			if err != nil {
				return d.fail(at, n, path, "must be a duration such as 100ms or 3.2s")
			}
			v.SetInt(int64(dur))
			return nil
		case "!!int":
			var i int64
			if n.Decode(&i) == nil && i == 0 {
				v.SetInt(0)
				return nil
			}
		}
	}
	return d.fail(at, n, path, "must be a duration with a unit, such as 100ms or 3.2s")
}

// count decodes a non-negative integer. An integral float such as 1e6 is
// accepted, since that is how large client counts are often written.
func (d *decoder) count(at, n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.ScalarNode {
		return d.fail(at, n, path, "must be an integer")
	}
	var u uint64
	switch n.ShortTag() {
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			if i < 0 {
				return d.fail(at, n, path, "must not be negative")
			}
			u = uint64(i)
		} else if err := n.Decode(&u); err != nil {
			if outOfRange(n.Value) {
				return d.fail(at, n, path, "is too large")
			}
			return d.fail(at, n, path, "must be an integer")
		}
	case "!!float":
		var f float64
		if n.Decode(&f) != nil || f != math.Trunc(f) || math.IsInf(f, 0) {
			return d.fail(at, n, path, "must be an integer")
		}
		if f < 0 {
			return d.fail(at, n, path, "must not be negative")
		}
		if f >= 1<<64 {
			return d.fail(at, n, path, "is too large")
		}
		u = uint64(f)
	default:
		if outOfRange(n.Value) && strings.HasPrefix(n.Value, "-") {
			return d.fail(at, n, path, "must not be negative")
		}
		if outOfRange(n.Value) {
			return d.fail(at, n, path, "is too large")
		}
		return d.fail(at, n, path, "must be an integer")
	}
	switch v.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if v.OverflowUint(u) {
			return d.fail(at, n, path, "is too large")
		}
		v.SetUint(u)
	default:
		if u > math.MaxInt64 || v.OverflowInt(int64(u)) {
			return d.fail(at, n, path, "is too large")
		}
		v.SetInt(int64(u))
	}
	return nil
}

// entries walks the key/value pairs of mapping n, rejecting non-string and
// duplicate keys.
func (d *decoder) entries(at, n *yaml.Node, path string, each func(k, val *yaml.Node, keyPath string) error) error {
	if n.Kind != yaml.MappingNode {
		return d.fail(at, n, path, "must be a mapping")
	}
	seen := make(map[string]*yaml.Node, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		kd := deref(k)
		if kd.Kind != yaml.ScalarNode || isNull(kd) {
			return d.fail(k, kd, path, "keys must be names")
		}
		keyPath := joinKey(path, kd.Value)
		if first, dup := seen[kd.Value]; dup {
			return &Error{Where: d.doc.where(k), Path: keyPath,
				Problem: "duplicate key, also set " + d.doc.lineOf(first), Got: describe(val)}
		}
		seen[kd.Value] = k
		if err := each(k, val, keyPath); err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) structure(at, n *yaml.Node, v reflect.Value, path string) error {
	fields := fieldsOf(v.Type())
	return d.entries(at, n, path, func(k, val *yaml.Node, keyPath string) error {
		name := deref(k).Value
		for _, f := range fields {
			if f.key == name {
				return d.decode(val, v.FieldByIndex(f.index), keyPath)
			}
		}
		problem := "unknown key; valid keys: " + keyList(fields)
		switch {
		case path == "" && name == "axes":
			problem = "a sweep file key: this file looks like a sweep, not a scenario (run it with stormsim sweep -c FILE -o DIR)"
		case path == "" && (name == "vary" || name == "require"):
			problem = "a solve file key: this file looks like a solve, not a scenario (run it with stormsim solve -c FILE)"
		case path == "" && (name == "base" || name == "scenario"):
			// Before a near key: base is two edits from name.
			problem = "a sweep or solve file key: this file is not a scenario (run a sweep with stormsim sweep -c FILE -o DIR, a solve with stormsim solve -c FILE)"
		default:
			if best, ok := closestKey(name, fields); ok {
				problem = "unknown key; did you mean " + best + "?"
			}
		}
		return &Error{Where: d.doc.where(k), Path: keyPath, Problem: problem}
	})
}

func (d *decoder) mapping(at, n *yaml.Node, v reflect.Value, path string) error {
	if v.Type().Key().Kind() != reflect.String {
		return &Error{Where: d.doc.where(at), Path: path, Problem: "cannot be configured (map key " + v.Type().Key().String() + ")"}
	}
	m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
	err := d.entries(at, n, path, func(k, val *yaml.Node, keyPath string) error {
		elem := reflect.New(v.Type().Elem()).Elem()
		if err := d.decode(val, elem, keyPath); err != nil {
			return err
		}
		m.SetMapIndex(reflect.ValueOf(deref(k).Value).Convert(v.Type().Key()), elem)
		return nil
	})
	if err != nil {
		return err
	}
	v.Set(m)
	return nil
}

func (d *decoder) sequence(at, n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.SequenceNode {
		return d.fail(at, n, path, "must be a sequence")
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		if err := d.decode(item, s.Index(i), path+"["+strconv.Itoa(i)+"]"); err != nil {
			return err
		}
	}
	v.Set(s)
	return nil
}

// joinKey appends key to path, quoting a key that is not a plain name so
// that odd bytes in a file cannot garble the message.
func joinKey(path, key string) string {
	if !isPlainName(key) {
		key = strconv.Quote(truncate(key))
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func isPlainName(key string) bool {
	if key == "" {
		return false
	}
	for _, c := range key {
		if !(c == '_' || c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}
