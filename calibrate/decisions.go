package calibrate

import (
	"errors"
	"slices"
	"time"
)

// Series is a phase's handshakes per window at the gateway; window i
// covers [i*window, (i+1)*window) from the phase's origin.
type Series struct {
	Attempts              []int64 `json:"attempts"`
	Accepts               []int64 `json:"accepts"`
	Rejects               []int64 `json:"rejects"`
	PeakAttemptsPerWindow int64   `json:"peak_attempts_per_window"`
	PeakAcceptsPerWindow  int64   `json:"peak_accepts_per_window"`
	FirstWindowAttempts   int64   `json:"first_window_attempts"` // attempts in the window of the first attempt
	// ClockSkewMs (gateway side only) indicates the error of the admitted
	// decisions' placement: how much later than the fastest admission's
	// the fifth fastest one's (log time - token_ms) lies.
	ClockSkewMs float64 `json:"clock_skew_ms,omitempty"`
	// ClockSlackMs (gateway side only) is how much later the admitted
	// decisions would lie were they placed by their log lines' times alone
	// (see decisionsOf): what the client-side bound corrected.
	ClockSlackMs float64 `json:"clock_slack_ms,omitempty"`
}

// attemptKey names one handshake on both sides: the device and the attempt
// counter it sent (?attempt=), which the gateway logs as "attempt".
type attemptKey struct {
	device  string
	attempt int64
}

// Claim is one admitted handshake seen by the gateway: its admission
// decision and its "admitted" log line (written after the route claim and
// the upgrade), in ms from the phase's origin.
type Claim struct {
	Device    string  `json:"device"`
	Attempt   int64   `json:"attempt"` // the device's attempt counter
	DecidedMs float64 `json:"decided_ms"`
	DoneMs    float64 `json:"done_ms"`
}

// gatewayDecisions are a gateway's admission decisions from its log.
type gatewayDecisions struct {
	claims  []Claim     // admitted handshakes
	rejects []time.Time // 429 decisions (a rejected line is written right at its decision)
	// rejectDevices[i] is the device of rejects[i] (the line names no
	// attempt).
	rejectDevices []string
	// skewMs and slackMs describe the placement of the admitted decisions
	// (see Series.ClockSkewMs and Series.ClockSlackMs).
	skewMs, slackMs float64
}

// decisionsOf places gw's decisions in wall time. A rejected line is
// written at its decision. An admitted line is written after the claim and
// the upgrade but carries token_ms, the decision on the gateway's
// monotonic clock, whose origin in wall time lies between two bounds: at
// most the earliest (line time - token_ms), since no line precedes its
// decision, and at least the latest (sent - token_ms) over the handshakes
// the clients sent (sent maps them to their send times), since no decision
// precedes its request. The lower bound is used when known: the storm's
// first handshakes reach an idle gateway and are decided within a loopback
// hop of being sent, whereas under load even the fastest admission logs
// hundreds of milliseconds after its decision (the upper bound then places
// every admission that much late).
func decisionsOf(lines []logLine, origin time.Time, sent map[attemptKey]time.Time) (gatewayDecisions, error) {
	var d gatewayDecisions
	var admitted []logLine
	var upper, lower time.Time
	var offsets []time.Time
	for _, l := range lines {
		switch {
		case l.Msg == "admitted":
			admitted = append(admitted, l)
			token := time.Duration(l.num("token_ms") * float64(time.Millisecond))
			o := l.Time.Add(-token)
			offsets = append(offsets, o)
			if upper.IsZero() || o.Before(upper) {
				upper = o
			}
			if at, ok := sent[attemptKey{str(l.Fields["device"]), int64(l.num("attempt"))}]; ok {
				if lo := at.Add(-token); lower.IsZero() || lo.After(lower) {
					lower = lo
				}
			}
		case l.Msg == "rejected" && l.num("status") == 429:
			d.rejects = append(d.rejects, l.Time)
			d.rejectDevices = append(d.rejectDevices, str(l.Fields["device"]))
		}
	}
	if len(admitted) == 0 {
		return d, errors.New("gateway log has no admitted lines: cannot place its admission decisions")
	}
	clock := upper
	if !lower.IsZero() && !lower.After(upper) {
		clock = lower
		d.slackMs = ms(upper.Sub(lower))
	}
	d.skewMs = skew(offsets, upper)
	for _, l := range admitted {
		decided := clock.Add(time.Duration(l.num("token_ms") * float64(time.Millisecond)))
		d.claims = append(d.claims, Claim{Device: str(l.Fields["device"]), Attempt: int64(l.num("attempt")),
			DecidedMs: ms(decided.Sub(origin)), DoneMs: ms(l.Time.Sub(origin))})
	}
	return d, nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// decisionSeries counts gw-b's admission decisions (decisionsOf) from origin
// on: where the simulator counts an attempt (it decides on arrival).
func decisionSeries(lines []logLine, origin time.Time, window time.Duration, sent map[attemptKey]time.Time) (Series, gatewayDecisions, error) {
	var s Series
	d, err := decisionsOf(lines, origin, sent)
	if err != nil {
		return s, d, err
	}
	s.ClockSkewMs, s.ClockSlackMs = d.skewMs, d.slackMs
	at := func(afterOrigin time.Duration) int {
		if afterOrigin < 0 {
			return -1
		}
		return int(afterOrigin / window)
	}
	for _, c := range d.claims {
		if i := at(time.Duration(c.DecidedMs * float64(time.Millisecond))); i >= 0 {
			countWindows(&s.Attempts, i)
			countWindows(&s.Accepts, i)
		}
	}
	for _, r := range d.rejects {
		if i := at(r.Sub(origin)); i >= 0 {
			countWindows(&s.Attempts, i)
			countWindows(&s.Rejects, i)
		}
	}
	s.finish()
	return s, d, nil
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

// countWindows adds one event in window i of *series, growing it.
func countWindows(series *[]int64, i int) {
	for len(*series) <= i {
		*series = append(*series, 0)
	}
	(*series)[i]++
}

// finish pads the accepts and rejects to the attempts' length and computes
// the peaks.
func (s *Series) finish() {
	n := len(s.Attempts)
	s.Accepts, s.Rejects = padInts(s.Accepts, n), padInts(s.Rejects, n)
	for i, v := range s.Attempts {
		s.PeakAttemptsPerWindow = max(s.PeakAttemptsPerWindow, v)
		s.PeakAcceptsPerWindow = max(s.PeakAcceptsPerWindow, s.Accepts[i])
		if s.FirstWindowAttempts == 0 {
			s.FirstWindowAttempts = v
		}
	}
}

func padInts(s []int64, n int) []int64 {
	out := make([]int64, n)
	copy(out, s)
	return out
}
