package sim

import (
	"fmt"
	"time"

	"stormsim/models"
	"stormsim/policies"
)

// Inert is a config key that can have no effect in its scenario, given
// the other keys: a setting that does nothing is said, not silently kept.
type Inert struct {
	Path   string // the key, e.g. "policies[0].timeout"
	Reason string // why it does nothing, and what would let it act
}

// InertKeys lists the keys of s (resolved) that can have no effect. A
// default can be among them (a resolved scenario does not tell a value
// written from one filled in): the config reports only the keys a file
// or an override sets.
func (s *Scenario) InertKeys() []Inert {
	var out []Inert
	add := func(path, format string, args ...any) {
		out = append(out, Inert{Path: path, Reason: fmt.Sprintf(format, args...)})
	}
	draining := s.Failure != nil && s.Failure.Kind == models.FailureDrain
	drains := draining || s.ThenDrain != nil || s.Deploy != nil // a drain_policy's clients reconnect in it
	timeoutInert := func(path string, p policies.Spec) {
		if p.Timeout <= 0 || s.Capacity != nil {
			return
		}
		var slowest time.Duration
		if s.Network != nil {
			slowest = s.Network.MaxRoundTrip()
		}
		if slowest > p.Timeout {
			return
		}
		back := "with no network latency"
		if s.Network != nil {
			back = fmt.Sprintf("and every answer is back within %v", slowest)
		}
		add(path, "cannot fire: without a capacity model a gateway answers at once, %s (the timeout only sets the default "+
			"horizon to 1h); add capacity: to model a gateway that keeps handshakes waiting", back)
	}
	for i, p := range s.Policies {
		timeoutInert(fmt.Sprintf("policies[%d].timeout", i), p)
	}
	if s.DrainPolicy != nil && drains {
		timeoutInert("drain_policy.timeout", *s.DrainPolicy)
	}

	retryAfter := s.Admission.RetryAfter > 0 || s.Gateways != nil && s.Gateways.Admission != nil && s.Gateways.Admission.RetryAfter > 0 ||
		s.ThenDrain != nil && s.ThenDrain.Admission != nil && s.ThenDrain.Admission.RetryAfter > 0
	honoured := false
	for i, p := range s.Policies {
		honoured = honoured || p.HonorRetryAfter
		if p.HonorRetryAfter && !retryAfter {
			add(fmt.Sprintf("policies[%d].honor_retry_after", i), "no admission sends a Retry-After (admission.retry_after is 0)")
		}
	}
	if s.DrainPolicy != nil && drains {
		honoured = honoured || s.DrainPolicy.HonorRetryAfter
	}
	if !honoured {
		const noHonour = "no policy honours it: the clients wait their backoff whatever the Retry-After (honor_retry_after: true makes it a floor)"
		if s.Admission.RetryAfter > 0 {
			add("admission.retry_after", noHonour)
		}
		if s.Gateways != nil && s.Gateways.Admission != nil && s.Gateways.Admission.RetryAfter > 0 {
			add("gateways.admission.retry_after", noHonour)
		}
	}

	if c := s.Capacity; c != nil {
		if !s.HasTimeouts() {
			const why = "acts only on handshakes whose client gave up waiting, and no policy has a timeout"
			if c.Abandoned != "" {
				add("capacity.abandoned", why)
			}
			if c.WastedPerS > 0 {
				add("capacity.wasted_per_s", why)
			}
			if c.MaxQueue >= s.Clients {
				add("capacity.max_queue", "a queue never holds %d handshakes: each of the %d clients has at most one waiting "+
					"without a timeout", c.MaxQueue, s.Clients)
			}
		}
		if c.WastedPerS > 0 && c.Abandoned == models.AbandonedSkip && (s.Network == nil || s.Network.GoneLeg == nil) {
			add("capacity.wasted_per_s", "with abandoned: skip a gateway drops a departed client's handshake instead of claiming for it "+
				"(network.gone would give it claims begun before it noticed)")
		}
		if c.RejectPerS > 0 && c.Abandoned != models.AbandonedSkip && !s.rejects() {
			add("capacity.reject_per_s", "with unlimited admission nothing is rejected (and abandoned: skip is off)")
		}
	}

	if n := s.Network; n != nil && n.GoneLeg != nil &&
		(s.Capacity == nil || s.Capacity.Abandoned != models.AbandonedSkip || !s.HasTimeouts()) {
		add("network.gone", "acts only with capacity.abandoned: skip and a policy timeout (when a gateway notices a client gave up)")
	}

	if s.Failure != nil && !draining {
		if s.Failure.Grace != 0 {
			add("failure.grace", "applies to a drain only (failure.kind: drain)")
		}
		if s.Failure.Spread {
			add("failure.spread", "applies to a drain only (failure.kind: drain)")
		}
	}
	if s.DrainPolicy != nil && !drains {
		add("drain_policy", "applies to a drain only (failure.kind: drain, then_drain, or a deploy): clients reconnect with the policy under test")
	}
	if s.Network != nil && s.Network.DrainFirstOut != nil && !drains {
		add("network.drain_first_out", "applies to a drain only (failure.kind: drain, then_drain, or a deploy): no client is drained")
	}
	if draining && s.Detection != nil {
		add("detection", "a drained client learns of the drain from its goaway, not by detecting a failure")
	}
	if draining && s.Lease != nil {
		add("lease", "a drain releases every route as it closes its connections: no route is left to reclaim")
	}
	if g := s.Gateways; g != nil && g.Balancer != models.BalancerLeastConnections {
		add("gateways.connections", "only least_connections counts connections (the balancer is %s)", g.Balancer)
	}
	return out
}

// rejects reports whether an admission of s can answer 429: one that is
// not unlimited, for the storm, its survivors or a drain that follows.
func (s *Scenario) rejects() bool {
	limited := func(a *models.AdmissionSpec) bool { return a != nil && a.Kind != models.AdmissionUnlimited }
	if s.Gateways != nil && s.Gateways.Admission != nil {
		if limited(s.Gateways.Admission) {
			return true
		}
	} else if limited(&s.Admission) {
		return true
	}
	if d := s.ThenDrain; d != nil {
		return limited(d.Admission) || d.Admission == nil && limited(&s.Admission)
	}
	return false
}
