package fit

import (
	"fmt"
	"time"

	"stormsim/internal/param"
	"stormsim/models"
	"stormsim/sim"
)

// Model is what a calibration fits: the sections of a scenario that
// describe the gateway and the machine rather than the storm. Everything
// else (clients, admission, policies, lease, drain) stays the storm's own.
type Model struct {
	Capacity  models.CapacitySpec  `json:"capacity"`
	Network   models.NetworkSpec   `json:"network"`
	Detection models.DetectionSpec `json:"detection"`
}

// Validate checks the sections as a config's are checked.
func (m *Model) Validate() error {
	for _, c := range []struct {
		key string
		v   interface{ Validate() error }
	}{{"capacity", &m.Capacity}, {"network", &m.Network}, {"detection", &m.Detection}} {
		if err := c.v.Validate(); err != nil {
			if pe, ok := err.(*param.Error); ok {
				return fmt.Errorf("%s.%s: %s (got %v)", c.key, pe.Key, pe.Problem, pe.Got)
			}
			return fmt.Errorf("%s: %w", c.key, err)
		}
	}
	return nil
}

// Onset is how long after a client notices the failure its first attempt
// reaches the decision stage, less its initial wait: the fixed detection
// delay and first out leg together (a fit puts the onset in the leg;
// calibrations before put it in the delay).
func (m Model) Onset() time.Duration {
	onset := m.Detection.Delay.Value
	if l := m.Network.FirstOutLeg; l != nil && l.Dist == models.DistFixed {
		onset += l.Value
	}
	return onset
}

// Apply returns a copy of s with m's sections in place of its own: the
// storm s on the gateway and machine m describes. What the storm's gateway
// is told to do (capacity.abandoned and capacity.max_queue, its
// --abandoned and --max-claims-inflight) stays the storm's own.
func (m Model) Apply(s *sim.Scenario) *sim.Scenario {
	c := *s
	capacity, network, detection := m.Capacity, m.Network, m.Detection
	capacity.Abandoned, capacity.MaxQueue = "", 0
	if s.Capacity != nil {
		capacity.Abandoned, capacity.MaxQueue = s.Capacity.Abandoned, s.Capacity.MaxQueue
	}
	c.Capacity, c.Network, c.Detection = &capacity, &network, &detection
	if s.Deploy != nil {
		c.Detection = nil // a deploy's clients learn of each drain from their goaway
	}
	return &c
}

// FromScenario is the model a scenario carries, such as a calibrated.yaml
// that stormsim calibrate wrote: its capacity, network and detection. A
// scenario without one of them carries no model.
func FromScenario(s *sim.Scenario) (Model, error) {
	switch {
	case s.Capacity == nil:
		return Model{}, fmt.Errorf("capacity: missing: no fitted model (stormsim calibrate writes one into calibrated.yaml)")
	case s.Network == nil:
		return Model{}, fmt.Errorf("network: missing: no fitted model (stormsim calibrate writes one into calibrated.yaml)")
	case s.Detection == nil:
		return Model{}, fmt.Errorf("detection: missing: no fitted model (stormsim calibrate writes one into calibrated.yaml)")
	}
	return Model{Capacity: *s.Capacity, Network: *s.Network, Detection: *s.Detection}, nil
}
