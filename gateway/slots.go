package gateway

import (
	"context"
	"errors"
	"sync/atomic"
)

// errQueueFull refuses a handshake that would wait behind
// Config.MaxClaimsInflight others for a slot.
var errQueueFull = errors.New("slot queue full")

// slotQueue is the stage in front of the handshake pool: at most
// cap(slots) handshakes hold a slot at once (the pool's size), each for its
// route claim, and the others wait for one in arrival order; with a limit,
// a handshake that would wait behind limit others is refused at once (the
// model's capacity.max_queue).
type slotQueue struct {
	slots    chan struct{}
	limit    int64         // 0 = no limit
	waiting  *atomic.Int64 // Metrics.ClaimsWaiting
	inflight *atomic.Int64 // Metrics.ClaimsInflight: waiting or holding a slot
}

// enter waits for a slot until ctx ends; it returns errQueueFull at once if
// limit others are waiting. Every nil return must be followed by leave.
func (q *slotQueue) enter(ctx context.Context) error {
	if n := q.waiting.Add(1); q.limit > 0 && n > q.limit {
		q.waiting.Add(-1)
		return errQueueFull
	}
	q.inflight.Add(1)
	defer q.waiting.Add(-1)
	select {
	case q.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		q.inflight.Add(-1)
		return ctx.Err()
	}
}

// leave gives the slot back.
func (q *slotQueue) leave() {
	<-q.slots
	q.inflight.Add(-1)
}

// busy is the number of handshakes waiting for a slot or holding one.
func (q *slotQueue) busy() int64 { return q.inflight.Load() }
