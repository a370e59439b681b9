package calibrate

import (
	"fmt"
	"slices"

	"stormsim/models"

	"stormsim/policies"
	"stormsim/runner"
	"stormsim/sim"
)

// Simulation labels.
const (
	// LabelCalibrated is the model checked against the real runs: the
	// scenario with capacity, network and detection fitted on each real
	// run alone, replication r taking run r mod K's fit (see perRunModel).
	LabelCalibrated   = "calibrated"
	LabelUncalibrated = "uncalibrated" // the scenario as written
	// Variants, compared but not checked.
	LabelPooled      = "calibrated, pooled"                  // the same model fitted once on all runs: calibrated.yaml
	LabelUnshared    = "calibrated, pooled, delays unshared" // each attempt drawing its own delays
	LabelEarlier     = "rtt + lognormal detection"           // the first calibration: one rtt, a lognormal detection delay
	LabelWithStall   = "rtt + stall"                         // that, with capacity.stall ending at gw-b's measured first decision
	LabelWithBacklog = "rtt + decision backlog"              // that, with capacity.decide_per_s before the claims
	LabelWithLegs    = "measured legs, first attempts apart" // out and back legs around the decision, first attempts' own
	LabelStallLegs   = "stall + retry legs"                  // capacity.stall, the legs of retries for every attempt
	LabelAtTurn      = "capacity deciding at the turn"       // admission decided when the queue reaches a handshake
	LabelNoNetwork   = "capacity without network"            // the queue and detection only
	LabelNetworkOnly = "network only (no capacity)"          // latency draws alone
)

// labelled is a scenario under a label; with perRun, replication r runs
// perRun[r mod len(perRun)] instead (s is then the first of them).
type labelled struct {
	label  string
	s      *sim.Scenario
	perRun []*sim.Scenario
}

// scenarios are the scenarios a model's replications take in turn.
func (l labelled) scenarios() []*sim.Scenario {
	if len(l.perRun) > 0 {
		return l.perRun
	}
	return []*sim.Scenario{l.s}
}

// fittedModels are the models fitted once on all runs, the pooled
// calibrated model first, then the variants: copies of s with fitted
// sections; everything else (admission, policies, lease, drain) is
// unchanged.
func fittedModels(s *sim.Scenario, f Fit) ([]labelled, error) {
	with := func(label string, capacity *models.CapacitySpec, net *models.NetworkSpec, detection *models.DetectionSpec) (labelled, error) {
		c := *s
		det := *detection
		if err := det.Validate(); err != nil {
			return labelled{}, fmt.Errorf("fitted detection: %w", err)
		}
		if capacity != nil {
			if err := capacity.Validate(); err != nil {
				return labelled{}, fmt.Errorf("fitted capacity: %w", err)
			}
		}
		if net != nil {
			if err := net.Validate(); err != nil {
				return labelled{}, fmt.Errorf("fitted network: %w", err)
			}
		}
		c.Capacity, c.Network, c.Detection = capacity, net, &det
		return labelled{label: label, s: &c}, nil
	}
	var atTurn *models.CapacitySpec
	if f.Capacity != nil {
		c := *f.Capacity
		c.Decide = models.DecideAtTurn
		atTurn = &c
	}
	var withStall, withBacklog *models.CapacitySpec
	if f.Capacity != nil {
		c := *f.Capacity
		c.Stall = f.Stall
		withStall = &c
		b := *f.Capacity
		if f.DecidePerS > 0 { // else no backlog was seen: the fitted capacity
			b.DecidePerS, b.RejectPerS, b.Decide = f.DecidePerS, 0, models.DecideOnArrival
		}
		withBacklog = &b
	}
	net, legs, only := f.Network, f.NetworkWithLegs, f.NetworkOnly
	// The legs of retries for every attempt.
	retries := legs
	retries.FirstOutLeg, retries.FirstBackLeg = nil, nil
	// The calibrated network and detection: each client's first attempt
	// reaches the decision the measured first-arrival delay (plus its
	// initial wait) after the failure, with no out leg of its own; retries
	// cross the network with their measured legs, shared as measured.
	calNet, calDetection := retries, f.Detection
	if f.FirstArrival != nil {
		calNet.FirstOutLeg, calNet.FirstBackLeg = &models.Distribution{}, legs.FirstBackLeg
		calDetection.Delay = *f.FirstArrival
	}
	calNet.SharedEvery = f.SharedEvery
	unshared := calNet
	unshared.SharedEvery = 0
	out := []labelled{}
	for _, m := range []struct {
		label     string
		capacity  *models.CapacitySpec
		net       *models.NetworkSpec
		detection *models.DetectionSpec // nil: f.Detection
	}{
		{LabelPooled, f.Capacity, &calNet, &calDetection},
		{LabelUnshared, f.Capacity, &unshared, &calDetection},
		{LabelEarlier, f.Capacity, &net, nil},
		{LabelWithStall, withStall, &net, nil},
		{LabelWithBacklog, withBacklog, &net, nil},
		{LabelWithLegs, f.Capacity, &legs, nil},
		{LabelStallLegs, withStall, &retries, nil},
		{LabelAtTurn, atTurn, &net, nil},
		{LabelNoNetwork, f.Capacity, nil, nil},
		{LabelNetworkOnly, nil, &only, nil},
	} {
		det := m.detection
		if det == nil {
			det = &f.Detection
		}
		l, err := with(m.label, m.capacity, m.net, det)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// perRunModel is the model labelled label (of fittedModels) calibrated on
// each real run alone, labelled as, replication r taking run r mod K's:
// the model's spread then holds how much the lab itself changed from one
// run to the next (on a small machine, a good deal: see
// SeriesComparison.SpreadRatio), as a model fitted once on the pooled runs
// cannot. ok is false when a run cannot be fitted alone.
func perRunModel(s *sim.Scenario, runs []*RealRun, label, as string) (labelled, bool) {
	l := labelled{label: as}
	for _, r := range runs {
		f, err := fitModel(r.Handshakes, [][]float64{r.StartDelaysMs}, [][]Claim{r.Claims}, [][]float64{r.RejectsMs})
		if err != nil {
			return labelled{}, false
		}
		one := []*RealRun{r}
		f.fitStalls(one)
		f.fitBacklog(one)
		f.fitFirstArrival(one)
		f.fitShared(one)
		fitted, err := fittedModels(s, f)
		if err != nil {
			return labelled{}, false
		}
		i := slices.IndexFunc(fitted, func(m labelled) bool { return m.label == label })
		if i < 0 {
			return labelled{}, false
		}
		l.perRun = append(l.perRun, fitted[i].s)
	}
	if len(l.perRun) == 0 {
		return labelled{}, false
	}
	l.s = l.perRun[0]
	return l, true
}

// simulate runs reps replications of s under policy spec, replication r
// with seed s.Seed+r (the real run k uses seed s.Seed+k-1, so real run k's
// twin is replication k-1), on every core.
func simulate(scenarios []*sim.Scenario, spec policies.Spec, reps int) ([]sim.Result, error) {
	b, err := policies.New(spec)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", spec.Label, err)
	}
	out := make([]sim.Result, reps)
	seed := scenarios[0].Seed
	err = runner.ForEach(reps, 0, func(r int) error {
		out[r] = sim.Run(scenarios[r%len(scenarios)], b, seed+uint64(r))
		return nil
	})
	return out, err
}
