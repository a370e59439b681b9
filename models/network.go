package models

import (
	"math"
	"time"

	"stormsim/internal/param"
	"stormsim/policies/rng"
)

// NetworkSpec is handshake latency. An attempt sent at s reaches the server
// (its admission decision) at s + rtt/2; the answer is back at the client
// rtt/2 + server_time after that, and the client's backoff starts then.
// Measured legs (out, back) replace the rtt's halves where set. Each
// attempt draws its own rtt, legs and server time. Durations are Go
// durations ("63ms").
type NetworkSpec struct {
	RTT        Distribution `yaml:"rtt"`         // round-trip time
	ServerTime Distribution `yaml:"server_time"` // time the server spends on a handshake
	// RejectTime, when set, is the server time of a handshake that is not
	// admitted (429, 503, refused) instead of ServerTime: a gateway that
	// checks admission before any database work answers those far sooner
	// than it claims a route. Absent, every attempt takes ServerTime.
	RejectTime *Distribution `yaml:"reject_time"`

	// OutLeg, when set, is the time from an attempt's send to the server's
	// admission decision instead of rtt/2: under load a request waits in
	// the server's accept backlog and for a CPU before it is decided, so a
	// handshake's latency need not split evenly around the decision.
	// FirstOutLeg, when set, is the same for each client's first attempt
	// (instead of OutLeg, or rtt/2 without it). Each leg has its own draws.
	OutLeg      *Distribution `yaml:"out"`
	FirstOutLeg *Distribution `yaml:"first_out"`
	// BackLeg, when set, is the time from the decision to the answer
	// reaching the client, before server (or reject) time, instead of
	// rtt - rtt/2; FirstBackLeg the same for first attempts. With both
	// legs set for an attempt, rtt does not apply to it.
	BackLeg      *Distribution `yaml:"back"`
	FirstBackLeg *Distribution `yaml:"first_back"`
	// GoawayLeg, when set, is a drain's goaway's way to its client: from
	// the gateway writing it to the client's session ending (the close
	// after it read), when the client starts its first wait. The drain's
	// schedule (its pace, capacity.goaway_per_s) times those ends; the
	// gateway wrote each goaway this much earlier, but not before its pace
	// asked. Only a reserved hint depends on it: the gateway computes the
	// hint as its slot less the time the goaway is written, so a client
	// reaches its slot this much late, each client by its own draw. In the
	// lab this is mostly the one client process reading a thousand closes
	// (0-100 ms at 1,000 clients on this project's machine).
	GoawayLeg *Distribution `yaml:"goaway"`
	// GoneLeg, when set, is a departure's way to the gateway: from a
	// client's handshake timeout (its send plus the policy's timeout) to
	// its gateway noticing that it has gone. With capacity.abandoned:
	// skip a gateway drops a handshake only when its turn comes after
	// that; one whose turn comes between the timeout and the notice is
	// claimed, and the claim wasted. In the lab this is the one client
	// process firing its timers late and its closes reaching the gateway
	// (p50 6-11 ms, p90 27-84 ms at 1,700-1,900 clients on this project's
	// machine), and a claim wasted there costs the gateway a claim where a
	// skip costs it next to nothing. Each attempt draws its own. Absent,
	// the gateway notices at the timeout.
	GoneLeg *Distribution `yaml:"gone"`
	// DrainFirstOut, when set, is a drained client's first attempt's way
	// to its decision while the drain is still ending sessions: sent
	// before the drained gateway's last session ends, it takes this
	// instead of first_out, one draw for the whole drain, scaled by how
	// fast the drain ends its sessions against the gateway's full rate
	// (capacity.goaway_per_s: a paced drain loads the machine less); sent
	// after, it takes out (or rtt/2), as a retry does. A drain loads what the fresh
	// gateway shares: in the lab one machine, on which a gateway closing
	// a thousand sessions, their clients reading the closes and
	// PostgreSQL releasing the routes delay the fresh gateway's first
	// handshakes by tens to hundreds of milliseconds, and by under one
	// once the last session has ended (p50, 1,000 clients, this project's
	// machine). A way that shortens when the drain is done packs the
	// attempts sent just before its end onto those sent just after: with
	// a reserved hint, more than the bucket holds.
	DrainFirstOut *Distribution `yaml:"drain_first_out"`
	// SharedEvery, when set, makes the network's delays common: every
	// attempt sent in the same interval of this length draws the same out
	// leg (and rtt), every answer leaving in the same interval the same
	// back leg, instead of each attempt drawing its own. It stands for a
	// network, or a machine, whose delay at a moment is everyone's: a wave
	// of requests then crosses it together and stays a wave. Server time
	// stays each attempt's own.
	SharedEvery time.Duration `yaml:"shared_every,omitempty"`
}

