package results

import (
	"reflect"
	"sync"

	"stormsim/sim"
)

// IsCount reports whether a result field ("attempts",
// "gateways[2].accepted") holds a whole count: an integer in sim.Result,
// which moves by 1 at the least. Times, rates and fractions (tail_busy,
// converged) do not.
func IsCount(field string) bool { return countFields()[Pattern(field)] }

var countFields = sync.OnceValue(func() map[string]bool {
	out := map[string]bool{}
	countNames("", reflect.TypeFor[sim.Result](), 0, out)
	return out
})

// countNames is typeNames for the integer fields alone.
func countNames(name string, t reflect.Type, depth int, out map[string]bool) {
	if depth > maxTypeDepth {
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		countNames(name, t.Elem(), depth, out)
	case reflect.Struct:
		for _, f := range jsonFields(t) {
			countNames(joinName(name, f.name), t.FieldByIndex(f.index).Type, depth+1, out)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		out[name] = true
	case reflect.Slice, reflect.Array:
		if hasFields(t.Elem()) {
			countNames(name+"[]", t.Elem(), depth+1, out)
		} else if k := t.Elem().Kind(); k >= reflect.Int && k <= reflect.Uint64 {
			out[name] = true // a series of counts
		}
	case reflect.Map:
		if t.Key().Kind() == reflect.String {
			countNames(name+"[]", t.Elem(), depth+1, out)
		}
	}
}
