package models

import (
	"time"

	"stormsim/internal/param"
	"stormsim/policies/rng"
)

// PoolSpec is a pool of gateways behind a load balancer. Gateway 0 is the
// one that fails; gateways 1..count-1 survive, each with its own admission.
// Until the balancer's health check notices the failure, it keeps sending
// some attempts to gateway 0, which fail fast (refused, or 503 if draining).
type PoolSpec struct {
	Count       int            `yaml:"count"`        // gateways, the failed one included (>= 2)
	Admission   *AdmissionSpec `yaml:"admission"`    // per surviving gateway; default the scenario's admission
	Balancer    Balancer       `yaml:"balancer"`     // BalancerRandom (default), BalancerRoundRobin or BalancerLeastConnections
	HealthCheck time.Duration  `yaml:"health_check"` // probe interval; one failed probe marks a gateway down; 0 = at once
	Connections int            `yaml:"connections"`  // connections each survivor already holds; default the clients
}

// Balancer is how the load balancer spreads attempts over the gateways.
type Balancer string

// The balancers.
const (
	BalancerRandom           Balancer = "random"            // a draw per attempt
	BalancerRoundRobin       Balancer = "round_robin"       // in turn
	BalancerLeastConnections Balancer = "least_connections" // the gateway with the fewest connections
)

// Validate checks the spec and fills in defaults.
func (p *PoolSpec) Validate(clients int) error {
	if p.Count < 2 || p.Count > 1024 {
		return &param.Error{Key: "count", Problem: "must be in [2, 1024] (the failed gateway and its survivors)", Got: p.Count}
	}
	if p.Admission != nil {
		if err := p.Admission.Validate(); err != nil {
			return prefixParam("admission", err)
		}
	}
	switch p.Balancer {
	case "":
		p.Balancer = BalancerRandom
	case BalancerRandom, BalancerRoundRobin, BalancerLeastConnections:
	default:
		return &param.Error{Key: "balancer", Problem: "must be random, round_robin or least_connections", Got: p.Balancer}
	}
	if p.HealthCheck < 0 {
		return &param.Error{Key: "health_check", Problem: "must be >= 0", Got: p.HealthCheck}
	}
	if p.Connections == 0 {
		p.Connections = clients
	}
	return nil
}

// DownAt is when the balancer stops sending attempts to the failed gateway:
// its first probe strictly after t = 0, probes running every health_check at
// a uniformly random phase.
func (p *PoolSpec) DownAt(seed uint64) time.Duration {
	if p.HealthCheck == 0 {
		return 0
	}
	phase := rng.UniformDuration(rng.Draw(seed, 0, 0, rng.StreamHealthCheck), p.HealthCheck)
	if phase == 0 {
		return p.HealthCheck
	}
	return phase
}