// Validate checks the distributions.
func (n *NetworkSpec) Validate() error {
	if n.SharedEvery < 0 {
		return &param.Error{Key: "shared_every", Problem: "must be >= 0 (0: every attempt draws its own delays)", Got: n.SharedEvery}
	}
	if err := n.RTT.Validate(); err != nil {
		return prefixParam("rtt", err)
	}
	if err := n.ServerTime.Validate(); err != nil {
		return prefixParam("server_time", err)
	}
	for _, o := range []struct {
		key string
		d   *Distribution
	}{{"reject_time", n.RejectTime}, {"out", n.OutLeg}, {"first_out", n.FirstOutLeg}, {"back", n.BackLeg}, {"first_back", n.FirstBackLeg}, {"goaway", n.GoawayLeg}, {"gone", n.GoneLeg}, {"drain_first_out", n.DrainFirstOut}} {
		if o.d == nil {
			continue
		}
		if err := o.d.Validate(); err != nil {
			return prefixParam(o.key, err)
		}
	}
	return nil
}

// IsZero reports whether no attempt is ever delayed.
func (n *NetworkSpec) IsZero() bool {
	return n.RTT.IsZero() && n.ServerTime.IsZero() && n.RejectTime.IsZero() &&
		n.OutLeg.IsZero() && n.FirstOutLeg.IsZero() && n.BackLeg.IsZero() && n.FirstBackLeg.IsZero() && n.DrainFirstOut.IsZero()
}

// HasWork reports whether an attempt's answer waits for server or reject
// time, so that its ServerBits are worth drawing.
func (n *NetworkSpec) HasWork() bool { return !n.ServerTime.IsZero() || !n.RejectTime.IsZero() }

// Legs returns, for client c's attempt number attempt, the one-way time to
// the server and the time from arrival to the answer reaching the client,
// drawn for the attempt alone (as without SharedEvery).
func (n *NetworkSpec) Legs(seed, c, attempt uint64) (out, back time.Duration) {
	d := n.Draws(seed)
	out, back = d.Trip(c, attempt)
	return out, back + d.WorkTime(c, attempt, true)
}

// Out is NetworkDraws.Out for one draw.
func (n *NetworkSpec) Out(seed, c, attempt uint64, sent time.Duration) time.Duration {
	d := n.Draws(seed)
	return d.Out(c, attempt, sent)
}

// Back is NetworkDraws.Back for one draw.
func (n *NetworkSpec) Back(seed, c, attempt uint64, admitted bool, at time.Duration) time.Duration {
	d := n.Draws(seed)
	return d.Back(c, attempt, admitted, at)
}

// Independent reports whether every attempt draws its own delays (no
// SharedEvery, no DrainFirstOut, by which a drained client's first way
// depends on when it was sent): then an attempt's delays depend on
// nothing but the attempt, and Trip may draw them again whenever they
// are needed.
func (n *NetworkSpec) Independent() bool { return n.SharedEvery <= 0 && n.DrainFirstOut == nil }

// RTTOnly reports whether every leg of every attempt is a half of its rtt
// (no measured legs) and drawn for the attempt alone: then one rtt draw
// gives both of an attempt's legs (NetworkDraws.RTT).
func (n *NetworkSpec) RTTOnly() bool {
	return n.Independent() && n.OutLeg == nil && n.BackLeg == nil && n.FirstOutLeg == nil && n.FirstBackLeg == nil
}

// NetworkDraws are a run's network delays: the spec with the stream keys of
// the run's seed computed once, so that each delay costs two mixes of the
// draw function rather than three.
type NetworkDraws struct {
	spec                       *NetworkSpec
	network, server, out, back uint64 // rng.StreamKey of each stream
}

