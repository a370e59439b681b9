// Package models holds the server-side and environment rules of a storm:
// admission, leases and sweeps, failure detection, handshake latency and
// database load. The simulator and the real gateway use the same code.
package models

import (
	"fmt"
	"math"
	"time"

	"stormsim/internal/param"
)

// Admission decides whether a handshake arriving at now is admitted. Calls
// must come in non-decreasing now; an earlier now counts as no time passing.
// Implementations are not safe for concurrent use.
type Admission interface {
	Admit(now time.Duration) bool
	// WindowBound is the most handshakes it can admit in any window of length w.
	WindowBound(w time.Duration) float64
	String() string
}

var (
	_ Admission = (*Slots)(nil)
	_ Admission = (*TokenBucket)(nil)
	_ Admission = Unlimited{}
)

// AdmissionSpec is the configured admission rule.
type AdmissionSpec struct {
	Kind       AdmissionKind `yaml:"kind"`        // AdmissionSlots, AdmissionTokenBucket or AdmissionUnlimited
	Slot       time.Duration `yaml:"slot"`        // slots: slot length
	PerSlot    int           `yaml:"per_slot"`    // slots: admissions per slot
	Rate       float64       `yaml:"rate"`        // token bucket: refill, tokens per second
	Burst      int           `yaml:"burst"`       // token bucket: capacity, tokens
	RetryAfter time.Duration `yaml:"retry_after"` // carried by every rejection
}

// AdmissionKind names an admission rule (AdmissionSpec.Kind).
type AdmissionKind string

// The admission rules.
const (
	AdmissionSlots       AdmissionKind = "slots"
	AdmissionTokenBucket AdmissionKind = "token_bucket"
	AdmissionUnlimited   AdmissionKind = "unlimited"
)

// Validate checks the spec; errors are *param.Error naming the key.
func (s AdmissionSpec) Validate() error {
	if s.RetryAfter < 0 {
		return &param.Error{Key: "retry_after", Problem: "must be >= 0", Got: s.RetryAfter}
	}
	switch s.Kind {
	case AdmissionSlots:
		if s.Slot <= 0 {
			return &param.Error{Key: "slot", Problem: "must be > 0", Got: s.Slot}
		}
		if s.PerSlot < 1 {
			return &param.Error{Key: "per_slot", Problem: "must be >= 1", Got: s.PerSlot}
		}
	case AdmissionTokenBucket:
		if !(s.Rate >= 0.001) || s.Rate > 1e9 {
			return &param.Error{Key: "rate", Problem: "must be in [0.001, 1e9] tokens per second", Got: s.Rate}
		}
		if s.Burst < 1 || s.Burst > maxBurst {
			return &param.Error{Key: "burst", Problem: fmt.Sprintf("must be in [1, %d]", maxBurst), Got: s.Burst}
		}
	case AdmissionUnlimited:
	default:
		return &param.Error{Key: "kind", Problem: "must be slots, token_bucket or unlimited", Got: s.Kind}
	}
	return nil
}

// New builds a fresh admission state from a valid spec.
func (s AdmissionSpec) New() Admission {
	switch s.Kind {
	case AdmissionSlots:
		return NewSlots(s.Slot, s.PerSlot)
	case AdmissionTokenBucket:
		return NewTokenBucket(s.Rate, s.Burst)
	}
	return Unlimited{}
}

// Slots admits the first PerSlot handshakes of every slot [k*Slot, (k+1)*Slot).
type Slots struct {
	Slot    time.Duration
	PerSlot int
	current int64         // slot index of the last call
	end     time.Duration // end of the current slot
	used    int           // admissions in the current slot
}

// NewSlots returns slot admission with slot length slot and perSlot
// admissions per slot.
func NewSlots(slot time.Duration, perSlot int) *Slots {
	return &Slots{Slot: slot, PerSlot: perSlot, current: -1}
}

// Admit implements Admission.
func (s *Slots) Admit(now time.Duration) bool {
	if now >= s.end { // a division only when the slot changes
		if k := int64(now / s.Slot); k > s.current {
			s.current, s.end, s.used = k, time.Duration(k+1)*s.Slot, 0
		}
	}
	if s.used < s.PerSlot {
		s.used++
		return true
	}
	return false
}

// WindowBound implements Admission: a window of length w touches at most
// ceil(w/slot) slots when aligned to them, which is how windows are counted.
func (s *Slots) WindowBound(w time.Duration) float64 {
	return float64(s.PerSlot) * math.Ceil(float64(w)/float64(s.Slot))
}

func (s *Slots) String() string { return fmt.Sprintf("slots: %d per %v", s.PerSlot, s.Slot) }

// A token is worth ticksPerToken ticks, and a bucket refilling at rate
// tokens/s gains rate*1000 ticks per nanosecond: with rate kept in thousandths
// of a token per second every refill is an exact integer.
const (
	ticksPerToken = 1_000_000_000_000
	maxBurst      = 9_000_000
)

// TokenBucket refills Rate tokens per second continuously up to Burst and
// admits a handshake when a whole token is available, which it consumes.
// It starts full. Token arithmetic is exact (integer ticks), so a run never
// drifts: in any window of length T it admits at most Burst + Rate*T.
//
//	tokens = min(burst, tokens + elapsed_s*rate); if tokens >= 1 { tokens--; admit }
type TokenBucket struct {
	Rate         float64 // tokens per second (as configured)
	Burst        int     // tokens
	ticksPerNano int64   // rate in thousandths of a token per second
	full         int64   // Burst in ticks
	ticks        int64
	last         time.Duration
}

// NewTokenBucket returns a full bucket; rate is rounded to 0.001 token/s.
func NewTokenBucket(rate float64, burst int) *TokenBucket {
	return &TokenBucket{
		Rate:         rate,
		Burst:        burst,
		ticksPerNano: max(1, int64(math.Round(rate*1000))),
		full:         int64(burst) * ticksPerToken,
		ticks:        int64(burst) * ticksPerToken,
	}
}

// Admit implements Admission.
func (b *TokenBucket) Admit(now time.Duration) bool {
	if now > b.last {
		if need := b.full - b.ticks; need > 0 {
			elapsed := int64(now - b.last)
			if elapsed > need/b.ticksPerNano {
				b.ticks = b.full
			} else {
				b.ticks += elapsed * b.ticksPerNano
			}
		}
		b.last = now
	}
	if b.ticks >= ticksPerToken {
		b.ticks -= ticksPerToken
		return true
	}
	return false
}

// Tokens returns the whole tokens available at the last call.
func (b *TokenBucket) Tokens() int { return int(b.ticks / ticksPerToken) }

// WindowBound implements Admission: burst + rate*w.
func (b *TokenBucket) WindowBound(w time.Duration) float64 {
	return float64(b.Burst) + float64(b.ticksPerNano)*float64(w)/ticksPerToken
}

func (b *TokenBucket) String() string {
	return fmt.Sprintf("token bucket: %g/s, burst %d", b.Rate, b.Burst)
}

// Unlimited admits everything.
type Unlimited struct{}

// Admit implements Admission.
func (Unlimited) Admit(time.Duration) bool { return true }

// WindowBound implements Admission.
func (Unlimited) WindowBound(time.Duration) float64 { return math.Inf(1) }

func (Unlimited) String() string { return "unlimited" }
