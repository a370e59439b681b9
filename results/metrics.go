package results

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"stormsim/sim"
)

// Metric is one numeric value of a result, named by its JSON path inside
// the result ("attempts", "connect_ms.p99", "reclaim.reclaim_ms",
// "gateways[0].accepted"). Its unit is the one the name says: _ms is
// milliseconds, _seconds seconds, _per_s per second, otherwise a count.
type Metric struct {
	Name  string
	Value float64
}

// ResultMetrics lists the numeric scalars of r in JSON field order, named
// as in Metric. It follows r's JSON tags, so fields added to sim.Result
// appear without any change here. Booleans are 1 (true) or 0. Left out:
// strings, arrays of numbers (the per-window series) and sections that are
// absent (a nil pointer: that model is off, or a storm did not converge). A numeric field tagged omitempty is listed
// even when zero, since zero is its value, not missing data.
func ResultMetrics(r *sim.Result) []Metric {
	var out []Metric
	flattenValue("", reflect.ValueOf(r).Elem(), &out, nil)
	return out
}

// Series is one array of numbers in a result, named as a Metric is by its
// JSON path ("series.attempts", "gateways[0].series.accepts",
// "reclaim.stale_routes"): mostly a per-window series, one value per
// metrics window, in the unit its name says.
type Series struct {
	Name   string
	Values []float64
}

// ResultSeries lists the arrays of numbers in r in JSON field order: what
// ResultMetrics leaves out, so that between them they cover every number
// of a result. An empty array is listed, with no values.
func ResultSeries(r *sim.Result) []Series {
	var out []Series
	flattenValue("", reflect.ValueOf(r).Elem(), nil, &out)
	return out
}

// flattenValue appends the numbers in v, named from name down: its scalars
// to metrics and its arrays of numbers to series; either may be nil to
// skip them.
func flattenValue(name string, v reflect.Value, metrics *[]Metric, series *[]Series) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			flattenValue(name, v.Elem(), metrics, series)
		}
	case reflect.Struct:
		for _, f := range jsonFields(v.Type()) {
			fv, ok := fieldValue(v, f.index)
			if ok {
				flattenValue(joinName(name, f.name), fv, metrics, series)
			}
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Bool:
		if metrics != nil {
			*metrics = append(*metrics, Metric{name, number(v)})
		}
	case reflect.Slice, reflect.Array:
		if !hasFields(v.Type().Elem()) {
			if series != nil && isNumber(v.Type().Elem()) {
				values := make([]float64, v.Len())
				for i := range values {
					values[i] = number(v.Index(i))
				}
				*series = append(*series, Series{name, values})
			}
			return
		}
		for i := range v.Len() {
			flattenValue(name+"["+strconv.Itoa(i)+"]", v.Index(i), metrics, series)
		}
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return
		}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		for _, k := range keys {
			flattenValue(name+"["+k.String()+"]", v.MapIndex(k), metrics, series)
		}
	}
}

// isNumber reports whether values of t are numbers in a result: integers,
// floats or booleans (1 and 0).
func isNumber(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Bool:
		return true
	}
	return false
}

// number is v, of a kind isNumber accepts, as a float64.
func number(v reflect.Value) float64 {
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(v.Uint())
	case reflect.Bool:
		if v.Bool() {
			return 1
		}
		return 0
	}
	return v.Float()
}

// fieldValue follows index through embedded structs; ok is false when an
// embedded pointer on the way is nil.
func fieldValue(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 {
			if v.Kind() == reflect.Pointer {
				if v.IsNil() {
					return reflect.Value{}, false
				}
				v = v.Elem()
			}
		}
		v = v.Field(x)
	}
	return v, true
}

// hasFields reports whether values of t are objects in JSON (so a slice of
// them is a list of records, not a series).
func hasFields(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct || t.Kind() == reflect.Map
}

func joinName(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// jsonField is a field as encoding/json sees it: its key and its index
// path (through embedded structs).
type jsonField struct {
	name  string
	index []int
}

var jsonFieldCache sync.Map // reflect.Type -> []jsonField

// jsonFields lists the fields encoding/json writes for struct type t, in
// its order: tagged names, "-" skipped, untagged embedded structs inlined.
func jsonFields(t reflect.Type) []jsonField {
	if c, ok := jsonFieldCache.Load(t); ok {
		return c.([]jsonField)
	}
	var fields []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" && !strings.HasPrefix(tag, "-,") {
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			for _, inner := range jsonFields(ft) {
				fields = append(fields, jsonField{inner.name, append([]int{i}, inner.index...)})
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields = append(fields, jsonField{name, []int{i}})
	}
	jsonFieldCache.Store(t, fields)
	return fields
}

var resultFieldNames = sync.OnceValue(func() []string {
	var out []string
	typeNames("", reflect.TypeFor[sim.Result](), 0, &out)
	return out
})

// ResultFieldNames lists every metric name a sim.Result can have, from its
// type alone, with list and map indexes left empty ("gateways[].accepted").
// Names are validated against it before anything runs; whether a run has
// data for one depends on which models the scenario turns on.
func ResultFieldNames() []string { return resultFieldNames() }

// maxTypeDepth stops typeNames on a recursive type.
const maxTypeDepth = 8

func typeNames(name string, t reflect.Type, depth int, out *[]string) {
	walkFields(name, t, depth, func(name string, _ reflect.Kind, series bool) {
		if !series {
			*out = append(*out, name)
		}
	})
}

// walkFields calls leaf with the name and kind of every numeric field of
// t (and bool), and of every array of numbers in it with series true,
// named from name down as results name them.
func walkFields(name string, t reflect.Type, depth int, leaf func(name string, kind reflect.Kind, series bool)) {
	if depth > maxTypeDepth {
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		walkFields(name, t.Elem(), depth, leaf)
	case reflect.Struct:
		for _, f := range jsonFields(t) {
			walkFields(joinName(name, f.name), t.FieldByIndex(f.index).Type, depth+1, leaf)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Bool:
		leaf(name, t.Kind(), false)
	case reflect.Slice, reflect.Array:
		if hasFields(t.Elem()) {
			walkFields(name+"[]", t.Elem(), depth+1, leaf)
		} else if k := t.Elem().Kind(); k >= reflect.Int && k <= reflect.Float64 {
			leaf(name, k, true)
		}
	case reflect.Map:
		if t.Key().Kind() == reflect.String {
			walkFields(name+"[]", t.Elem(), depth+1, leaf)
		}
	}
}

// Pattern turns a metric name into its ResultFieldNames form by emptying
// every index: "gateways[2].accepted" becomes "gateways[].accepted".
func Pattern(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		b.WriteByte(name[i])
		if name[i] == '[' {
			if end := strings.IndexByte(name[i:], ']'); end > 0 {
				i += end - 1
			}
		}
	}
	return b.String()
}