// Draws returns the network's delays for the run seeded with seed.
func (n *NetworkSpec) Draws(seed uint64) NetworkDraws {
	return NetworkDraws{spec: n, network: rng.StreamKey(seed, rng.StreamNetwork),
		server: rng.StreamKey(seed, rng.StreamServerTime),
		out:    rng.StreamKey(seed, rng.StreamOutLeg), back: rng.StreamKey(seed, rng.StreamBackLeg)}
}

// Trip returns the two network legs of client c's attempt number attempt,
// without server time, for an Independent network: the same out leg as
// Out, and the back leg that Back adds server time to.
func (d *NetworkDraws) Trip(c, attempt uint64) (out, back time.Duration) {
	return d.oneWay(attempt, c, attempt)
}

// RTT is the rtt of client c's attempt number attempt, for an RTTOnly
// network: its out leg is rtt/2 and its back leg rtt - rtt/2.
func (d *NetworkDraws) RTT(c, attempt uint64) time.Duration { return d.rtt(c, attempt) }

// WorkTime is what Back adds to the back leg: the server time of client
// c's attempt number attempt, or its reject time when it was not admitted
// and reject_time is set.
func (d *NetworkDraws) WorkTime(c, attempt uint64, admitted bool) time.Duration {
	dist := d.workDist(admitted)
	if dist.IsZero() {
		return 0
	}
	// Always drawn for the attempt alone: the work is the attempt's own.
	return dist.Sample(d.ServerBits(c, attempt))
}

// ServerBits are the random bits of client c's attempt number attempt
// that WorkTime draws, so that they may be drawn before the attempt is
// decided: WorkTimeOf(ServerBits(c, a), admitted) is WorkTime(c, a,
// admitted).
func (d *NetworkDraws) ServerBits(c, attempt uint64) uint64 {
	return rng.DrawKeyed(d.server, c, attempt)
}

// WorkTimeOf is WorkTime from the attempt's ServerBits u.
func (d *NetworkDraws) WorkTimeOf(u uint64, admitted bool) time.Duration {
	return d.workDist(admitted).Sample(u)
}

// workDist is the distribution of an attempt's work: server_time, or
// reject_time for one not admitted when set.
func (d *NetworkDraws) workDist(admitted bool) *Distribution {
	if !admitted && d.spec.RejectTime != nil {
		return d.spec.RejectTime
	}
	return &d.spec.ServerTime
}

// Out is the time from client c's attempt number attempt, sent at sent, to
// its reaching the server's decision.
func (d *NetworkDraws) Out(c, attempt uint64, sent time.Duration) time.Duration {
	n := d.spec
	kc, ka := n.drawKey(c, attempt, sent)
	if l := leg(n.FirstOutLeg, n.OutLeg, attempt); l != nil {
		return l.Sample(rng.DrawKeyed(d.out, kc, ka))
	}
	return d.rtt(kc, ka) / 2
}

// DrainOut is Out for client c's first attempt after a goaway of the
// drain numbered drain (from 0 in its storm), sent at sent:
// drain_first_out times load (CapacitySpec.DrainLoad, the drain's rate of
// ending sessions against the gateway's full rate) when the drain was
// still ending sessions then (busy), otherwise the later attempts' out
// leg (or rtt/2). The busy way is drawn once per drain: a machine's delay
// at a moment is everyone's, so every first attempt a drain's clients
// send while it is busy waits alike, and a replication's drain waits as
// one of the measured drains did. Without drain_first_out it is Out.
func (d *NetworkDraws) DrainOut(c, drain uint64, sent time.Duration, busy bool, load float64) time.Duration {
	n := d.spec
	if n.DrainFirstOut == nil {
		return d.Out(c, 1, sent)
	}
	if busy {
		way := n.DrainFirstOut.Sample(rng.DrawKeyed(d.out, drain, drainAttempt))
		if load < 1 {
			way = time.Duration(math.Round(float64(way) * load))
		}
		return way
	}
	kc, ka := n.drawKey(c, 1, sent)
	if n.OutLeg != nil {
		return n.OutLeg.Sample(rng.DrawKeyed(d.out, kc, ka))
	}
	return d.rtt(kc, ka) / 2
}

