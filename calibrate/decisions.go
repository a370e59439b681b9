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
}

// decisionSeries counts gw-b's admission decisions from its log, from
// origin on: where the simulator counts an attempt (it decides on arrival).
// A rejected line is written right at its decision. An admitted line is
// written after the claim and the upgrade, but carries token_ms, the
// decision on the gateway's monotonic clock; the clock's origin in wall
// time is at most the earliest (line time - token_ms), and that bound is
// tight because the fastest admissions log within a fraction of a
// millisecond.
func decisionSeries(lines []logLine, origin time.Time, window time.Duration) (Series, error) {
	var s Series
	var admitted []logLine
	offset := time.Time{}
	var offsets []time.Time
	for _, l := range lines {
		if l.Msg != "admitted" {
			continue
		}
		admitted = append(admitted, l)
		o := l.Time.Add(-time.Duration(l.num("token_ms") * float64(time.Millisecond)))
		offsets = append(offsets, o)
		if offset.IsZero() || o.Before(offset) {
			offset = o
		}
	}
	if len(admitted) == 0 {
		return s, errors.New("gateway log has no admitted lines: cannot place its admission decisions")
	}
	s.ClockSkewMs = skew(offsets, offset)
	at := func(t time.Time) int {
		d := t.Sub(origin)
		if d < 0 {
			return -1
		}
		return int(d / window)
	}
	for _, l := range admitted {
		if i := at(offset.Add(time.Duration(l.num("token_ms") * float64(time.Millisecond)))); i >= 0 {
			countWindows(&s.Attempts, i)
			countWindows(&s.Accepts, i)
		}
	}
	for _, l := range lines {
		if l.Msg == "rejected" && l.num("status") == 429 {
			if i := at(l.Time); i >= 0 {
				countWindows(&s.Attempts, i)
				countWindows(&s.Rejects, i)
			}
		}
	}
	s.finish()
	return s, nil
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
