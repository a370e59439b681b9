// Package policies holds the client reconnect backoff policies shared by
// the simulator and the real storm client: each policy's delay formula,
// the client-side rules every policy shares (max_attempts, Retry-After, a
// floor after a rejection, the handshake timeout) and the wait before a
// first attempt. Their random bits come from package rng, so the
// simulator and the real client sleep exactly the same delays.
package policies

import (
	"fmt"
	"time"

	"stormsim/policies/rng"
)

// Policy computes how long a rejected client waits before its next attempt.
//
// n is the number of earlier failures in this round (0 for the first
// rejection), prev is the policy's own previous delay (0 before the first)
// and u is 64 random bits from rng.Draw. Implementations use integer arithmetic
// only, so a delay is the same on every machine.
type Policy interface {
	Delay(n int, prev time.Duration, u uint64) time.Duration
	// MaxDelay is the largest delay Delay can return.
	MaxDelay() time.Duration
	// String describes the policy and its formula in words.
	String() string
}

// Stateful is implemented by policies whose delay depends on prev; the
// engine keeps the previous delay per client only for those.
type Stateful interface {
	Policy
	UsesPrevious() bool
}

// UsesPrevious reports whether p needs its previous delay passed back in.
func UsesPrevious(p Policy) bool {
	s, ok := p.(Stateful)
	return ok && s.UsesPrevious()
}

// Compile-time checks that every policy satisfies Policy.
var (
	_ Policy   = None{}
	_ Policy   = Constant{}
	_ Policy   = Exponential{}
	_ Policy   = FullJitter{}
	_ Policy   = EqualJitter{}
	_ Stateful = Decorrelated{}
	_ Policy   = GRPC{}
	_ Policy   = SocketIO{}
	_ Policy   = Cenkalti{}
)

// None retries after MinGap, the smallest wait that still lets time advance.
//
//	delay = min_gap
type None struct{ MinGap time.Duration }

// Delay implements Policy.
func (p None) Delay(int, time.Duration, uint64) time.Duration { return p.MinGap }

// MaxDelay implements Policy.
func (p None) MaxDelay() time.Duration { return p.MinGap }

func (p None) String() string { return fmt.Sprintf("none: retry after min_gap=%v", p.MinGap) }

// Constant waits the same Base after every failure (the "fixed" policy).
//
//	delay = base
type Constant struct{ Base time.Duration }

// Delay implements Policy.
func (p Constant) Delay(int, time.Duration, uint64) time.Duration { return p.Base }

// MaxDelay implements Policy.
func (p Constant) MaxDelay() time.Duration { return p.Base }

func (p Constant) String() string { return fmt.Sprintf("fixed: delay = base (%v)", p.Base) }

// Ceilings is the capped exponential sequence min(cap, base*multiplier^n),
// computed once in integer nanoseconds (each step rounds down).
type Ceilings struct {
	Base, Cap  time.Duration
	Multiplier Fixed
	table      []time.Duration
}

// NewCeilings precomputes the sequence until it reaches cap or stops growing.
func NewCeilings(base, cap time.Duration, multiplier Fixed) Ceilings {
	c := Ceilings{Base: base, Cap: cap, Multiplier: multiplier}
	d := min(base, cap)
	c.table = append(c.table, d)
	for len(c.table) < 4096 {
		next := mulFixed(d, multiplier, cap)
		if next <= d || next >= cap {
			if next > d {
				c.table = append(c.table, cap)
			}
			break
		}
		d = next
		c.table = append(c.table, d)
	}
	return c
}

// At returns min(cap, base*multiplier^n) for n >= 0.
func (c Ceilings) At(n int) time.Duration {
	if n >= len(c.table) {
		return c.table[len(c.table)-1]
	}
	return c.table[n]
}

// Max returns the largest ceiling.
func (c Ceilings) Max() time.Duration { return c.table[len(c.table)-1] }

// Exponential waits the capped exponential ceiling itself, without jitter:
// clients rejected together come back together.
//
//	delay = min(cap, base * multiplier^n)
type Exponential struct{ Ceilings }

// Delay implements Policy.
func (p Exponential) Delay(n int, _ time.Duration, _ uint64) time.Duration { return p.At(n) }

// MaxDelay implements Policy.
func (p Exponential) MaxDelay() time.Duration { return p.Max() }

func (p Exponential) String() string {
	return fmt.Sprintf("exponential: delay = min(cap, base*%g^n) (base %v, cap %v)", p.Multiplier.Float(), p.Base, p.Cap)
}

// FullJitter draws uniformly below the exponential ceiling.
//
//	delay = uniform[0, min(cap, base * multiplier^n))
type FullJitter struct{ Ceilings }

// Delay implements Policy.
func (p FullJitter) Delay(n int, _ time.Duration, u uint64) time.Duration {
	return fullJitter(&p.Ceilings, n, u)
}

// fullJitter is FullJitter's delay after n earlier failures with random
// bits u, below c's ceiling: Backoff.Next calls it directly.
func fullJitter(c *Ceilings, n int, u uint64) time.Duration {
	return rng.UniformDuration(u, c.At(n))
}

// MaxDelay implements Policy.
func (p FullJitter) MaxDelay() time.Duration { return p.Max() }

func (p FullJitter) String() string {
	return fmt.Sprintf("full jitter: delay = uniform[0, min(cap, base*%g^n)) (base %v, cap %v)", p.Multiplier.Float(), p.Base, p.Cap)
}

// EqualJitter keeps half the ceiling and draws the other half.
//
//	c = min(cap, base * multiplier^n); delay = c/2 + uniform[0, c/2)
type EqualJitter struct{ Ceilings }