// Back is the time from client c's attempt number attempt being decided at
// at to its answer reaching the client: the back leg (or the rtt's longer
// half) and the server time, reject_time instead for one not admitted when
// set (drawn from the same stream as server_time).
func (d *NetworkDraws) Back(c, attempt uint64, admitted bool, at time.Duration) time.Duration {
	kc, ka := d.spec.drawKey(c, attempt, at)
	_, back := d.oneWay(attempt, kc, ka)
	return back + d.WorkTime(c, attempt, admitted)
}

// sharedAttempt stands for the attempt in the key of a shared draw (see
// SharedEvery): no real attempt number is this large.
const sharedAttempt = 1 << 40

// drainAttempt stands for the attempt in the key of a drain's busy way
// (DrainOut), keyed by the drain's number: apart from every client's and
// every shared draw.
const drainAttempt = 1<<40 + 1

// drawKey is what an attempt's network draws are keyed by: client c and
// attempt, or with SharedEvery the interval holding time t, so that every
// attempt crossing the network in that interval draws the same delay.
func (n *NetworkSpec) drawKey(c, attempt uint64, t time.Duration) (uint64, uint64) {
	if n.SharedEvery <= 0 {
		return c, attempt
	}
	return uint64(t / n.SharedEvery), sharedAttempt
}

// oneWay returns the two network legs of an attempt numbered attempt,
// drawn under key (kc, ka), without server time: the measured legs where
// set, otherwise the halves of its rtt (the longer half on the way back).
func (d *NetworkDraws) oneWay(attempt, kc, ka uint64) (out, back time.Duration) {
	n := d.spec
	outLeg, backLeg := leg(n.FirstOutLeg, n.OutLeg, attempt), leg(n.FirstBackLeg, n.BackLeg, attempt)
	if outLeg == nil || backLeg == nil {
		rtt := d.rtt(kc, ka)
		out, back = rtt/2, rtt-rtt/2
	}
	if outLeg != nil {
		out = outLeg.Sample(rng.DrawKeyed(d.out, kc, ka))
	}
	if backLeg != nil {
		back = backLeg.Sample(rng.DrawKeyed(d.back, kc, ka))
	}
	return out, back
}

// rtt draws the round-trip time of an attempt under key (kc, ka).
func (d *NetworkDraws) rtt(kc, ka uint64) time.Duration {
	return d.spec.RTT.Sample(rng.DrawKeyed(d.network, kc, ka))
}

// MaxRTT bounds the rtt of any attempt.
func (n *NetworkSpec) MaxRTT() time.Duration { return n.RTT.Upper() }

// leg is the distribution of a measured leg for attempt number attempt:
// first for a first attempt when set, otherwise later; nil for none.
func leg(first, later *Distribution, attempt uint64) *Distribution {
	if attempt == 1 && first != nil {
		return first
	}
	return later
}

// MaxRoundTrip bounds out + back for any attempt.
func (n *NetworkSpec) MaxRoundTrip() time.Duration {
	rtt, server := n.RTT.Upper(), n.ServerTime.Upper()
	if n.RejectTime != nil {
		server = max(server, n.RejectTime.Upper())
	}
	out := legUpper(n.FirstOutLeg, n.OutLeg, rtt/2)
	if n.DrainFirstOut != nil {
		out = max(out, n.DrainFirstOut.Upper(), legUpper(nil, n.OutLeg, rtt/2))
	}
	return out + legUpper(n.FirstBackLeg, n.BackLeg, rtt-rtt/2) + server
}

// legUpper bounds a leg over first and later attempts; half is the bound
// of the rtt's half that stands in for later attempts (and first ones
// without a first leg) when later is not set.
func legUpper(first, later *Distribution, half time.Duration) time.Duration {
	hi := time.Duration(0)
	if later == nil {
		hi = half
	}
	if first != nil {
		hi = max(hi, first.Upper())
	}
	if later != nil {
		hi = max(hi, later.Upper())
	}
	return hi
}

func prefixParam(prefix string, err error) error {
	if pe, ok := err.(*param.Error); ok {
		return &param.Error{Key: prefix + "." + pe.Key, Problem: pe.Problem, Got: pe.Got}
	}
	return err
}
