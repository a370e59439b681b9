package models

import (
	"time"

	"stormsim/policies"
)

// NetworkSpec is handshake latency. An attempt sent at s reaches the server
// at s + rtt/2; the answer is back at the client rtt/2 + server_time after
// that, and the client's backoff starts then. Each attempt draws its own
// rtt and server time.
type NetworkSpec struct {
	RTT        Distribution `yaml:"rtt"`         // round-trip time
	ServerTime Distribution `yaml:"server_time"` // time the server spends on a handshake
	// FirstRTT, when set, is the round-trip time of each client's first
	// attempt instead of RTT: the first wave meets the network and the
	// gateway at their busiest, the whole population reconnecting at once.
	FirstRTT *Distribution `yaml:"first_rtt"`
	// FirstServerTime, when set, is the server time of each client's
	// admitted first attempt instead of ServerTime, for the same reason.
	FirstServerTime *Distribution `yaml:"first_server_time"`
	// RejectTime, when set, is the server time of a handshake that is not
	// admitted (429, 503, refused) instead of ServerTime: a gateway that
	// checks admission before any database work answers those far sooner
	// than it claims a route. Absent, every attempt takes ServerTime.
	RejectTime *Distribution `yaml:"reject_time"`
}

// Validate checks the distributions.
func (n *NetworkSpec) Validate() error {
	if err := n.RTT.Validate(); err != nil {
		return prefixParam("rtt", err)
	}
	if err := n.ServerTime.Validate(); err != nil {
		return prefixParam("server_time", err)
	}
	if n.FirstRTT != nil {
		if err := n.FirstRTT.Validate(); err != nil {
			return prefixParam("first_rtt", err)
		}
	}
	if n.FirstServerTime != nil {
		if err := n.FirstServerTime.Validate(); err != nil {
			return prefixParam("first_server_time", err)
		}
	}
	if n.RejectTime != nil {
		if err := n.RejectTime.Validate(); err != nil {
			return prefixParam("reject_time", err)
		}
	}
	return nil
}

// IsZero reports whether no attempt is ever delayed.
func (n *NetworkSpec) IsZero() bool {
	return n.RTT.IsZero() && n.ServerTime.IsZero() && n.FirstRTT.IsZero() && n.FirstServerTime.IsZero() && n.RejectTime.IsZero()
}

// Legs returns, for client c's attempt number attempt, the one-way time to
// the server and the time from arrival to the answer reaching the client.
func (n *NetworkSpec) Legs(seed, c, attempt uint64) (out, back time.Duration) {
	rtt := n.rtt(seed, c, attempt)
	server := &n.ServerTime
	if attempt == 1 && n.FirstServerTime != nil {
		server = n.FirstServerTime
	}
	return rtt / 2, rtt - rtt/2 + server.Sample(policies.Draw(seed, c, attempt, policies.StreamServerTime))
}

// Back is the time from client c's attempt number attempt reaching the
// server to its answer reaching the client: Legs's back for an admitted
// attempt, and with RejectTime set, rtt - rtt/2 + reject_time for one that
// is not (drawn from the same stream as server_time).
func (n *NetworkSpec) Back(seed, c, attempt uint64, admitted bool) time.Duration {
	if admitted || n.RejectTime == nil {
		_, back := n.Legs(seed, c, attempt)
		return back
	}
	rtt := n.rtt(seed, c, attempt)
	return rtt - rtt/2 + n.RejectTime.Sample(policies.Draw(seed, c, attempt, policies.StreamServerTime))
}

// rtt draws the round-trip time of client c's attempt number attempt.
func (n *NetworkSpec) rtt(seed, c, attempt uint64) time.Duration {
	d := &n.RTT
	if attempt == 1 && n.FirstRTT != nil {
		d = n.FirstRTT
	}
	return d.Sample(policies.Draw(seed, c, attempt, policies.StreamNetwork))
}

// MaxRoundTrip bounds out + back for any attempt.
func (n *NetworkSpec) MaxRoundTrip() time.Duration {
	rtt, server := n.RTT.Upper(), n.ServerTime.Upper()
	if n.FirstRTT != nil {
		rtt = max(rtt, n.FirstRTT.Upper())
	}
	if n.FirstServerTime != nil {
		server = max(server, n.FirstServerTime.Upper())
	}
	if n.RejectTime != nil {
		server = max(server, n.RejectTime.Upper())
	}
	return rtt + server
}

func prefixParam(prefix string, err error) error {
	if pe, ok := err.(*policies.ParamError); ok {
		return &policies.ParamError{Key: prefix + "." + pe.Key, Problem: pe.Problem, Got: pe.Got}
	}
	return err
}
