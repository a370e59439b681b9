package models

import (
	"time"

	"stormsim/internal/param"
	"stormsim/policies/rng"
)

// DetectionSpec is how a client notices that its gateway failed.
//
//   - reset: the client sees a TCP RST after Delay (fixed or random);
//   - heartbeat: the client notices when its idle timer fires, at a uniformly
//     random time in [idle - ping, idle) after the failure, since its last
//     ping arrived at a uniformly random phase within one ping interval.
//
// A hung gateway keeps its sockets open, so only heartbeat detects it.
type DetectionSpec struct {
	Kind  DetectionKind `yaml:"kind"`  // DetectionReset or DetectionHeartbeat
	Delay Distribution  `yaml:"delay"` // reset: time until the RST is seen
	Ping  time.Duration `yaml:"ping"`  // heartbeat: ping interval
	Idle  time.Duration `yaml:"idle"`  // heartbeat: silence after which the client gives up
}

// DetectionKind names how clients notice a failure (DetectionSpec.Kind).
type DetectionKind string

// The ways of noticing.
const (
	DetectionReset     DetectionKind = "reset"
	DetectionHeartbeat DetectionKind = "heartbeat"
)

// Validate checks the spec.
func (d *DetectionSpec) Validate() error {
	switch d.Kind {
	case DetectionReset:
		if err := d.Delay.Validate(); err != nil {
			return prefixParam("delay", err)
		}
	case DetectionHeartbeat:
		if d.Ping <= 0 {
			return &param.Error{Key: "ping", Problem: "must be > 0", Got: d.Ping}
		}
		if d.Idle < d.Ping {
			return &param.Error{Key: "idle", Problem: "must be >= ping (" + d.Ping.String() + ")", Got: d.Idle}
		}
	default:
		return &param.Error{Key: "kind", Problem: "must be reset or heartbeat", Got: d.Kind}
	}
	return nil
}

// NoticeDelay is how long after the failure client c notices it.
func (d *DetectionSpec) NoticeDelay(seed, c uint64) time.Duration {
	u := rng.Draw(seed, c, 0, rng.StreamDetection)
	if d.Kind == DetectionHeartbeat {
		return d.Idle - d.Ping + rng.UniformDuration(u, d.Ping)
	}
	return d.Delay.Sample(u)
}

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
