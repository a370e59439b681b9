package sim

import (
	"fmt"
	"time"

	"stormsim/internal/human"
	"stormsim/models"
)

// resolvePace validates the drain section's pace first, so that a
// preset's shutdown can be the default grace of every drain.
func (s *Scenario) resolvePace() error {
	d := s.Drain
	if d == nil {
		return nil
	}
	if err := d.Pace.Validate(); err != nil {
		return prefixed("drain.pace", err)
	}
	if shutdown := d.Pace.Shutdown(); shutdown > 0 {
		if s.Failure != nil && s.Failure.Grace == 0 {
			s.Failure.Grace = shutdown
		}
		if s.ThenDrain != nil && s.ThenDrain.Grace == 0 {
			s.ThenDrain.Grace = shutdown
		}
		if s.Deploy != nil && s.Deploy.Grace == 0 {
			s.Deploy.Grace = shutdown
		}
	}
	return nil
}

// resolveDrains checks the drain and deploy sections once every other
// model is resolved: a setting that cannot act is an error.
func (s *Scenario) resolveDrains() error {
	if err := s.resolveDeploy(); err != nil {
		return err
	}
	d := s.Drain
	if d == nil {
		return nil
	}
	if !s.Draining() && s.ThenDrain == nil && s.Deploy == nil {
		return &FieldError{Path: "drain", Problem: "the scenario has no drain to pace: add failure {kind: drain}, then_drain or deploy", Got: "no drain"}
	}
	if s.Draining() && s.Failure.Spread {
		return &FieldError{Path: "failure.spread", Problem: "drain.pace says when goaways go: remove spread (drain.pace {kind: spread, over: ...} spreads them evenly)", Got: true}
	}
	if s.ThenDrain != nil && s.ThenDrain.Spread {
		return &FieldError{Path: "then_drain.spread", Problem: "drain.pace says when goaways go: remove spread (drain.pace {kind: spread, over: ...} spreads them evenly)", Got: true}
	}
	h := d.ReconnectHint
	dests := s.drainDestinations()
	for _, dest := range dests {
		hint := h
		hint.Reserve(dest.rate, dest.burst)
		if err := hint.Validate(); err != nil {
			fe := prefixed("drain.reconnect_hint", err)
			if h.Kind == models.HintReserved && h.Rate == 0 {
				fe.(*FieldError).Problem = fmt.Sprintf("a reserved hint needs rate: %s admits without a rate to reserve", dest.what)
			}
			return fe
		}
	}
	if len(dests) == 1 {
		d.ReconnectHint.Reserve(dests[0].rate, dests[0].burst) // the echo shows the rate it reserves by
	}
	if h.Kind == models.HintReserved && d.ReconnectHint.Rate == 0 {
		return nil // each drain reserves by its own destination's rate, checked above
	}
	return d.ReconnectHint.Validate()
}

// drainDestination is the admission a drain's clients meet: the rate and
// burst a reserved hint spaces them by.
type drainDestination struct {
	what  string
	rate  float64
	burst int
}

// admissionRate is a spec's rate and burst as a token bucket's: a slot's
// admissions per slot length, and zero for unlimited admission.
func admissionRate(a models.AdmissionSpec) (float64, int) {
	switch a.Kind {
	case models.AdmissionTokenBucket:
		return a.Rate, a.Burst
	case models.AdmissionSlots:
		return float64(a.PerSlot) / a.Slot.Seconds(), a.PerSlot
	}
	return 0, 0
}

// drainDestinations are the admissions each of the scenario's drains
// sends its clients to: the fresh gateway of then_drain; the survivors of
// a pool whose gateway 0 drains (their rates summed); for a deploy, the
// gateways in rotation while a batch drains, shared by the batch's
// drains.
func (s *Scenario) drainDestinations() []drainDestination {
	var out []drainDestination
	pooled := func(count int) (float64, int) {
		a := s.Admission
		if s.Gateways.Admission != nil {
			a = *s.Gateways.Admission
		}
		rate, burst := admissionRate(a)
		return rate * float64(count), burst * count
	}
	if s.Draining() {
		if s.Gateways != nil {
			rate, burst := pooled(s.Gateways.Count - 1)
			out = append(out, drainDestination{"the pool's survivors", rate, burst})
		} else {
			rate, burst := admissionRate(s.Admission)
			out = append(out, drainDestination{"admission", rate, burst})
		}
	}
	if s.ThenDrain != nil {
		a := s.Admission
		if s.ThenDrain.Admission != nil {
			a = *s.ThenDrain.Admission
		}
		rate, burst := admissionRate(a)
		out = append(out, drainDestination{"then_drain's admission", rate, burst})
	}
	if s.Deploy != nil {
		rate, burst := s.deployReservation()
		out = append(out, drainDestination{"the pool's admission", rate, burst})
	}
	return out
}

