package gateway

import "sync/atomic"

// claimGate counts the handshakes in the claim stage (waiting for a
// database connection or claiming) and, with a limit, refuses one that
// would wait behind limit others.
type claimGate struct {
	limit    int64         // 0 = none
	inflight *atomic.Int64 // Metrics.ClaimsInflight
}

// enter admits a handshake into the claim stage unless limit others are in
// it; every successful enter must be followed by leave.
func (q *claimGate) enter() bool {
	if n := q.inflight.Add(1); q.limit > 0 && n > q.limit {
		q.inflight.Add(-1)
		return false
	}
	return true
}

func (q *claimGate) leave() { q.inflight.Add(-1) }
