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
}

// Validate checks both distributions.
func (n *NetworkSpec) Validate() error {
	if err := n.RTT.Validate(); err != nil {
		return prefixParam("rtt", err)
	}
	if err := n.ServerTime.Validate(); err != nil {
		return prefixParam("server_time", err)
	}
	return nil
}

// Legs returns, for client c's attempt number attempt, the one-way time to
// the server and the time from arrival to the answer reaching the client.
func (n *NetworkSpec) Legs(seed, c, attempt uint64) (out, back time.Duration) {
	rtt := n.RTT.Sample(policies.Draw(seed, c, attempt, policies.StreamNetwork))
	server := n.ServerTime.Sample(policies.Draw(seed, c, attempt, policies.StreamServerTime))
	return rtt / 2, rtt - rtt/2 + server
}

// MaxRoundTrip bounds out + back for any attempt.
func (n *NetworkSpec) MaxRoundTrip() time.Duration { return n.RTT.Upper() + n.ServerTime.Upper() }

func prefixParam(prefix string, err error) error {
	if pe, ok := err.(*policies.ParamError); ok {
		return &policies.ParamError{Key: prefix + "." + pe.Key, Problem: pe.Problem, Got: pe.Got}
	}
	return err
}
