package models_test

import (
	"fmt"
	"time"

	"stormsim/models"
)

// A token bucket of 40 tokens a second with a burst of 10 starts full:
// of 12 handshakes at once it admits 10. A tenth of a second later it has
// refilled 40 * 0.1 = 4 tokens, and admits 4 of the next 5.
func ExampleTokenBucket() {
	b := models.NewTokenBucket(40, 10)
	count := func(at time.Duration, n int) (admitted int) {
		for range n {
			if b.Admit(at) {
				admitted++
			}
		}
		return admitted
	}
	fmt.Println(count(0, 12), count(100*time.Millisecond, 5))
	fmt.Println(b.WindowBound(250 * time.Millisecond))
	// Output:
	// 10 4
	// 20
}
