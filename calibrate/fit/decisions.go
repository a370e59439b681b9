package fit

import (
	"math"
	"slices"
	"time"

	"gonum.org/v1/gonum/stat"

	"stormsim/calibrate/measured"
)

// LineWindowMs is the window a stage's line is fitted over, ms: an order of
// magnitude longer than a claim, so that work cut by a window's edge is a
// small part of it, and short enough to keep a storm's phases (its first
// wave, its retries) apart.
const LineWindowMs = 25

// Decisions is the survivor's decision work beside its claims, fitted over
// fixed windows of LineWindowMs inside stretches where a backlog of
// requests sent but not yet decided existed throughout (the decision stage
// never idle, as Backlog counts it): the decisions a window holds against
// the claims, useful and wasted, that end in it, by least squares,
// decisions/ms = a + b x claims/ms. A decision that takes BaseMs plus
// PerClaimMs for each claim ending beside it fills a busy window exactly
// when a = 1/BaseMs and b = -PerClaimMs/BaseMs.
//
// The windows are fixed, not the gaps between decisions: a long gap holds
// more claims only because it is long, so a line through the gaps finds a
// slope near the claims' own spacing even where they cost the decisions
// nothing.
//
// On a machine whose cores are busy, a decision beside a claim takes
// longer, so the first wave's rate and the backlog's (FirstWave.DecidePerS)
// hold only for storms whose claims fall among their decisions as the
// fitted storm's did. The model takes the line when both terms are
// positive (Share): capacity.decide_per_s = 1 / BaseMs and
// capacity.claim_share = PerClaimMs.
type Decisions struct {
	BaseMs     float64 `json:"base_ms"`      // a decision with no claim ending beside it, ms
	PerClaimMs float64 `json:"per_claim_ms"` // what each claim ending beside a decision adds to it, ms
	Windows    int     `json:"windows"`      // the busy windows it is fitted to, LineWindowMs each
	// MeanGapMs is the windows' mean time per decision, and MeanClaims
	// their claims per decision: the rate the backlog's decisions went at,
	// and the claim load it was measured under.
	MeanGapMs  float64 `json:"mean_gap_ms"`
	MeanClaims float64 `json:"mean_claims"`
}

// Share is the line as a capacity: decide_per_s = 1 / BaseMs (rounded to
// 1/s) and claim_share = PerClaimMs (to 0.1 us); ok is false, and the
// model keeps the first wave's rate, when d is nil or either term is not
// positive.
func (d *Decisions) Share() (decidePerS float64, share time.Duration, ok bool) {
	if d == nil {
		return 0, 0, false
	}
	return lineShare(d.BaseMs, d.PerClaimMs, 1)
}

// DecisionsOf fits the decisions' line over the runs' busy windows
// (Decisions); nil when fewer than 3 windows, when every window held as
// many claims as every other, or when no window held a decision.
func DecisionsOf(runs []*measured.Run) *Decisions {
	var w windowCounts
	for _, r := range runs {
		_, arrivals, decisions := arrivalsAndDecisions(r)
		ends := make([]float64, 0, len(r.Claims))
		for _, c := range r.Claims {
			ends = append(ends, c.DoneMs)
		}
		slices.Sort(ends)
		// Backlogged: more requests had arrived by decision j-1 than the j
		// decisions made by then (an arrival at the same instant counts,
		// as in measureBacklog).
		busy := busySpans(decisions, func(j int) bool { return countIn(arrivals, math.Inf(-1), decisions[j-1]) > j })
		w.add(busy, decisions, ends)
	}
	base, per, perOwn, otherPerOwn, ok := w.line()
	if !ok {
		return nil
	}
	return &Decisions{BaseMs: base, PerClaimMs: per, Windows: len(w.own), MeanGapMs: perOwn, MeanClaims: otherPerOwn}
}

// busySpans are the stretches (ts[j-1], ts[j]] of consecutive gaps of the
// ascending times ts for which busy(j) holds, joined.
func busySpans(ts []float64, busy func(j int) bool) [][2]float64 {
	var spans [][2]float64
	for j := 1; j < len(ts); j++ {
		if !busy(j) {
			continue
		}
		if n := len(spans); n > 0 && spans[n-1][1] == ts[j-1] {
			spans[n-1][1] = ts[j]
		} else {
			spans = append(spans, [2]float64{ts[j-1], ts[j]})
		}
	}
	return spans
}

// windowCounts are, per window of LineWindowMs inside a stage's busy
// spans, the stage's own events and the other stage's, per ms.
type windowCounts struct{ own, other []float64 }

// add tiles each span from its start with whole windows, (t, t +
// LineWindowMs], and counts own and other (both ascending) in each.
func (w *windowCounts) add(spans [][2]float64, own, other []float64) {
	for _, s := range spans {
		for t := s[0]; t+LineWindowMs <= s[1]; t += LineWindowMs {
			w.own = append(w.own, float64(countIn(own, t, t+LineWindowMs))/LineWindowMs)
			w.other = append(w.other, float64(countIn(other, t, t+LineWindowMs))/LineWindowMs)
		}
	}
}

// line fits own/ms = a + b x other/ms and returns it as a stage's work:
// base = 1/a ms an event of its own, per = -b/a ms for each of the other
// stage's beside it, and the windows' mean ms per own event and other
// events per own event. ok is false with fewer than 3 windows, no
// variation in other, or no own event.
func (w *windowCounts) line() (base, per, perOwn, otherPerOwn float64, ok bool) {
	if len(w.own) < minSamples || stat.Variance(w.other, nil) == 0 {
		return 0, 0, 0, 0, false
	}
	meanOwn := stat.Mean(w.own, nil)
	if !(meanOwn > 0) {
		return 0, 0, 0, 0, false
	}
	a, b := stat.LinearRegression(w.other, w.own, nil, false)
	return 1 / a, -b / a, 1 / meanOwn, stat.Mean(w.other, nil) / meanOwn, true
}
