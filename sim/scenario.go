// Package sim is the deterministic discrete-event storm engine. It is pure:
// no I/O, no wall clock, no global state; every random number comes from
// policies.Draw keyed by the scenario's seed.
package sim

import (
	"errors"
	"fmt"
	"time"

	"stormsim/models"
	"stormsim/policies"
)

// Scenario is a validated storm description: plain Go values with units in
// their types. The config package decodes YAML into it; Resolve fills in
// defaults and checks it.
type Scenario struct {
	Name          string               `yaml:"name"`
	Seed          uint64               `yaml:"seed"`
	Clients       int                  `yaml:"clients"`        // devices that lose their connection
	Disconnect    Disconnect           `yaml:"disconnect"`     // when they notice
	InitialJitter time.Duration        `yaml:"initial_jitter"` // first attempt waits uniform[0, initial_jitter)
	Admission     models.AdmissionSpec `yaml:"admission"`
	Policies      []policies.Spec      `yaml:"policies"`
	Metrics       Metrics              `yaml:"metrics"`
	Replications  int                  `yaml:"replications"` // seeds seed, seed+1, ...; 0 means 1
}

// Disconnect says when clients notice the drop.
type Disconnect struct {
	At time.Duration `yaml:"at"` // every client notices at this time
}

// Metrics configures how results are bucketed.
type Metrics struct {
	Window time.Duration `yaml:"window"` // series bucket; default the slot, or 250 ms
}

// DefaultTokenBucketWindow is the metrics window for token-bucket admission,
// the seed lab's 250 ms.
const DefaultTokenBucketWindow = 250 * time.Millisecond

// FieldError names the scenario key (a path such as "policies[1].cap") that
// is wrong; the config package turns the path into a file and line.
type FieldError struct {
	Path    string
	Problem string
	Got     any
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%s: %s (got %v)", e.Path, e.Problem, e.Got)
}

// MaxClients bounds Clients so that client ids fit the engine's uint32 slots.
const MaxClients = 1 << 31

// Resolve applies defaults in place and validates s. Errors are *FieldError.
func (s *Scenario) Resolve() error {
	if s.Clients < 1 || s.Clients > MaxClients {
		return &FieldError{Path: "clients", Problem: fmt.Sprintf("must be in [1, %d]", MaxClients), Got: s.Clients}
	}
	if s.Disconnect.At < 0 {
		return &FieldError{Path: "disconnect.at", Problem: "must be >= 0", Got: s.Disconnect.At}
	}
	if s.InitialJitter < 0 {
		return &FieldError{Path: "initial_jitter", Problem: "must be >= 0", Got: s.InitialJitter}
	}
	if s.Replications < 0 {
		return &FieldError{Path: "replications", Problem: "must be >= 0", Got: s.Replications}
	}
	if s.Replications == 0 {
		s.Replications = 1
	}
	if s.Admission.Kind == "" {
		return &FieldError{Path: "admission.kind", Problem: "is required (slots, token_bucket or unlimited)", Got: `""`}
	}
	if err := s.Admission.Validate(); err != nil {
		return prefixed("admission", err)
	}
	if len(s.Policies) == 0 {
		return &FieldError{Path: "policies", Problem: "needs at least one policy", Got: 0}
	}
	seen := map[string]bool{}
	for i := range s.Policies {
		b, err := policies.New(s.Policies[i])
		if err != nil {
			return prefixed(fmt.Sprintf("policies[%d]", i), err)
		}
		s.Policies[i] = b.Spec
		if seen[b.Spec.Label] {
			return &FieldError{Path: fmt.Sprintf("policies[%d].label", i), Problem: "duplicate policy label; set label to tell them apart", Got: b.Spec.Label}
		}
		seen[b.Spec.Label] = true
	}
	if s.Metrics.Window < 0 {
		return &FieldError{Path: "metrics.window", Problem: "must be > 0", Got: s.Metrics.Window}
	}
	if s.Metrics.Window == 0 {
		s.Metrics.Window = DefaultTokenBucketWindow
		if s.Admission.Kind == "slots" {
			s.Metrics.Window = s.Admission.Slot
		}
	}
	return nil
}

func prefixed(prefix string, err error) error {
	var pe *policies.ParamError
	if errors.As(err, &pe) {
		return &FieldError{Path: prefix + "." + pe.Key, Problem: pe.Problem, Got: pe.Got}
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		return &FieldError{Path: prefix + "." + fe.Path, Problem: fe.Problem, Got: fe.Got}
	}
	return &FieldError{Path: prefix, Problem: err.Error(), Got: "?"}
}
