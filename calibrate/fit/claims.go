package fit

import (
	"cmp"
	"errors"
	"math"
	"slices"
	"time"

	"stormsim/calibrate/measured"
)

// Claims is the survivor's claim work.
type Claims struct {
	// GapMs is the mean gap between a claim's line and the previous one's
	// while a backlog of claims existed, over the useful claims (Gaps of
	// them; their admitted lines), AdmitPerS its inverse rounded to 0.1/s:
	// capacity.admit_per_s.
	GapMs     float64 `json:"gap_ms"`
	Gaps      int     `json:"gaps"`
	AdmitPerS float64 `json:"admit_per_s"`
	// WastedGapMs, WastedGaps and WastedPerS are the same over the claims
	// done after their client had gone (claim_wasted lines):
	// capacity.wasted_per_s, 0 when fewer than 3 waited.
	WastedGapMs float64 `json:"wasted_gap_ms,omitempty"`
	WastedGaps  int     `json:"wasted_gaps,omitempty"`
	WastedPerS  float64 `json:"wasted_per_s,omitempty"`
	// Contention is how the useful gaps grow with the handshakes the
	// survivor decided inside them; nil when fewer than 3 gaps, or when
	// every gap held as many decisions as every other.
	Contention *Contention `json:"contention,omitempty"`
}

// Contention is a least-squares line through the useful claims' gaps
// (Claims.GapMs's) against the decisions inside each gap: gap = BaseMs +
// PerDecisionMs x decisions. The survivor's claims slow while it decides,
// so the mean gap (admit_per_s) holds only for storms whose decisions
// overlap the claims as the fitted storm's did; the line holds for
// others. The model takes it when both terms are positive (Share):
// capacity.admit_per_s = 1 / BaseMs and capacity.decision_share =
// PerDecisionMs.
type Contention struct {
	BaseMs        float64 `json:"base_ms"`         // a gap with no decision inside it, ms
	PerDecisionMs float64 `json:"per_decision_ms"` // what each decision inside a gap adds to it, ms
	Windows       int     `json:"windows"`         // the busy windows it is fitted to, LineWindowMs each
	// MeanDecisions is the windows' decisions per claim: the decision
	// load the mean gap was measured under.
	MeanDecisions float64 `json:"mean_decisions"`
}

// Share is the line as a capacity: admit_per_s = 1 / BaseMs (rounded to
// 0.1/s) and decision_share = PerDecisionMs (to 0.1 us); ok is false,
// and the model keeps the mean gap's rate, when k is nil or either term is
// not positive (a line that says claims speed up beside decisions is
// noise, not a share).
func (k *Contention) Share() (admitPerS float64, share time.Duration, ok bool) {
	if k == nil {
		return 0, 0, false
	}
	return lineShare(k.BaseMs, k.PerDecisionMs, 0.1)
}

// lineShare is a stage's line, baseMs + perMs for each of the other
// stage's events, as a capacity: the rate 1000 / baseMs a second, rounded
// to rateStep, and the share perMs to 0.1 us; ok is false when either term
// is not positive.
func lineShare(baseMs, perMs, rateStep float64) (perS float64, share time.Duration, ok bool) {
	if !(baseMs > 0) || !(perMs > 0) {
		return 0, 0, false
	}
	share = time.Duration(math.Round(perMs*1e4)) * 100 * time.Nanosecond
	return roundTo(1000/baseMs, rateStep), share, share > 0
}

// ClaimsOf measures the claim rates on the runs' claims: the gap between a
// claim's line and the previous one's when it was decided before that line
// (it waited: the gap is pure claim work, the queue never idle), counted
// for the useful or the wasted claims by the later claim's kind. A wasted
// claim is followed by no upgrade, hello or session, so it may cost the
// gateway less.
func ClaimsOf(runs []*measured.Run) (Claims, error) {
	var c Claims
	busy, wastedBusy := 0.0, 0.0
	var w windowCounts
	for _, r := range runs {
		decisions := decisionTimes(r)
		claims := slices.Clone(r.Claims)
		slices.SortFunc(claims, func(a, b measured.Claim) int { return cmp.Compare(a.DoneMs, b.DoneMs) })
		ends := make([]float64, len(claims))
		for i, c := range claims {
			ends[i] = c.DoneMs
		}
		w.add(busySpans(ends, func(i int) bool { return claims[i].DecidedMs < claims[i-1].DoneMs }), ends, decisions)
		for i := 1; i < len(claims); i++ {
			if claims[i].DecidedMs >= claims[i-1].DoneMs {
				continue
			}
			gap := claims[i].DoneMs - claims[i-1].DoneMs
			if claims[i].Wasted {
				wastedBusy += gap
				c.WastedGaps++
			} else {
				busy += gap
				c.Gaps++
			}
		}
	}
	if c.Gaps < minSamples || busy <= 0 {
		return c, errors.New("capacity.admit_per_s: the survivor never had a backlog of route claims (fewer than 3 claims waited): " +
			"the storm must admit several handshakes at once (a larger admission.burst)")
	}
	c.GapMs = busy / float64(c.Gaps)
	c.AdmitPerS = roundTo(1000/c.GapMs, 0.1)
	if c.WastedGaps >= minSamples && wastedBusy > 0 {
		c.WastedGapMs = wastedBusy / float64(c.WastedGaps)
		c.WastedPerS = roundTo(1000/c.WastedGapMs, 0.1)
	}
	if base, per, _, perClaim, ok := w.line(); ok {
		c.Contention = &Contention{BaseMs: base, PerDecisionMs: per, Windows: len(w.own), MeanDecisions: perClaim}
	}
	return c, nil
}

// decisionTimes is when the survivor decided run r's handshakes, as its
// log says: every claim's decision (useful or wasted), every rejection's
// and every dropped handshake's, in ascending order, ms.
func decisionTimes(r *measured.Run) []float64 {
	ts := slices.Concat(r.RejectsMs, r.AbandonedMs)
	for _, c := range r.Claims {
		ts = append(ts, c.DecidedMs)
	}
	slices.Sort(ts)
	return ts
}

// countIn is how many of the ascending times ts lie in (from, to].
func countIn(ts []float64, from, to float64) int {
	lo, _ := slices.BinarySearch(ts, math.Nextafter(from, math.Inf(1)))
	hi, _ := slices.BinarySearch(ts, math.Nextafter(to, math.Inf(1)))
	return hi - lo
}
