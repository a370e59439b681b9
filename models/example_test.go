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

// Phoenix's drainer tells 10,000 sockets every 2 s: of 25,000
// connections, number 9,999 leaves at once, 10,000 after 2 s and the last
// after 4 s. A reserved hint at 100 slots/s with a burst of 10 then has
// the goaway of the 20th client (k = 19) told at once wait 100 ms.
func ExampleDrainPaceSpec_GoawayAt() {
	p := models.DrainPaceSpec{Kind: models.PacePhoenix}
	if err := p.Validate(); err != nil {
		panic(err)
	}
	fmt.Println(p.GoawayAt(9_999, 25_000), p.GoawayAt(10_000, 25_000), p.Span(25_000))
	h := models.ReconnectHintSpec{Kind: models.HintReserved, Rate: 100, Burst: 10}
	hint, _ := h.Hint(19, 0, 0)
	fmt.Println(hint)
	// Output:
	// 0s 2s 4s
	// 100ms
}
