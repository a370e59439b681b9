package calibrate

import (
	"math"
	"net/http"
	"testing"
	"time"

	"stormsim/gateway/protocol"
)

// TestMeasureBacklog: four handshakes sent at 0 and one at 200 ms; the
// 429 sent at 200 is decided at 205, the run's fastest one-way time
// (5 ms), so arrivals are 5, 5, 5, 5 and 205. Decisions at 45, 65
// (429s), 85 (a claim), 105 (429) and 205. Worked by hand: the backlog is
// non-empty from 5 to 105 (100 ms; it reaches 0 at the fourth decision)
// and for no time at 205 (arrival and decision at once), so 5 decisions in
// 100 ms, 50/s; from the first decision (45) on, 60 ms busy, 83.3/s. A
// handshake answered 503 (not gw-b's decision) is left out.
func TestMeasureBacklog(t *testing.T) {
	origin := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	out := func(v float64) *float64 { return &v }
	at := func(msAfter float64) time.Time { return origin.Add(time.Duration(msAfter * float64(time.Millisecond))) }
	hs := []Handshake{
		{Status: protocol.StatusTooManyRequests, sent: at(0), OutMs: out(45)},
		{Status: protocol.StatusTooManyRequests, sent: at(0), OutMs: out(65)},
		{Status: http.StatusSwitchingProtocols, sent: at(0)},
		{Status: protocol.StatusTooManyRequests, sent: at(0)},
		{Status: protocol.StatusTooManyRequests, sent: at(200), OutMs: out(5)},
		{Status: protocol.StatusServiceUnavailable, sent: at(10), OutMs: out(1)},
	}
	b, ok := measureBacklog(hs, []Claim{{DecidedMs: 85}}, []float64{45, 65, 105, 205}, origin)
	want := Backlog{Decisions: 5, BusyMs: 100, AfterStallMs: 60, DecidePerS: 50, AfterStallPS: 5000.0 / 60}
	if !ok || b.Decisions != want.Decisions || math.Abs(b.BusyMs-want.BusyMs) > 1e-9 || math.Abs(b.AfterStallMs-want.AfterStallMs) > 1e-9 ||
		math.Abs(b.DecidePerS-want.DecidePerS) > 1e-9 || math.Abs(b.AfterStallPS-want.AfterStallPS) > 1e-9 {
		t.Errorf("measureBacklog = %+v, %v; want %+v, true", b, ok, want)
	}
	if _, ok := measureBacklog(hs, nil, nil, origin); ok {
		t.Error("no decisions: measureBacklog ok, want not ok")
	}
}

// TestFitBacklogPools: the rate is pooled over the runs (all decisions over
// all busy time), not a mean of the runs' rates: 100 decisions in 0.5 s
// (200/s) and 300 in 3 s (100/s) give 400 / 3.5 s = 114.3/s, not 150/s;
// after the stall 100 in 0.25 s and 300 in 1.5 s give 400 / 1.75 s =
// 228.6/s, not 300/s. A run without a backlog is left out.
func TestFitBacklogPools(t *testing.T) {
	runs := []*RealRun{
		{Backlog: &Backlog{Decisions: 100, BusyMs: 500, AfterStallMs: 250, DecidePerS: 200, AfterStallPS: 400}},
		{},
		{Backlog: &Backlog{Decisions: 300, BusyMs: 3000, AfterStallMs: 1500, DecidePerS: 100, AfterStallPS: 200}},
	}
	var f Fit
	f.fitBacklog(runs)
	if math.Abs(f.DecidePerS-400/3.5) > 1e-9 || math.Abs(f.DecideAfterStallPerS-400/1.75) > 1e-9 ||
		len(f.DecidePerSRuns) != 2 || f.DecidePerSRuns[1] != 100 {
		t.Errorf("fitBacklog: %v/s (runs %v), after stall %v/s; want 114.3 ([200 100]), 228.6", f.DecidePerS, f.DecidePerSRuns, f.DecideAfterStallPerS)
	}
}
