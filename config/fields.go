package config

import (
	"reflect"
	"strings"
	"sync"
)

// field is one YAML-tagged struct field: its key and its index in the struct.
type field struct {
	key   string
	index int
}

var fieldCache sync.Map // reflect.Type -> []field

// fieldsOf lists the yaml-tagged exported fields of struct type t in
// declaration order. Untagged fields and `yaml:"-"` are not config keys.
func fieldsOf(t reflect.Type) []field {
	if cached, ok := fieldCache.Load(t); ok {
		return cached.([]field)
	}
	var fields []field
	for i := range t.NumField() {
		f := t.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || key == "" || key == "-" {
			continue
		}
		fields = append(fields, field{key: key, index: i})
	}
	fieldCache.Store(t, fields)
	return fields
}

// closestKey returns the valid key nearest to key in edit distance, if it is
// close enough to be a plausible typo.
func closestKey(key string, fields []field) (string, bool) {
	best, bestDist := "", -1
	for _, f := range fields {
		d := editDistance(strings.ToLower(key), f.key)
		if bestDist < 0 || d < bestDist {
			best, bestDist = f.key, d
		}
	}
	limit := max(2, len(key)/3)
	return best, bestDist >= 0 && bestDist <= limit
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// keyList joins the valid keys for an "unknown key" message.
func keyList(fields []field) string {
	keys := make([]string, len(fields))
	for i, f := range fields {
		keys[i] = f.key
	}
	return strings.Join(keys, ", ")
}
