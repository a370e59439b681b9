package config

import (
	"fmt"
	"reflect"

	"stormsim/sim"
)

// KeyKind is the kind of value a scenario key holds, for a search over
// it: a count (an integer, never negative), a number, or a duration.
type KeyKind int

// The kinds of numeric keys.
const (
	KindInteger  KeyKind = iota + 1 // a count such as clients or admission.per_slot
	KindNumber                      // a float such as admission.rate
	KindDuration                    // a time.Duration such as lease.duration
)

// String names the kind as messages say it.
func (k KeyKind) String() string {
	switch k {
	case KindInteger:
		return "integer"
	case KindNumber:
		return "number"
	case KindDuration:
		return "duration"
	}
	return "unknown"
}

// Kind is the kind of the scenario key at path ("admission.rate",
// "policies[0].cap"), from the scenario's types alone; an error says why
// a key cannot be varied (none such, or a string, a list, a mapping).
func Kind(path string) (KeyKind, error) {
	steps, err := parsePath(path)
	if err != nil {
		return 0, err
	}
	t := reflect.TypeFor[sim.Scenario]()
	for i, st := range steps {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if st.isIndex {
			if t.Kind() != reflect.Slice {
				return 0, fmt.Errorf("%s is not a list", showPath(steps[:i]))
			}
			t = t.Elem()
			continue
		}
		if t.Kind() != reflect.Struct {
			return 0, fmt.Errorf("%s has no keys", showPath(steps[:i]))
		}
		fields := fieldsOf(t)
		found := false
		for _, f := range fields {
			if f.key == st.key {
				t, found = t.FieldByIndex(f.index).Type, true
				break
			}
		}
		if !found {
			problem := "no scenario key " + showPath(steps[:i+1])
			if best, ok := closestKey(st.key, fields); ok {
				problem += "; did you mean " + joinKey(showPath(steps[:i]), best) + "?"
			}
			return 0, fmt.Errorf("%s", problem)
		}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == durationType:
		return KindDuration, nil
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return KindInteger, nil
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return KindNumber, nil
	}
	what := map[reflect.Kind]string{reflect.String: "a string", reflect.Bool: "true or false", reflect.Slice: "a list",
		reflect.Struct: "a mapping", reflect.Map: "a mapping"}[t.Kind()]
	if what == "" {
		what = t.String()
	}
	return 0, fmt.Errorf("%s is %s, not a number or a duration", path, what)
}
