package gateway

import (
	"context"
	"errors"
	"sync/atomic"
)

// errClaimsQueueFull refuses a handshake that would wait behind
// Config.MaxClaimsInflight others for its claim.
var errClaimsQueueFull = errors.New("claims queue full")

// claimGate is the claim stage: at most cap(slots) claims run at once (the
// handshake pool's size), the others wait for a slot in arrival order; with
// a limit, a handshake that would wait behind limit others is refused at
// once (the model's capacity.max_queue).
type claimGate struct {
	slots    chan struct{}
	limit    int64         // 0 = no limit
	waiting  *atomic.Int64 // Metrics.ClaimsWaiting
	inflight *atomic.Int64 // Metrics.ClaimsInflight: waiting or claiming
}

// enter waits for a claim slot until ctx ends; it returns
// errClaimsQueueFull at once if limit others are waiting. Every nil return
// must be followed by leave.
func (q *claimGate) enter(ctx context.Context) error {
	if n := q.waiting.Add(1); q.limit > 0 && n > q.limit {
		q.waiting.Add(-1)
		return errClaimsQueueFull
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

func (q *claimGate) leave() {
	<-q.slots
	q.inflight.Add(-1)
}
