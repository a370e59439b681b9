package calibrate

import (
	"fmt"

	"stormsim/models"

	"stormsim/policies"
	"stormsim/results"
	"stormsim/sim"
)

// Simulation labels.
const (
	LabelCalibrated   = "calibrated"   // the scenario with the fitted capacity, network and detection
	LabelUncalibrated = "uncalibrated" // the scenario as written
	// Variants, compared but not checked.
	LabelWithStall        = "calibrated + stall"                    // capacity.stall ending at gw-b's measured first decision
	LabelWithStallExcess  = "calibrated + stall excess"             // capacity.stall as that decision's lateness over the earliest arrival
	LabelWithBacklog      = "calibrated + decision backlog"         // capacity.decide_per_s: a decision stage before the claims
	LabelWithStallBacklog = "calibrated + stall + decision backlog" // both, the stage's rate measured after the stall
	LabelWithLegs         = "calibrated + measured legs"            // out and back legs around the decision, first attempts apart
	LabelStallRetryLegs   = "stall + retry legs"                    // capacity.stall, and the legs of retries for every attempt
	LabelWithFirst        = "calibrated + first-attempt network"    // first_rtt and first_server_time apart
	LabelDecideAtTurn     = "capacity deciding at the turn"         // admission decided when the queue reaches a handshake
	LabelNoNetwork        = "capacity without network"              // the queue and detection only
	LabelNetworkOnly      = "network only (no capacity)"            // the earlier calibration: latency draws alone
)

// labelled is a scenario under a label.
type labelled struct {
	label string
	s     *sim.Scenario
}

// fittedModels are the calibrated scenario, the scenario as written, then
// the variants: copies of s with fitted sections; everything else
// (admission, policies, lease, drain) is unchanged.
func fittedModels(s *sim.Scenario, f Fit) ([]labelled, error) {
	with := func(label string, capacity *models.CapacitySpec, net *models.NetworkSpec) (labelled, error) {
		c := *s
		det := f.Detection
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
		return labelled{label, &c}, nil
	}
	var atTurn *models.CapacitySpec
	if f.Capacity != nil {
		c := *f.Capacity
		c.Decide = models.DecideAtTurn
		atTurn = &c
	}
	withStall := func(d *models.Distribution) *models.CapacitySpec {
		if f.Capacity == nil {
			return nil
		}
		c := *f.Capacity
		c.Stall = d
		return &c
	}
	withBacklog := func(stall *models.Distribution, perS float64) *models.CapacitySpec {
		if f.Capacity == nil {
			return nil
		}
		c := *f.Capacity
		c.Stall = stall
		if perS > 0 { // else no backlog was seen: the calibrated capacity
			c.DecidePerS, c.RejectPerS, c.Decide = perS, 0, models.DecideOnArrival
		}
		return &c
	}
	net, legs, first, only := f.Network, f.NetworkWithLegs, f.NetworkWithFirst, f.NetworkOnly
	// The legs of retries for every attempt: a first attempt's own legs
	// hold the stall, which capacity.stall then delays it by.
	retries := legs
	retries.FirstOutLeg, retries.FirstBackLeg = nil, nil
	out := []labelled{}
	for _, m := range []struct {
		label    string
		capacity *models.CapacitySpec
		net      *models.NetworkSpec
	}{
		{LabelCalibrated, f.Capacity, &net},
		{LabelWithStall, withStall(f.Stall), &net},
		{LabelWithStallExcess, withStall(f.StallExcess), &net},
		{LabelWithBacklog, withBacklog(nil, f.DecidePerS), &net},
		{LabelWithStallBacklog, withBacklog(f.Stall, f.DecideAfterStallPerS), &net},
		{LabelWithLegs, f.Capacity, &legs},
		{LabelStallRetryLegs, withStall(f.Stall), &retries},
		{LabelWithFirst, f.Capacity, &first},
		{LabelDecideAtTurn, atTurn, &net},
		{LabelNoNetwork, f.Capacity, nil},
		{LabelNetworkOnly, nil, &only},
	} {
		l, err := with(m.label, m.capacity, m.net)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
		if m.label == LabelCalibrated {
			out = append(out, labelled{LabelUncalibrated, s})
		}
	}
	return out, nil
}

// simulate runs reps replications of s under policy spec, replication r
// with seed s.Seed+r (the real run k uses seed s.Seed+k-1, so real run k's
// twin is replication k-1), on every core.
func simulate(s *sim.Scenario, spec policies.Spec, reps int) ([]sim.Result, error) {
	b, err := policies.New(spec)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", spec.Label, err)
	}
	out := make([]sim.Result, reps)
	err = results.ForEach(reps, 0, func(r int) error {
		out[r] = sim.Run(s, b, s.Seed+uint64(r))
		return nil
	})
	return out, err
}
