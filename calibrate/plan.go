package calibrate

import (
	"fmt"
	"math"
	"time"

	"stormsim/models"
	"stormsim/policies"
	"stormsim/sim"
)

// Gateway ids of the lab, as in the seed document.
const (
	gatewayFailed    = "gw-a" // holds every client, then is SIGKILLed
	gatewaySurvivor  = "gw-b" // admits the storm through the scenario's admission, then drains
	gatewayDrainDest = "gw-c" // joins for the drain
)

// idlePings is the real gateways' idle timeout in ping intervals when the
// scenario has no heartbeat detection: the seed's 3000 ms for a 500 ms ping.
const idlePings = 6

// plan is the real lab a scenario describes: the gateways' settings and
// the clients' reconnect rules, derived once and checked against what the
// real gateway can do.
type plan struct {
	clients int
	seed    uint64
	window  time.Duration
	policy  policies.Spec // the clients' policy after a drop
	drain   policies.Spec // after a goaway
	jitter  time.Duration // initial jitter of every round

	lease, ping, idle time.Duration
	admission         models.AdmissionSpec // gw-b's
	drainAdmission    models.AdmissionSpec // gw-c's
	drainGrace        time.Duration
	withDrain         bool

	reclaimLo, reclaimHi time.Duration // the analytic bound
	acceptBound          float64       // most admissions gw-b can make in one window
}

// newPlan derives the lab from the resolved scenario s and the policy under
// test. It refuses what has no real counterpart, naming the key.
func newPlan(s *sim.Scenario, policy policies.Spec) (plan, error) {
	p := plan{clients: s.Clients, seed: s.Seed, window: s.Metrics.Window, policy: policy, drain: policy,
		jitter: s.InitialJitter, admission: s.Admission, drainAdmission: s.Admission}
	if s.DrainPolicy != nil {
		p.drain = *s.DrainPolicy
	}
	switch {
	case s.Failure != nil && s.Failure.Kind != "crash":
		return p, &sim.FieldError{Path: "failure.kind", Problem: "calibration runs a crash (SIGKILL) of the first gateway", Got: s.Failure.Kind}
	case s.Gateways != nil:
		return p, &sim.FieldError{Path: "gateways", Problem: "calibration runs one surviving gateway; a pool behind a balancer is not modelled by the lab", Got: "a pool"}
	case s.Detection != nil && (s.Detection.Kind != "reset" || !s.Detection.Delay.IsZero()):
		return p, &sim.FieldError{Path: "detection", Problem: "the lab's clients see the crash as a TCP reset at once; use detection {kind: reset} or none", Got: s.Detection.Kind}
	case s.Disconnect.At != 0:
		return p, &sim.FieldError{Path: "disconnect.at", Problem: "the lab's clients notice the crash when it happens", Got: s.Disconnect.At}
	case s.Lease == nil:
		return p, &sim.FieldError{Path: "lease", Problem: "calibration needs the lease model: the real gateways keep leases", Got: "none"}
	}
	if d := s.ThenDrain; d != nil {
		p.withDrain, p.drainGrace = true, d.Grace
		if d.Admission != nil {
			p.drainAdmission = *d.Admission
		}
	}
	if p.drainGrace == 0 {
		p.drainGrace = models.DefaultDrainGrace
	}
	for _, a := range []struct {
		path string
		spec models.AdmissionSpec
	}{{"admission", s.Admission}, {"then_drain.admission", p.drainAdmission}} {
		if a.spec.Kind != "token_bucket" && a.spec.Kind != "unlimited" {
			return p, &sim.FieldError{Path: a.path + ".kind", Problem: "the real gateway admits by token_bucket or unlimited", Got: a.spec.Kind}
		}
		if a.spec.RetryAfter%time.Second != 0 {
			return p, &sim.FieldError{Path: a.path + ".retry_after", Problem: "the real gateway sends whole seconds", Got: a.spec.RetryAfter}
		}
	}
	l := s.Lease
	p.lease, p.ping = l.Duration, l.RenewEvery
	if models.LeasePeriod(p.lease, p.ping) != l.RenewEvery {
		return p, &sim.FieldError{Path: "lease.renew_every", Problem: fmt.Sprintf("the real gateway renews every max(100ms, min(ping, duration/3)); with duration %v it cannot renew every", p.lease), Got: l.RenewEvery}
	}
	if l.SweepEvery != l.RenewEvery {
		return p, &sim.FieldError{Path: "lease.sweep_every", Problem: "the real gateway sweeps in its renew loop: sweep_every must equal renew_every", Got: l.SweepEvery}
	}
	p.idle = idlePings * p.ping
	p.reclaimLo, p.reclaimHi = models.ReclaimBound(l.Duration, l.RenewEvery, l.SweepEvery)
	p.acceptBound = math.Inf(1)
	if s.Admission.Kind == "token_bucket" {
		p.acceptBound = s.Admission.New().WindowBound(p.window)
	}
	return p, nil
}
