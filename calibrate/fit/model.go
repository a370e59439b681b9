package fit

import (
	"encoding/json"
	"fmt"
	"reflect"

	"stormsim/config"
	"stormsim/internal/param"
	"stormsim/models"
	"stormsim/sim"
)

// Model is what a calibration fits: the sections of a scenario that
// describe the gateway and the machine rather than the storm. Everything
// else (clients, admission, policies, lease, drain) stays the storm's own.
type Model struct {
	Capacity  models.CapacitySpec
	Network   models.NetworkSpec
	Detection models.DetectionSpec
}

// modelJSON is a Model as calibration.json holds it: each section in the
// config's own keys and units, as calibrated.yaml writes it.
type modelJSON struct {
	Capacity  json.RawMessage `json:"capacity"`
	Network   json.RawMessage `json:"network"`
	Detection json.RawMessage `json:"detection"`
}

// MarshalJSON writes the sections in the config's keys and units
// (durations as "86.27ms"), so that calibration.json reads as the
// calibrated.yaml beside it does; null before anything is fitted (the
// zero Model).
func (m Model) MarshalJSON() ([]byte, error) {
	if reflect.ValueOf(m).IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(modelJSON{config.EchoValue(&m.Capacity), config.EchoValue(&m.Network), config.EchoValue(&m.Detection)})
}

// UnmarshalJSON reads what MarshalJSON wrote. It does not validate: a
// fit that failed (Report.FitError) is written as far as it got, and
// --resume must still read it.
func (m *Model) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		*m = Model{}
		return nil
	}
	var j modelJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	var got Model
	for _, s := range []struct {
		key  string
		data json.RawMessage
		v    any
	}{{"capacity", j.Capacity, &got.Capacity}, {"network", j.Network, &got.Network}, {"detection", j.Detection, &got.Detection}} {
		if err := config.DecodeValue("model."+s.key, s.data, s.v); err != nil {
			return err
		}
	}
	*m = got
	return nil
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
