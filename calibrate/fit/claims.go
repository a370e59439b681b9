package fit

import (
	"cmp"
	"errors"
	"slices"

	"stormsim/calibrate/measured"
)

// Claims is the survivor's claim work.
type Claims struct {
	// GapMs is the mean gap between consecutive admitted lines while a
	// backlog of claims existed (Gaps of them), AdmitPerS its inverse
	// rounded to 0.1/s: capacity.admit_per_s.
	GapMs     float64 `json:"gap_ms"`
	Gaps      int     `json:"gaps"`
	AdmitPerS float64 `json:"admit_per_s"`
}

// fitClaims measures the claim rate on the runs' claims: the gaps between
// a claim's admitted line and the next one's when the next was decided
// before the first's line (it waited: the gap is pure claim work, the
// queue never idle).
func fitClaims(runs []*measured.Run) (Claims, error) {
	var c Claims
	busy := 0.0
	for _, r := range runs {
		claims := slices.Clone(r.Claims)
		slices.SortFunc(claims, func(a, b measured.Claim) int { return cmp.Compare(a.DoneMs, b.DoneMs) })
		for i := 1; i < len(claims); i++ {
			if claims[i].DecidedMs < claims[i-1].DoneMs {
				busy += claims[i].DoneMs - claims[i-1].DoneMs
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
	return c, nil
}
