// Package finitejson is the one rule by which stormsim's documents hold
// numbers that have no value: a NaN or an infinity is written as null.
// encoding/json refuses them ("json: unsupported value: +Inf") and the
// whole document is lost; a document a storm took minutes to compute must
// never fail to encode for one undefined ratio.
//
// Marshal is json.Marshal, byte for byte, for every value without such a
// float. Only a value with one takes the slower path, which rebuilds the
// objects on the way to each such float as ordered members, as
// encoding/json would write them (names, omitempty, embedded structs), and
// writes null in its place. Producers still avoid these values where a
// number can be defined; a field whose value can be undefined says so in
// its doc comment.
package finitejson

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// Marshal is json.Marshal with every NaN and ±Inf float written as null.
func Marshal(v any) ([]byte, error) {
	data, err := json.Marshal(v)
	var unsupported *json.UnsupportedValueError
	if err == nil || !errors.As(err, &unsupported) {
		return data, err
	}
	return json.Marshal(rebuild(reflect.ValueOf(v), true))
}

// MarshalIndent is json.MarshalIndent with Marshal's rule.
func MarshalIndent(v any, prefix, indent string) ([]byte, error) {
	data, err := Marshal(v)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, data, prefix, indent); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// Finite reports whether every float reachable in v, as encoding/json
// would write it, is finite; path names the first one that is not
// ("simulations[0].metrics[3].rel_error"), for tests and messages.
func Finite(v any) (ok bool, path string) {
	return finite(reflect.ValueOf(v), "")
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// custom reports whether v writes itself (json.Marshaler or
// encoding.TextMarshaler), so that its own method decides its bytes.
func custom(v reflect.Value) bool {
	t := v.Type()
	if t.Implements(marshalerType) || t.Implements(textMarshalerType) {
		return true
	}
	if v.CanAddr() {
		pt := reflect.PointerTo(t)
		return pt.Implements(marshalerType) || pt.Implements(textMarshalerType)
	}
	return false
}

// rebuild returns a value that encodes as v does, with null for every
// non-finite float. With keep, parts with no such float are returned as
// they are; without (to test the rebuilding), every object is rebuilt.
func rebuild(v reflect.Value, keep bool) any {
	if !v.IsValid() {
		return nil
	}
	if (v.Kind() != reflect.Pointer || !v.IsNil()) && custom(v) {
		return v.Interface() // a value that writes itself applies this rule itself
	}
	if ok, _ := finite(v, ""); ok && (keep || !holdsFloats(v.Type())) {
		return v.Interface()
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			return nil
		}
		return v.Interface()
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return rebuild(v.Elem(), keep)
	case reflect.Struct:
		var obj object
		for _, f := range Fields(v.Type()) {
			fv, ok := fieldByIndex(v, f.Index)
			if !ok || (f.OmitEmpty && isEmpty(fv)) {
				continue
			}
			obj = append(obj, member{f.Name, rebuild(fv, keep)})
		}
		return obj
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return nil
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = rebuild(v.Index(i), keep)
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return nil
		}
		out := make(map[string]any, v.Len())
		iter := v.MapRange()
		for iter.Next() {
			out[mapKey(iter.Key())] = rebuild(iter.Value(), keep)
		}
		return out
	}
	return v.Interface()
}

// mapKey is a map key as encoding/json writes it: strings as they are,
// other kinds (integers, text marshalers) as their own text.
func mapKey(k reflect.Value) string {
	if k.Kind() == reflect.String {
		return k.String()
	}
	data, err := json.Marshal(k.Interface())
	if err != nil {
		return ""
	}
	return strings.Trim(string(data), `"`)
}

// finite is Finite from name down. It looks inside values that write
// themselves too, through their fields.
func finite(v reflect.Value, name string) (bool, string) {
	if !v.IsValid() {
		return true, ""
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		return !math.IsNaN(f) && !math.IsInf(f, 0), name
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return true, ""
		}
		return finite(v.Elem(), name)
	case reflect.Struct:
		for _, f := range Fields(v.Type()) {
			fv, ok := fieldByIndex(v, f.Index)
			if !ok {
				continue
			}
			if ok, at := finite(fv, join(name, f.Name)); !ok {
				return false, at
			}
		}
	case reflect.Slice, reflect.Array:
		if !holdsFloats(v.Type().Elem()) {
			return true, ""
		}
		for i := range v.Len() {
			if ok, at := finite(v.Index(i), name+"["+itoa(i)+"]"); !ok {
				return false, at
			}
		}
	case reflect.Map:
		if !holdsFloats(v.Type().Elem()) {
			return true, ""
		}
		iter := v.MapRange()
		for iter.Next() {
			if ok, at := finite(iter.Value(), name+"["+mapKey(iter.Key())+"]"); !ok {
				return false, at
			}
		}
	}
	return true, ""
}

// holdsFloats reports whether values of t can contain a float, so that
// long arrays of integers are not walked value by value.
func holdsFloats(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return false
	}
	return true
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

func itoa(i int) string { return strconv.Itoa(i) }

// Field is a struct field as encoding/json writes it.
type Field struct {
	Name      string // its key
	Index     []int  // its index path, through embedded structs
	OmitEmpty bool
}

var fieldCache sync.Map // reflect.Type -> []Field

// Fields lists the fields encoding/json writes for struct type t, in its
// order: tagged names, "-" skipped, untagged embedded structs inlined.
func Fields(t reflect.Type) []Field {
	if c, ok := fieldCache.Load(t); ok {
		return c.([]Field)
	}
	var fields []Field
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" && opts == "" {
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			for _, inner := range Fields(ft) {
				fields = append(fields, Field{inner.Name, append([]int{i}, inner.Index...), inner.OmitEmpty})
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields = append(fields, Field{Name: name, Index: []int{i}, OmitEmpty: hasOption(opts, "omitempty")})
	}
	fieldCache.Store(t, fields)
	return fields
}

func hasOption(opts, want string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == want {
			return true
		}
	}
	return false
}

// fieldByIndex follows index through embedded structs; ok is false when
// an embedded pointer on the way is nil (encoding/json then writes none of
// its fields).
func fieldByIndex(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

// isEmpty is encoding/json's omitempty rule.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// object is a JSON object whose members keep their order.
type object []member

type member struct {
	name  string
	value any
}

// MarshalJSON writes the members in order.
func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.name)
		b.Write(k)
		b.WriteByte(':')
		v, err := Marshal(m.value)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
