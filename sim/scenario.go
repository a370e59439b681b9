// Package sim is the deterministic discrete-event storm engine. It is pure:
// no I/O, no wall clock, no global state; every random number comes from
// rng.Draw keyed by the scenario's seed.
package sim

import (
	"errors"
	"fmt"
	"time"

	"stormsim/internal/param"
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
	// Horizon is the simulated time at which a run stops: nothing is sent,
	// decided or connected at or after it. 0 means DefaultTimeoutHorizon
	// when a policy has a timeout (filled in by Resolve), and otherwise
	// SafetyHorizon, which stays 0 in the config.
	Horizon time.Duration `yaml:"horizon,omitempty"`

	// Failure and load models; each is optional and absent means off.
	Failure     *models.FailureSpec   `yaml:"failure"`      // what happens to the gateway at t = 0 (default crash)
	Detection   *models.DetectionSpec `yaml:"detection"`    // how clients notice (default: at disconnect.at)
	Lease       *models.LeaseSpec     `yaml:"lease"`        // lease and sweep: reclaim time and stale routes
	Network     *models.NetworkSpec   `yaml:"network"`      // handshake latency
	Capacity    *models.CapacitySpec  `yaml:"capacity"`     // each gateway's handshake throughput
	Gateways    *models.PoolSpec      `yaml:"gateways"`     // a pool behind a load balancer
	Database    *models.DatabaseSpec  `yaml:"database"`     // database work per reconnect
	DrainPolicy *policies.Spec        `yaml:"drain_policy"` // reconnect policy after a goaway (default: the policy under test)
	ThenDrain   *DrainPhase           `yaml:"then_drain"`   // afterwards, drain the survivor to a fresh gateway
}

// DrainPhase is a planned drain that follows the storm, as in the seed's
// lab: once everyone is back, the surviving gateway is drained (SIGTERM) and
// its clients move to a fresh gateway.
type DrainPhase struct {
	Grace     time.Duration         `yaml:"grace"`     // default 3s
	Spread    bool                  `yaml:"spread"`    // goaways spread over grace
	Admission *models.AdmissionSpec `yaml:"admission"` // the fresh gateway's; default the scenario's
}

// Disconnect says when clients notice the drop.
type Disconnect struct {
	At time.Duration `yaml:"at"` // every client notices at this time
}

// Metrics configures how results are bucketed.
type Metrics struct {
	Window time.Duration `yaml:"window"` // series bucket; default the slot, or 250 ms
}

// Horizons. A storm whose clients give up waiting can go on for ever, so a
// timeout brings a horizon with it. Every other run stops at the safety
// horizon, far beyond any storm that converges; a run it cuts says so.
const (
	DefaultTimeoutHorizon = time.Hour
	SafetyHorizon         = 24 * time.Hour
)

// EffectiveHorizon is the simulated time at which a run of s stops.
func (s *Scenario) EffectiveHorizon() time.Duration {
	if s.Horizon > 0 {
		return s.Horizon
	}
	return SafetyHorizon
}

// HasTimeouts reports whether any policy clients use has a handshake
// timeout.
func (s *Scenario) HasTimeouts() bool {
	for _, p := range s.Policies {
		if p.Timeout > 0 {
			return true
		}
	}
	return s.DrainPolicy != nil && s.DrainPolicy.Timeout > 0
}

// TracksOutcome reports whether results carry an OutcomeResult whatever
// the run does: the scenario has a horizon, a timeout, shedding or
// skipping. (A run the safety horizon cuts carries one too.)
func (s *Scenario) TracksOutcome() bool {
	return s.Horizon > 0 || s.HasTimeouts() ||
		(s.Capacity != nil && (s.Capacity.MaxQueue > 0 || s.Capacity.Abandoned != ""))
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
	if err := s.resolveModels(); err != nil {
		return err
	}
	if s.Horizon < 0 {
		return &FieldError{Path: "horizon", Problem: "must be >= 0 (0: 1h with a timeout, else 24h)", Got: s.Horizon}
	}
	if s.Horizon == 0 && s.HasTimeouts() {
		s.Horizon = DefaultTimeoutHorizon
	}
	if h := s.EffectiveHorizon(); s.Disconnect.At >= h {
		return &FieldError{Path: "disconnect.at", Problem: fmt.Sprintf("must be before the horizon (%v); set horizon to simulate longer", h), Got: s.Disconnect.At}
	}
	if s.Metrics.Window < 0 {
		return &FieldError{Path: "metrics.window", Problem: "must be > 0", Got: s.Metrics.Window}
	}
	if s.Metrics.Window == 0 {
		s.Metrics.Window = DefaultTokenBucketWindow
		if s.Admission.Kind == models.AdmissionSlots {
			s.Metrics.Window = s.Admission.Slot
		}
	}
	return nil
}

func prefixed(prefix string, err error) error {
	var pe *param.Error
	if errors.As(err, &pe) {
		return &FieldError{Path: prefix + "." + pe.Key, Problem: pe.Problem, Got: pe.Got}
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		return &FieldError{Path: prefix + "." + fe.Path, Problem: fe.Problem, Got: fe.Got}
	}
	return &FieldError{Path: prefix, Problem: err.Error(), Got: "?"}
}

func (s *Scenario) resolveModels() error {
	if s.Failure != nil {
		if err := s.Failure.Validate(); err != nil {
			return prefixed("failure", err)
		}
	}
	ping := time.Duration(0)
	if s.Detection != nil {
		if err := s.Detection.Validate(); err != nil {
			return prefixed("detection", err)
		}
		ping = s.Detection.Ping
	}
	if s.Failure != nil && s.Failure.Kind == models.FailureHang && (s.Detection == nil || s.Detection.Kind != models.DetectionHeartbeat) {
		return &FieldError{Path: "detection.kind", Problem: "a hung gateway sends no RST: failure kind hang needs heartbeat detection", Got: detectionKind(s.Detection)}
	}
	if s.Lease != nil {
		if err := s.Lease.Validate(ping); err != nil {
			return prefixed("lease", err)
		}
	}
	if s.Network != nil {
		if err := s.Network.Validate(); err != nil {
			return prefixed("network", err)
		}
	}
	if s.Capacity != nil {
		if err := s.Capacity.Validate(); err != nil {
			return prefixed("capacity", err)
		}
	}
	if s.Gateways != nil {
		if err := s.Gateways.Validate(s.Clients); err != nil {
			return prefixed("gateways", err)
		}
	}
	if s.Database != nil {
		if err := s.Database.Validate(); err != nil {
			return prefixed("database", err)
		}
	}
	if s.DrainPolicy != nil {
		b, err := policies.New(*s.DrainPolicy)
		if err != nil {
			return prefixed("drain_policy", err)
		}
		*s.DrainPolicy = b.Spec
	}
	if d := s.ThenDrain; d != nil {
		if d.Grace < 0 {
			return &FieldError{Path: "then_drain.grace", Problem: "must be >= 0", Got: d.Grace}
		}
		if d.Grace == 0 {
			d.Grace = models.DefaultDrainGrace
		}
		if d.Admission != nil {
			if err := d.Admission.Validate(); err != nil {
				return prefixed("then_drain.admission", err)
			}
		}
	}
	return nil
}

func detectionKind(d *models.DetectionSpec) models.DetectionKind {
	if d == nil {
		return "none"
	}
	return d.Kind
}
