package calibrate

import (
	"fmt"

	"stormsim/policies"
	"stormsim/results"
	"stormsim/sim"
)

// Simulation labels.
const (
	LabelCalibrated   = "calibrated"   // the scenario with the fitted network and detection
	LabelUncalibrated = "uncalibrated" // the scenario as written
)

// withFit returns a copy of s whose network and detection are the fitted
// ones; everything else (admission, policies, lease, drain) is unchanged.
func withFit(s *sim.Scenario, f Fit) (*sim.Scenario, error) {
	c := *s
	net, det := f.Network, f.Detection
	if err := net.Validate(); err != nil {
		return nil, fmt.Errorf("fitted network: %w", err)
	}
	if err := det.Validate(); err != nil {
		return nil, fmt.Errorf("fitted detection: %w", err)
	}
	c.Network, c.Detection = &net, &det
	return &c, nil
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