// deployReservation is the rate and burst a deploy's reserved hint
// defaults to for each drained gateway: the admission of the count -
// batch gateways left in rotation, shared by the batch's drains.
func (s *Scenario) deployReservation() (float64, int) {
	a := s.Admission
	if s.Gateways.Admission != nil {
		a = *s.Gateways.Admission
	}
	rate, burst := admissionRate(a)
	up, batch := s.Gateways.Count-s.Deploy.Batch, s.Deploy.Batch
	return rate * float64(up) / float64(batch), max(1, burst*up/batch)
}

// resolveDeploy fills in the deploy's defaults and refuses what a
// rolling restart has no use for.
func (s *Scenario) resolveDeploy() error {
	d := s.Deploy
	if d == nil {
		return nil
	}
	switch {
	case s.Gateways == nil:
		return &FieldError{Path: "deploy", Problem: "a rolling deploy restarts a pool: add gateways {count: N} with N >= 2, so that a drained gateway's clients have somewhere to go", Got: "no gateways"}
	case s.Failure != nil:
		return &FieldError{Path: "failure", Problem: "a deploy drains every gateway in turn and nothing fails: remove failure", Got: s.Failure.Kind}
	case s.ThenDrain != nil:
		return &FieldError{Path: "then_drain", Problem: "a deploy drains every gateway already: remove then_drain", Got: "set"}
	case s.Lease != nil:
		return &FieldError{Path: "lease", Problem: "a deploy's gateways release their routes as each connection closes; the lease model times a crashed gateway's routes: remove lease", Got: "set"}
	case s.Detection != nil:
		return &FieldError{Path: "detection", Problem: "a deploy's clients learn of each drain from their goaway: remove detection", Got: s.Detection.Kind}
	case s.Gateways.Connections != s.Clients:
		return &FieldError{Path: "gateways.connections", Problem: "a deploy's gateways hold the scenario's clients (client c on gateway c mod count): remove connections", Got: s.Gateways.Connections}
	}
	switch d.Order {
	case "":
		d.Order = DeployIndex
	case DeployIndex, DeployReverse, DeployRandom:
	default:
		return &FieldError{Path: "deploy.order", Problem: "must be index, reverse or random", Got: d.Order}
	}
	if d.Batch == 0 {
		d.Batch = 1
	}
	if d.Batch < 1 || d.Batch >= s.Gateways.Count {
		return &FieldError{Path: "deploy.batch", Problem: fmt.Sprintf("must be in [1, %d]: at least one of the %d gateways stays in rotation", s.Gateways.Count-1, s.Gateways.Count), Got: d.Batch}
	}
	if d.WaitReady == nil {
		yes := true
		d.WaitReady = &yes
	}
	if d.Grace == 0 {
		d.Grace = models.DefaultDrainGrace
	}
	for _, f := range []struct {
		key string
		v   time.Duration
	}{{"pause", d.Pause}, {"startup", d.Startup}, {"grace", d.Grace}} {
		if f.v < 0 || f.v > models.MaxPaceDuration {
			return &FieldError{Path: "deploy." + f.key, Problem: fmt.Sprintf("must be in [0, %v]", models.MaxPaceDuration), Got: f.v}
		}
	}
	return nil
}

// Warnings are settings of a resolved scenario that act, but not as one
// would expect: the run goes ahead, and stormsim says why beside it.
func (s *Scenario) Warnings() []string {
	d := s.Drain
	if d == nil {
		return nil
	}
	var out []string
	p, h := d.Pace, d.ReconnectHint
	if !p.Paced() && h.Kind == models.HintFixed {
		out = append(out, fmt.Sprintf("drain.reconnect_hint: a fixed hint with pace all brings every drained client back at the same instant, %v later: it moves the storm and spreads nothing (pace the drain, or use uniform or reserved)", h.Delay))
	}
	check := func(key string, n int, grace time.Duration) {
		if n < 1 {
			return
		}
		if span := p.Span(n); span > grace {
			out = append(out, fmt.Sprintf("%s: the last of %s goaways would come %v after the drain's start, past its grace of %v: the rest are told at the grace (set grace to at least %v)",
				key, human.Count(int64(n)), span, grace, span))
		}
		if p.Rule() == models.PaceBatches && p.Size >= n {
			out = append(out, fmt.Sprintf("drain.pace: a batch of %s holds all %s connections: one batch, as pace all", human.Count(int64(p.Size)), human.Count(int64(n))))
		}
	}
	if s.Draining() {
		check("failure.grace", s.Clients, s.Failure.Grace)
	}
	if s.ThenDrain != nil {
		check("then_drain.grace", s.Clients, s.ThenDrain.Grace)
	}
	if s.Deploy != nil {
		check("deploy.grace", (s.Clients+s.Gateways.Count-1)/s.Gateways.Count, s.Deploy.Grace)
	}
	if h.Kind == models.HintReserved && s.Gateways != nil && s.Gateways.Balancer == models.BalancerRandom {
		out = append(out, "drain.reconnect_hint: reserved slots follow the pool's total rate, and a random balancer sends some clients of neighbouring slots to one gateway: expect a few rejections (round_robin keeps them apart)")
	}
	return out
}
