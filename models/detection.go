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
