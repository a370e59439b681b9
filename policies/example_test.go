package policies_test

import (
	"fmt"
	"time"

	"stormsim/policies"
	"stormsim/policies/rng"
)

// A policy is built from its spec, which New validates and fills with the
// kind's defaults. Exponential backoff without jitter waits base * 2^n
// after its n-th failure (from 0), up to the cap.
func ExampleNew() {
	b, err := policies.New(policies.Spec{Kind: "exponential", Base: 100 * time.Millisecond, Cap: 3200 * time.Millisecond})
	if err != nil {
		fmt.Println(err)
		return
	}
	var prev time.Duration
	var waits []time.Duration
	for attempt := 1; attempt <= 7; attempt++ {
		wait, raw, _ := b.Next(attempt, prev, 0, rng.Draw(1, 0, uint64(attempt), rng.StreamBackoff))
		prev = raw
		waits = append(waits, wait)
	}
	fmt.Println(waits)
	_, err = policies.New(policies.Spec{Kind: "full", Base: time.Second, Cap: time.Millisecond})
	fmt.Println(err)
	// Output:
	// [100ms 200ms 400ms 800ms 1.6s 3.2s 3.2s]
	// cap: must be >= base (1s) (got 1ms)
}

// Retry-After is a floor when the client honours it: a 5 s Retry-After
// stretches a 100 ms backoff, and max_attempts makes the client give up.
func ExampleBackoff_Next() {
	b, _ := policies.New(policies.Spec{Kind: "fixed", Base: 100 * time.Millisecond, HonorRetryAfter: true, MaxAttempts: 2})
	wait, _, giveUp := b.Next(1, 0, 5*time.Second, 0)
	fmt.Println(wait, giveUp)
	_, _, giveUp = b.Next(2, 0, 5*time.Second, 0)
	fmt.Println(giveUp)
	// Output:
	// 5s false
	// true
}
