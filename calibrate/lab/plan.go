package lab

import (
	"fmt"
	"math"
	"slices"
	"time"

	"stormsim/models"
	"stormsim/policies"
	"stormsim/sim"
)

// Gateway ids of the lab, as in the seed document.
const (
	GatewayFailed    = "gw-a" // holds every client, then is SIGKILLed
	GatewaySurvivor  = "gw-b" // admits the storm through the scenario's admission, then drains
	GatewayDrainDest = "gw-c" // joins for the drain
)

// idlePings is the real gateways' idle timeout in ping intervals when the
// scenario has no heartbeat detection: the seed's 3000 ms for a 500 ms ping.
const idlePings = 6

// Plan is the real lab a scenario describes: the gateways' settings and
// the clients' reconnect rules, derived once and checked against what the
// real gateway can do.
type Plan struct {
	Clients     int
	Window      time.Duration // the series' window
	Policy      policies.Spec // the clients' policy after a drop
	DrainPolicy policies.Spec // after a goaway
	Jitter      time.Duration // initial jitter of every round

	Lease, Ping, Idle time.Duration
	Admission         models.AdmissionSpec // gw-b's
	DrainAdmission    models.AdmissionSpec // gw-c's
	DrainGrace        time.Duration
	WithDrain         bool
	// DrainPace and ReconnectHint are every gateway's --drain-pace and
	// --reconnect-hint: the scenario's drain section (reserved's rate and
	// burst resolved), the seed's drain without one. Paced says the
	// section was given: the drain is then judged by the tolerances.
	DrainPace     models.DrainPaceSpec
	ReconnectHint models.ReconnectHintSpec
	Paced         bool

	// Deploy, when set, makes the lab a rolling deploy of a pool instead
	// of the crash and the drain.
	Deploy *DeployLab

	// Horizon, when > 0, ends the crash storm's observation at the
	// scenario's horizon whether or not every client is back: a storm
	// that never ends is measured up to where the simulator stops.
	Horizon time.Duration
	// Abandoned and MaxQueue are gw-b's --abandoned and
	// --max-claims-inflight: the scenario's capacity.abandoned (serve when
	// unset, the model's default) and capacity.max_queue.
	Abandoned models.Abandoned
	MaxQueue  int

	ReclaimLo, ReclaimHi time.Duration // the analytic reclaim bound
	AcceptBound          float64       // most admissions gw-b can make in one window (+Inf: unlimited)
}

// DeployLab is a rolling deploy of Gateways real gateways, one at a time
// in Order, each waited for back before the next (the model's batch 1 and
// wait_ready), Pause between them.
type DeployLab struct {
	Gateways  int
	Order     []int
	Pause     time.Duration
	Admission models.AdmissionSpec // each gateway's
	Seed      uint64               // the balancer's draws: the scenario's seed
}

