package lab

import (
	"errors"
	"slices"
	"time"

	"stormsim/calibrate/measured"
	"stormsim/gateway/logline"
	"stormsim/gateway/protocol"
)

// attemptKey names one handshake on both sides: the device and the attempt
// counter it sent (?attempt=), which the gateway logs as logline.KeyAttempt.
type attemptKey struct {
	device  string
	attempt int64
}

// gatewayDecisions are a gateway's admission decisions from its log, in ms
// from the phase's origin.
type gatewayDecisions struct {
	claims      []measured.Claim // route claims: admitted handshakes, and wasted claims
	abandonedMs []float64        // decisions of handshakes admitted, then dropped unclaimed (--abandoned skip)
	// dropped are those handshakes and when their lines were written: when
	// the gateway, its wait for a claim ended by the client's close, knew
	// the client had gone (ms from origin).
	dropped       []droppedHandshake
	rejectsMs     []float64 // 429 decisions (a rejected line is written at its decision)
	rejectDevices []string  // rejectDevices[i] is the device of rejectsMs[i] (the line names no attempt)
	// skewMs and slackMs describe the placement of the admitted decisions
	// (measured.Series.ClockSkewMs and ClockSlackMs).
	skewMs, slackMs float64
}

// droppedHandshake is a handshake the gateway dropped unclaimed
// (logline.Abandoned) and when, ms from the origin.
type droppedHandshake struct {
	key    attemptKey
	lineMs float64
}

// decisionsOf places a gateway's decisions in wall time, in ms from origin.
// A rejected line is written at its decision. An admitted line is written
// after the claim and the upgrade but carries logline.KeyTokenMs, the
// decision on the gateway's monotonic clock, whose origin in wall time lies
// between two bounds: at most the earliest (line time - token_ms), since no
// line precedes its decision, and at least the latest (sent - token_ms)
// over the handshakes the clients sent (sent maps them to their send
// times), since no decision precedes its request. The lower bound is used
// when known: the storm's first handshakes reach an idle gateway and are
// decided within a loopback hop of being sent, whereas under load even the
// fastest admission logs hundreds of milliseconds after its decision (the
// upper bound then places every admission that much late). A line without
// the keys the contract promises is an error.
func decisionsOf(lines []logLine, origin time.Time, sent map[attemptKey]time.Time) (gatewayDecisions, error) {
	type admission struct {
		key   attemptKey
		token time.Duration
		at    time.Time
		msg   string // logline.Admitted, ClaimWasted or Abandoned
	}
	var d gatewayDecisions
	var admitted []admission
	var upper, lower time.Time
	var offsets []time.Time
	for _, l := range lines {
		switch l.Msg {
		case logline.Admitted, logline.ClaimWasted, logline.Abandoned:
			device, err := l.str(logline.KeyDevice)
			if err != nil {
				return d, err
			}
			attempt, err := l.num(logline.KeyAttempt)
			if err != nil {
				return d, err
			}
			tokenMs, err := l.num(logline.KeyTokenMs)
			if err != nil {
				return d, err
			}
			a := admission{attemptKey{device, int64(attempt)}, durationOfMs(tokenMs), l.Time, l.Msg}
			admitted = append(admitted, a)
			o := l.Time.Add(-a.token)
			offsets = append(offsets, o)
			if upper.IsZero() || o.Before(upper) {
				upper = o
			}
			if at, ok := sent[a.key]; ok {
				if lo := at.Add(-a.token); lower.IsZero() || lo.After(lower) {
					lower = lo
				}
			}
		case logline.Rejected:
			status, err := l.num(logline.KeyStatus)
			if err != nil {
				return d, err
			}
			if int(status) != protocol.StatusTooManyRequests {
				continue
			}
			device, err := l.str(logline.KeyDevice)
			if err != nil {
				return d, err
			}
			d.rejectsMs = append(d.rejectsMs, ms(l.Time.Sub(origin)))
			d.rejectDevices = append(d.rejectDevices, device)
		}
	}
	if len(admitted) == 0 {
		return d, errors.New("gateway log has no admitted, claim_wasted or abandoned lines: cannot place its admission decisions")
	}
	clock := upper
	if !lower.IsZero() && !lower.After(upper) {
		clock = lower
		d.slackMs = ms(upper.Sub(lower))
	}
	d.skewMs = skew(offsets, upper)
	for _, a := range admitted {
		decided := ms(clock.Add(a.token).Sub(origin))
		if a.msg == logline.Abandoned {
			d.abandonedMs = append(d.abandonedMs, decided)
			d.dropped = append(d.dropped, droppedHandshake{a.key, ms(a.at.Sub(origin))})
			continue
		}
		d.claims = append(d.claims, measured.Claim{Device: a.key.device, Attempt: a.key.attempt,
			DecidedMs: decided, DoneMs: ms(a.at.Sub(origin)), Wasted: a.msg == logline.ClaimWasted})
	}
	return d, nil
}

// series counts the decisions in [0, horizonMs) from the origin (every
// one from 0 on when horizonMs is 0), in windows of window: where the
// simulator counts an attempt (it decides on arrival). A handshake
// admitted and then dropped or served in vain is an admission decision
// all the same, as in the simulator.
func (d gatewayDecisions) series(window time.Duration, horizonMs float64) measured.Series {
	s := measured.Series{ClockSkewMs: d.skewMs, ClockSlackMs: d.slackMs}
	windowMs := ms(window)
	add := func(at float64, admitted bool) {
		if at >= 0 && (horizonMs == 0 || at < horizonMs) {
			s.Add(int(at/windowMs), admitted)
		}
	}
	for _, c := range d.claims {
		add(c.DecidedMs, true)
	}
	for _, a := range d.abandonedMs {
		add(a, true)
	}
	for _, r := range d.rejectsMs {
		add(r, false)
	}
	s.Finish()
	return s
}

// skew is how far above the earliest offset the fifth earliest lies, in ms.
func skew(offsets []time.Time, earliest time.Time) float64 {
	d := make([]float64, len(offsets))
	for i, o := range offsets {
		d[i] = ms(o.Sub(earliest))
	}
	slices.Sort(d)
	return d[min(4, len(d)-1)]
}

// admitTimes are the admission decisions of a gateway (the token_ms of
// its admitted, claim_wasted and abandoned lines, on its own monotonic
// clock: every token it gave), sorted.
func admitTimes(lines []logLine) ([]time.Duration, error) {
	var out []time.Duration
	for _, l := range lines {
		if l.Msg != logline.Admitted && l.Msg != logline.ClaimWasted && l.Msg != logline.Abandoned {
			continue
		}
		v, err := l.num(logline.KeyTokenMs)
		if err != nil {
			return nil, err
		}
		out = append(out, durationOfMs(v))
	}
	slices.Sort(out)
	return out, nil
}

// peakInWindow is the most times (sorted) inside any half-open interval
// [t, t+window): the token bucket's bound holds for every such interval,
// not only for windows aligned to the storm's origin.
func peakInWindow(times []time.Duration, window time.Duration) int64 {
	best, lo := 0, 0
	for hi := range times {
		for times[hi]-times[lo] >= window {
			lo++
		}
		best = max(best, hi-lo+1)
	}
	return int64(best)
}

// ms converts d to float milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// durationOfMs converts float milliseconds to a duration.
func durationOfMs(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
