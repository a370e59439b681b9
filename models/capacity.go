package models

import (
	"math"
	"time"

	"stormsim/policies"
)

// CapacitySpec is how fast a gateway gets through handshakes. Each gateway
// serves its handshakes one at a time in arrival order: admission is decided
// when a handshake's turn comes, an admitted one (route claim included)
// holds the gateway 1/admit_per_s seconds and a rejected one 1/reject_per_s,
// and the answer leaves when that ends. Under a storm this queue, not the
// network, is what makes handshakes slow; without the section a gateway
// answers at once.
//
// With decide: arrival the admission token is taken when the handshake
// arrives, as a gateway that checks its bucket before any database work
// does (cmd/gateway): an admitted handshake then waits its turn for the
// 1/admit_per_s of route-claim work, and a rejected one is answered
// 1/reject_per_s after arrival without waiting behind the claims, its
// 1/reject_per_s still pushing back the claims queued after it.
type CapacitySpec struct {
	AdmitPerS  float64 `yaml:"admit_per_s"`  // admitted handshakes a gateway completes per second
	RejectPerS float64 `yaml:"reject_per_s"` // rejections it answers per second; 0 = they cost nothing
	Decide     string  `yaml:"decide"`       // when admission is decided: "turn" (default) or "arrival"
}

// When a gateway with a capacity decides admission (CapacitySpec.Decide).
const (
	DecideAtTurn    = "turn"
	DecideOnArrival = "arrival"
)

// Validate checks the spec.
func (c *CapacitySpec) Validate() error {
	if !(c.AdmitPerS > 0) || c.AdmitPerS > 1e9 {
		return &policies.ParamError{Key: "admit_per_s", Problem: "must be in (0, 1e9] handshakes per second", Got: c.AdmitPerS}
	}
	if c.RejectPerS < 0 || c.RejectPerS > 1e9 || math.IsNaN(c.RejectPerS) {
		return &policies.ParamError{Key: "reject_per_s", Problem: "must be in [0, 1e9] (0: rejections cost nothing)", Got: c.RejectPerS}
	}
	if c.Decide != "" && c.Decide != DecideAtTurn && c.Decide != DecideOnArrival {
		return &policies.ParamError{Key: "decide", Problem: `must be "turn" or "arrival"`, Got: c.Decide}
	}
	return nil
}

// serviceTime is 1/rate in whole nanoseconds (0 for a rate of 0).
func serviceTime(perS float64) time.Duration {
	if perS == 0 {
		return 0
	}
	return time.Duration(math.Round(float64(time.Second) / perS))
}

// HandshakeQueue is one gateway's first-in, first-out handshake server.
type HandshakeQueue struct {
	admit, reject time.Duration // service times
	free          time.Duration // when the gateway finishes its current work
	onArrival     bool          // admission decided on arrival (CapacitySpec.Decide)
}

// NewHandshakeQueue returns an idle queue for capacity c.
func NewHandshakeQueue(c *CapacitySpec) *HandshakeQueue {
	return &HandshakeQueue{admit: serviceTime(c.AdmitPerS), reject: serviceTime(c.RejectPerS), onArrival: c.Decide == DecideOnArrival}
}

// DecidesOnArrival reports whether admission is decided when a handshake
// arrives (then use Book) rather than at its turn (Start and Finish).
func (q *HandshakeQueue) DecidesOnArrival() bool { return q.onArrival }

// Book serves a handshake decided on arrival and returns when its answer
// leaves: an admitted one after its turn and its claim work, a rejected
// one after its own service time from arrival, that time still taken from
// the gateway (the claims behind it wait for it). Calls must come in
// arrival order.
func (q *HandshakeQueue) Book(arrival time.Duration, admitted bool) time.Duration {
	if admitted {
		q.free = max(arrival, q.free) + q.admit
		return q.free
	}
	q.free = max(arrival, q.free) + q.reject
	return arrival + q.reject
}

// Start is when a handshake arriving at arrival gets its turn. Calls must
// come in arrival order; turns then never go backwards in time.
func (q *HandshakeQueue) Start(arrival time.Duration) time.Duration { return max(arrival, q.free) }

// Finish books the handshake that started at start and returns when its
// answer leaves the gateway.
func (q *HandshakeQueue) Finish(start time.Duration, admitted bool) time.Duration {
	q.free = start + q.reject
	if admitted {
		q.free = start + q.admit
	}
	return q.free
}
