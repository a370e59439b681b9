package models

import (
	"stormsim/internal/param"
	"stormsim/policies/rng"
	"time"
)

// FailureSpec is what happens to the gateway that goes away at t = 0.
type FailureSpec struct {
	Kind   FailureKind   `yaml:"kind"`   // FailureCrash (default), FailureHang or FailureDrain
	Grace  time.Duration `yaml:"grace"`  // drain: longest wait for connections to leave (default 3s)
	Spread bool          `yaml:"spread"` // drain: goaways spread uniformly over grace, not all at t = 0
}

// FailureKind names what happens to the failing gateway (FailureSpec.Kind).
type FailureKind string

// The failures.
const (
	FailureCrash FailureKind = "crash" // the process is gone: its sockets reset
	FailureHang  FailureKind = "hang"  // the process is frozen: only heartbeats notice
	FailureDrain FailureKind = "drain" // a planned SIGTERM: goaway, then close
)

// DefaultDrainGrace is the seed's drain grace period.
const DefaultDrainGrace = 3 * time.Second

// Validate checks the spec and fills in defaults.
func (f *FailureSpec) Validate() error {
	switch f.Kind {
	case "":
		f.Kind = FailureCrash
	case FailureCrash, FailureHang:
	case FailureDrain:
		if f.Grace < 0 {
			return &param.Error{Key: "grace", Problem: "must be >= 0", Got: f.Grace}
		}
		if f.Grace == 0 {
			f.Grace = DefaultDrainGrace
		}
	default:
		return &param.Error{Key: "kind", Problem: "must be crash, hang or drain", Got: f.Kind}
	}
	return nil
}

// GoawayAt is when the draining gateway tells client c to leave.
func (f *FailureSpec) GoawayAt(seed, c uint64) time.Duration {
	if !f.Spread {
		return 0
	}
	return rng.UniformDuration(rng.Draw(seed, c, 0, rng.StreamGoaway), f.Grace)
}
