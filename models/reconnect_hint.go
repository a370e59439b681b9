package models

import (
	"fmt"
	"math"
	"math/bits"
	"time"

	"stormsim/internal/param"
	"stormsim/policies/rng"
)

// ReconnectHintKind names what delay a goaway carries
// (ReconnectHintSpec.Kind).
type ReconnectHintKind string

// The hints.
const (
	HintNone     ReconnectHintKind = "none"     // the goaway carries no delay
	HintFixed    ReconnectHintKind = "fixed"    // every goaway carries delay
	HintUniform  ReconnectHintKind = "uniform"  // a delay uniform on [0, over), in whole milliseconds
	HintReserved ReconnectHintKind = "reserved" // consecutive admission slots at rate, from burst
)

// ReconnectHintSpec is the delay a draining gateway's goaway tells the
// client to wait before its first reconnect attempt (the wire's
// reconnect_after_ms). Every hint is whole milliseconds, the wire's unit,
// rounded up so that a reserved client never arrives before its slot.
type ReconnectHintSpec struct {
	Kind  ReconnectHintKind `yaml:"kind"`            // HintNone (default), HintFixed, HintUniform or HintReserved
	Delay time.Duration     `yaml:"delay,omitempty"` // fixed: the delay
	Over  time.Duration     `yaml:"over,omitempty"`  // uniform: the delays' range
	// Rate and Burst are reserved's schedule: slots per second and the
	// slots open at the drain's start, the token bucket the clients will
	// meet. A scenario defaults them to the admission that takes the
	// drained clients (Reserve).
	Rate  float64 `yaml:"rate,omitempty"`
	Burst int     `yaml:"burst,omitempty"`
}

// Hinted reports whether goaways carry a delay.
func (h ReconnectHintSpec) Hinted() bool { return h.Kind != "" && h.Kind != HintNone }

// Reserve sets reserved's rate and burst where they are unset, from the
// admission the drained clients will meet: rate tokens per second, burst
// tokens.
func (h *ReconnectHintSpec) Reserve(rate float64, burst int) {
	if h.Kind != HintReserved {
		return
	}
	if h.Rate == 0 {
		h.Rate = rate
	}
	if h.Burst == 0 {
		h.Burst = max(1, burst)
	}
}

// Validate checks the spec; errors are *param.Error naming the key. A
// reserved hint needs its rate set, or Reserve called first.
func (h *ReconnectHintSpec) Validate() error {
	if h.Kind == "" {
		h.Kind = HintNone
	}
	unused := func(key string, set bool) error {
		if set {
			return &param.Error{Key: key, Problem: fmt.Sprintf("has no use in hint %s: remove it", h.Kind), Got: "set"}
		}
		return nil
	}
	inRange := func(key string, d time.Duration, lo time.Duration) error {
		if d < lo || d > MaxPaceDuration {
			return &param.Error{Key: key, Problem: fmt.Sprintf("must be in [%v, %v]", lo, MaxPaceDuration), Got: d}
		}
		return nil
	}
	switch h.Kind {
	case HintNone:
		return firstErr(unused("delay", h.Delay != 0), unused("over", h.Over != 0), unused("rate", h.Rate != 0), unused("burst", h.Burst != 0))
	case HintFixed:
		return firstErr(inRange("delay", h.Delay, time.Millisecond), unused("over", h.Over != 0), unused("rate", h.Rate != 0), unused("burst", h.Burst != 0))
	case HintUniform:
		return firstErr(inRange("over", h.Over, 2*time.Millisecond), unused("delay", h.Delay != 0), unused("rate", h.Rate != 0), unused("burst", h.Burst != 0))
	case HintReserved:
		if !(h.Rate >= 0.001) || h.Rate > 1e9 {
			return &param.Error{Key: "rate", Problem: "must be in [0.001, 1e9] slots per second (a reserved hint needs the rate of the admission that takes the clients)", Got: h.Rate}
		}
		if h.Burst < 1 || h.Burst > maxBurst {
			return &param.Error{Key: "burst", Problem: fmt.Sprintf("must be in [1, %d]", maxBurst), Got: h.Burst}
		}
		return firstErr(unused("delay", h.Delay != 0), unused("over", h.Over != 0))
	}
	return &param.Error{Key: "kind", Problem: "must be none, fixed, uniform or reserved", Got: h.Kind}
}

