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
	walkFields("", reflect.TypeFor[sim.Result](), 0, func(name string, k reflect.Kind, _ bool) {
		if k >= reflect.Int && k <= reflect.Uint64 {
			out[name] = true
		}
	})
	return out
})
