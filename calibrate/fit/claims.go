package fit

import (
	"cmp"
	"errors"
	"slices"

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
	for _, r := range runs {
		claims := slices.Clone(r.Claims)
		slices.SortFunc(claims, func(a, b measured.Claim) int { return cmp.Compare(a.DoneMs, b.DoneMs) })
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
	return c, nil
}
