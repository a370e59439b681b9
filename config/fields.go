package config

import (
	"reflect"
	"strings"
	"sync"

	"stormsim/internal/suggest"
)

// field is one YAML-tagged struct field: its key, its index path in the
// struct (as reflect.Value.FieldByIndex takes it) and whether the echo
// leaves it out when empty (`yaml:",omitempty"`).
type field struct {
	key       string
	index     []int
	omitEmpty bool
}

var fieldCache sync.Map // reflect.Type -> []field

// fieldsOf lists the yaml-tagged exported fields of struct type t in
// declaration order. Untagged fields and `yaml:"-"` are not config keys.
// The top level of a scenario file is fileFields.
func fieldsOf(t reflect.Type) []field {
	if cached, ok := fieldCache.Load(t); ok {
		return cached.([]field)
	}
	if t == fileLayoutType {
		fields := fileFields()
		fieldCache.Store(t, fields)
		return fields
	}
	var fields []field
	for i := range t.NumField() {
		f := t.Field(i)
		key, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || key == "" || key == "-" {
			continue
		}
		fields = append(fields, field{key: key, index: []int{i}, omitEmpty: opts == "omitempty"})
	}
	fieldCache.Store(t, fields)
	return fields
}

// closestKey returns the valid key nearest to key in edit distance, if it is
// close enough to be a plausible typo.
func closestKey(key string, fields []field) (string, bool) {
	keys := make([]string, len(fields))
	for i, f := range fields {
		keys[i] = f.key
	}
	return suggest.Closest(strings.ToLower(key), keys)
}

// keyList joins the valid keys for an "unknown key" message.
func keyList(fields []field) string {
	keys := make([]string, len(fields))
	for i, f := range fields {
		keys[i] = f.key
	}
	return strings.Join(keys, ", ")
}
