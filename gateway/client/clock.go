package client

import (
	"context"
	"time"
)

// Clock is the client's source of time. Sleeps go through it so that tests
// can record the waits the client chooses instead of spending them.
type Clock interface {
	// Now returns the current time (with a monotonic reading for the
	// system clock, so differences are immune to wall-clock steps).
	Now() time.Time
	// Sleep waits d, or returns ctx.Err() if ctx ends first. d <= 0
	// returns at once (after checking ctx).
	Sleep(ctx context.Context, d time.Duration) error
}

// SystemClock is the real clock: time.Now and a timer.
var SystemClock Clock = systemClock{}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