// Hint is the delay carried by the goaway of the drain's connection
// number k (from 0, in the order the goaways are sent), sent at goaway
// after the drain's start; u is 64 random bits, used by uniform only (the
// simulator draws them with rng.StreamHint, the gateway from its own
// source). ok is false when goaways carry no delay. In whole
// milliseconds:
//
//	fixed     ceil(delay)
//	uniform   floor(u * floor(over/1ms) / 2^64) ms
//	reserved  ceil(max(0, ReservedSlot(k) - goaway))
func (h ReconnectHintSpec) Hint(k int, goaway time.Duration, u uint64) (hint time.Duration, ok bool) {
	switch h.Kind {
	case HintFixed:
		return ceilMillis(h.Delay), true
	case HintUniform:
		return rng.UniformDuration(u, h.Over/time.Millisecond) * time.Millisecond, true
	case HintReserved:
		return ceilMillis(max(0, h.ReservedSlot(k)-goaway)), true
	}
	return 0, false
}

// ReservedSlot is when, from the drain's start, the k-th client (from 0)
// of a reserved hint finds a token in a bucket of burst tokens refilled at
// rate that was full at the drain's start and took only these clients:
//
//	slot_k = ceil(max(0, k + 1 - burst) / rate)
//
// in integer nanoseconds, with the rate rounded to 0.001 token/s exactly
// as TokenBucket rounds it, so a client at or after its slot is admitted
// by that bucket whatever the others do at or after theirs.
func (h ReconnectHintSpec) ReservedSlot(k int) time.Duration {
	owed := int64(k) + 1 - int64(h.Burst)
	if owed <= 0 {
		return 0
	}
	perNano := uint64(max(1, int64(math.Round(h.Rate*1000)))) // ticks per ns, as TokenBucket
	hi, lo := bits.Mul64(uint64(owed), ticksPerToken)
	if hi >= perNano {
		return time.Duration(math.MaxInt64)
	}
	q, r := bits.Div64(hi, lo, perNano)
	if r != 0 {
		q++
	}
	if q > math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(q)
}

// ceilMillis rounds d up to whole milliseconds.
func ceilMillis(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	if d > time.Duration(math.MaxInt64)-time.Millisecond {
		return d / time.Millisecond * time.Millisecond
	}
	return (d + time.Millisecond - 1) / time.Millisecond * time.Millisecond
}

// String writes the hint as ParseReconnectHint reads it (cmd/gateway's
// --reconnect-hint).
func (h ReconnectHintSpec) String() string {
	return specString(string(h.Kind), []specField{{"delay", durationValue(h.Delay)}, {"over", durationValue(h.Over)},
		{"rate", floatValue(h.Rate)}, {"burst", intValue(h.Burst)}})
}

// ParseReconnectHint reads a hint written as KIND or KIND:KEY=VALUE,...
// ("reserved:rate=400,burst=10", "uniform:over=5s"). It fills in no
// default: a reserved hint without a rate is left for Reserve, then
// Validate.
func ParseReconnectHint(s string) (ReconnectHintSpec, error) {
	var h ReconnectHintSpec
	kind, fields, err := parseSpec(s)
	if err != nil {
		return h, err
	}
	h.Kind = ReconnectHintKind(kind)
	for _, f := range fields {
		switch f.key {
		case "delay":
			err = f.duration(&h.Delay)
		case "over":
			err = f.duration(&h.Over)
		case "rate":
			err = f.float(&h.Rate)
		case "burst":
			err = f.int(&h.Burst)
		default:
			err = &param.Error{Key: f.key, Problem: "unknown key (want delay, over, rate or burst)", Got: f.value}
		}
		if err != nil {
			return h, err
		}
	}
	switch h.Kind {
	case HintNone, HintFixed, HintUniform, HintReserved:
	default:
		return h, &param.Error{Key: "kind", Problem: "must be none, fixed, uniform or reserved", Got: h.Kind}
	}
	return h, nil
}