// NewPlan derives the lab from the resolved scenario s and the policy under
// test. It refuses what has no real counterpart with a *sim.FieldError
// naming the key.
func NewPlan(s *sim.Scenario, policy policies.Spec) (Plan, error) {
	p := Plan{Clients: s.Clients, Window: s.Metrics.Window, Policy: policy, DrainPolicy: policy,
		Jitter: s.InitialJitter, Admission: s.Admission, DrainAdmission: s.Admission}
	if s.DrainPolicy != nil {
		p.DrainPolicy = *s.DrainPolicy
	}
	if d := s.Drain; d != nil {
		p.DrainPace, p.ReconnectHint, p.Paced = d.Pace, d.ReconnectHint, true
		if d.ReconnectHint.Kind == models.HintReserved && d.ReconnectHint.Rate == 0 {
			return p, &sim.FieldError{Path: "drain.reconnect_hint.rate", Problem: "the lab's gateways need the rate a reserved hint spaces its slots by", Got: 0}
		}
	}
	if s.Deploy != nil {
		return deployPlan(s, p)
	}
	switch {
	case s.Failure != nil && s.Failure.Kind != models.FailureCrash:
		return p, &sim.FieldError{Path: "failure.kind", Problem: "calibration runs a crash (SIGKILL) of the first gateway", Got: s.Failure.Kind}
	case s.Gateways != nil:
		return p, &sim.FieldError{Path: "gateways", Problem: "calibration runs one surviving gateway; a pool behind a balancer is not modelled by the lab", Got: "a pool"}
	case s.Detection != nil && (s.Detection.Kind != models.DetectionReset || !s.Detection.Delay.IsZero()):
		return p, &sim.FieldError{Path: "detection", Problem: "the lab's clients see the crash as a TCP reset at once; use detection {kind: reset} or none", Got: s.Detection.Kind}
	case s.Disconnect.At != 0:
		return p, &sim.FieldError{Path: "disconnect.at", Problem: "the lab's clients notice the crash when it happens", Got: s.Disconnect.At}
	case s.Lease == nil:
		return p, &sim.FieldError{Path: "lease", Problem: "calibration needs the lease model: the real gateways keep leases", Got: "none"}
	}
	if d := s.ThenDrain; d != nil {
		p.WithDrain, p.DrainGrace = true, d.Grace
		if d.Admission != nil {
			p.DrainAdmission = *d.Admission
		}
	}
	if s.Horizon > 0 || s.TracksOutcome() {
		p.Horizon = s.EffectiveHorizon()
	}
	p.Abandoned = models.AbandonedServe
	if c := s.Capacity; c != nil {
		if c.Abandoned != "" {
			p.Abandoned = c.Abandoned
		}
		p.MaxQueue = c.MaxQueue
	}
	if p.DrainGrace == 0 {
		p.DrainGrace = models.DefaultDrainGrace
	}
	for _, a := range []struct {
		path string
		spec models.AdmissionSpec
	}{{"admission", s.Admission}, {"then_drain.admission", p.DrainAdmission}} {
		if a.spec.Kind != models.AdmissionTokenBucket && a.spec.Kind != models.AdmissionUnlimited {
			return p, &sim.FieldError{Path: a.path + ".kind", Problem: "the real gateway admits by token_bucket or unlimited", Got: a.spec.Kind}
		}
		if a.spec.RetryAfter%time.Second != 0 {
			return p, &sim.FieldError{Path: a.path + ".retry_after", Problem: "the real gateway sends whole seconds", Got: a.spec.RetryAfter}
		}
	}
	l := s.Lease
	p.Lease, p.Ping = l.Duration, l.RenewEvery
	if models.LeasePeriod(p.Lease, p.Ping) != l.RenewEvery {
		return p, &sim.FieldError{Path: "lease.renew_every", Problem: fmt.Sprintf("the real gateway renews every max(100ms, min(ping, duration/3)); with duration %v it cannot renew every", p.Lease), Got: l.RenewEvery}
	}
	if l.SweepEvery != l.RenewEvery {
		return p, &sim.FieldError{Path: "lease.sweep_every", Problem: "the real gateway sweeps in its renew loop: sweep_every must equal renew_every", Got: l.SweepEvery}
	}
	p.Idle = idlePings * p.Ping
	p.ReclaimLo, p.ReclaimHi = models.ReclaimBound(l.Duration, l.RenewEvery, l.SweepEvery)
	p.AcceptBound = math.Inf(1)
	if s.Admission.Kind == models.AdmissionTokenBucket {
		p.AcceptBound = s.Admission.New().WindowBound(p.Window)
	}
	return p, nil
}

// deployPlan is the lab of a rolling deploy: the pool's gateways with
// the seed lab's lease, ping and idle, each drained in turn.
func deployPlan(s *sim.Scenario, p Plan) (Plan, error) {
	d := s.Deploy
	switch {
	case d.Batch != 1:
		return p, &sim.FieldError{Path: "deploy.batch", Problem: "the lab deploys one gateway at a time", Got: d.Batch}
	case !d.WaitsReady():
		return p, &sim.FieldError{Path: "deploy.wait_ready", Problem: "the lab waits for each restarted gateway before the next drain", Got: false}
	case s.Gateways.Balancer != models.BalancerRandom:
		return p, &sim.FieldError{Path: "gateways.balancer", Problem: "the lab's clients pick a gateway by the random balancer's draws (models.RandomPick)", Got: s.Gateways.Balancer}
	case s.Gateways.HealthCheck != 0:
		return p, &sim.FieldError{Path: "gateways.health_check", Problem: "the lab takes a gateway out of the clients' list before draining it: health_check 0", Got: s.Gateways.HealthCheck}
	case d.Order == sim.DeployRandom:
		return p, &sim.FieldError{Path: "deploy.order", Problem: "the lab deploys in index or reverse order", Got: d.Order}
	}
	adm := s.Admission
	if s.Gateways.Admission != nil {
		adm = *s.Gateways.Admission
	}
	dl := &DeployLab{Gateways: s.Gateways.Count, Pause: d.Pause, Admission: adm, Seed: s.Seed}
	for g := range dl.Gateways {
		dl.Order = append(dl.Order, g)
	}
	if d.Order == sim.DeployReverse {
		slices.Reverse(dl.Order)
	}
	if adm.Kind != models.AdmissionTokenBucket && adm.Kind != models.AdmissionUnlimited {
		return p, &sim.FieldError{Path: "gateways.admission.kind", Problem: "the real gateway admits by token_bucket or unlimited", Got: adm.Kind}
	}
	if adm.RetryAfter%time.Second != 0 {
		return p, &sim.FieldError{Path: "gateways.admission.retry_after", Problem: "the real gateway sends whole seconds", Got: adm.RetryAfter}
	}
	p.Deploy, p.Admission = dl, adm
	p.Abandoned = models.AbandonedServe
	if c := s.Capacity; c != nil {
		if c.Abandoned != "" {
			p.Abandoned = c.Abandoned
		}
		p.MaxQueue = c.MaxQueue
	}
	p.Lease, p.Ping = 1500*time.Millisecond, 500*time.Millisecond // the seed's
	p.Idle = idlePings * p.Ping
	p.DrainGrace = d.Grace
	p.AcceptBound = math.Inf(1)
	return p, nil
}