// Delay implements Policy.
func (p EqualJitter) Delay(n int, _ time.Duration, u uint64) time.Duration {
	half := p.At(n) / 2
	return half + rng.UniformDuration(u, half)
}

// MaxDelay implements Policy.
func (p EqualJitter) MaxDelay() time.Duration { return p.Max() }

func (p EqualJitter) String() string {
	return fmt.Sprintf("equal jitter: c = min(cap, base*%g^n); delay = c/2 + uniform[0, c/2) (base %v, cap %v)", p.Multiplier.Float(), p.Base, p.Cap)
}

// Decorrelated is AWS's decorrelated jitter: each delay is drawn from the
// previous one, so a client's delays drift apart from its neighbours'.
//
//	delay = min(cap, uniform[base, 3*prev)), prev starting at base
type Decorrelated struct{ Base, Cap time.Duration }

// Delay implements Policy.
func (p Decorrelated) Delay(_ int, prev time.Duration, u uint64) time.Duration {
	if prev < p.Base {
		prev = p.Base
	}
	hi := 3 * prev
	if hi > 3*p.Cap { // keeps 3*prev from overflowing on long runs
		hi = 3 * p.Cap
	}
	return min(p.Cap, p.Base+rng.UniformDuration(u, hi-p.Base))
}

// MaxDelay implements Policy.
func (p Decorrelated) MaxDelay() time.Duration { return p.Cap }

// UsesPrevious implements Stateful.
func (p Decorrelated) UsesPrevious() bool { return true }

func (p Decorrelated) String() string {
	return fmt.Sprintf("decorrelated jitter: delay = min(cap, uniform[base, 3*prev)), prev starts at base (base %v, cap %v)", p.Base, p.Cap)
}

// GRPC is gRPC's connection backoff (doc/connection-backoff.md in
// grpc/grpc: INITIAL_BACKOFF 1 s, MULTIPLIER 1.6, MAX_BACKOFF 120 s,
// JITTER 0.2): jitter is applied after the cap, symmetrically.
//
//	c = min(cap, base * multiplier^n); delay = c + uniform[-jitter*c, jitter*c)
type GRPC struct {
	Ceilings
	Jitter Fixed
}

// Delay implements Policy.
func (p GRPC) Delay(n int, _ time.Duration, u uint64) time.Duration {
	c := p.At(n)
	spread := mulFixed(c, p.Jitter, c)
	return c - spread + rng.UniformDuration(u, 2*spread)
}

// MaxDelay implements Policy.
func (p GRPC) MaxDelay() time.Duration { return p.Max() + mulFixed(p.Max(), p.Jitter, p.Max()) }

func (p GRPC) String() string {
	return fmt.Sprintf("grpc: c = min(cap, base*%g^n); delay = c*(1 ± uniform %g) (base %v, cap %v)", p.Multiplier.Float(), p.Jitter.Float(), p.Base, p.Cap)
}

// SocketIO is socket.io-client's Backoff (lib/contrib/backo2.ts: defaults
// reconnectionDelay 1000 ms, factor 2, reconnectionDelayMax 5000 ms,
// randomizationFactor 0.5). The randomization is applied before the cap and
// one random number both sizes the deviation and picks its sign.
//
//	ms = base * multiplier^n; dev = floor(r*jitter*ms);
//	ms = floor(r*10) odd ? ms+dev : ms-dev; delay = min(cap, ms)
type SocketIO struct {
	Ceilings // capped at twice the cap, beyond which the delay is always cap
	Jitter   Fixed
	MaxCap   time.Duration
}

// Delay implements Policy.
func (p SocketIO) Delay(n int, _ time.Duration, u uint64) time.Duration {
	ms := p.At(n)
	dev := rng.UniformDuration(u, mulFixed(ms, p.Jitter, ms))
	if rng.UniformDuration(u, 10)&1 == 1 {
		ms += dev
	} else {
		ms -= dev
	}
	return min(ms, p.MaxCap)
}

// MaxDelay implements Policy.
func (p SocketIO) MaxDelay() time.Duration { return p.MaxCap }

func (p SocketIO) String() string {
	return fmt.Sprintf("socketio: ms = base*%g^n ± floor(r*%g*ms); delay = min(cap, ms) (base %v, cap %v)", p.Multiplier.Float(), p.Jitter.Float(), p.Base, p.MaxCap)
}

// Cenkalti is github.com/cenkalti/backoff's ExponentialBackOff (defaults
// InitialInterval 500 ms, Multiplier 1.5, MaxInterval 60 s,
// RandomizationFactor 0.5). The interval is capped before randomization, so
// a delay can exceed the cap by half. Its MaxElapsedTime (15 min) maps to
// max_attempts, which the simulator does not set by default.
//
//	c = min(cap, base * multiplier^n); delay = uniform[c - f*c, c + f*c]
type Cenkalti struct {
	Ceilings
	Jitter Fixed
}

// Delay implements Policy.
func (p Cenkalti) Delay(n int, _ time.Duration, u uint64) time.Duration {
	c := p.At(n)
	delta := mulFixed(c, p.Jitter, c)
	return c - delta + rng.UniformDuration(u, 2*delta+1)
}

// MaxDelay implements Policy.
func (p Cenkalti) MaxDelay() time.Duration { return p.Max() + mulFixed(p.Max(), p.Jitter, p.Max()) }

func (p Cenkalti) String() string {
	return fmt.Sprintf("cenkalti: c = min(cap, base*%g^n); delay = uniform[c*(1-%g), c*(1+%g)] (base %v, cap %v)", p.Multiplier.Float(), p.Jitter.Float(), p.Jitter.Float(), p.Base, p.Cap)
}
