package fit

import (
	"math"
	"testing"
	"time"

	"stormsim/calibrate/measured"
)

// TestDecisionsOfHandWorked: 302 requests sent at 0 (429s, none timed:
// the one-way time is 0), and 75 claims decided at -5 ms, before any
// request had arrived (no backlog). The survivor then decides at 0 and
// through (0, 75] ms, a backlog throughout: 125 decisions in the first
// 25 ms window, 75 in the second and 25 in the third, while 0, 25 and 50
// claims end in them. As rates, 5, 3 and 1 decisions/ms against 0, 1 and
// 2 claims/ms: decisions/ms = 5 - 2 x claims/ms exactly, a decision
// taking 0.2 ms and 2/5 = 0.4 ms for each claim ending beside it (25 =
// 0.2 x 75 + 0.4 x 25), over 3 windows, 1/3 ms a decision and 1/3 claims
// per decision.
func TestDecisionsOfHandWorked(t *testing.T) {
	hs := make([]measured.Handshake, 302)
	for i := range hs {
		hs[i].Status = 429
	}
	rejects := []float64{0}
	var claims []measured.Claim
	for k := 1; k <= 125; k++ {
		rejects = append(rejects, float64(k)/5)
	}
	for k := 1; k <= 75; k++ {
		rejects = append(rejects, 25+float64(k)/3)
	}
	for k := 1; k <= 25; k++ {
		rejects = append(rejects, 50+float64(k))
		claims = append(claims, measured.Claim{DecidedMs: -5, DoneMs: 25 + float64(k) - 0.5})
	}
	for k := 1; k <= 50; k++ {
		claims = append(claims, measured.Claim{DecidedMs: -5, DoneMs: 50 + (float64(k)-0.5)*0.5})
	}
	d := DecisionsOf([]*measured.Run{{Handshakes: hs, Claims: claims, RejectsMs: rejects}})
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if d == nil || !near(d.BaseMs, 0.2) || !near(d.PerClaimMs, 0.4) || d.Windows != 3 || !near(d.MeanGapMs, 1.0/3) || !near(d.MeanClaims, 1.0/3) {
		t.Fatalf("decisions = %+v; want base 0.2 ms, 0.4 ms a claim, 3 windows, 1/3 ms a decision at 1/3 claims", d)
	}
	if decide, share, ok := d.Share(); !ok || decide != 5000 || share != 400*time.Microsecond {
		t.Errorf("as a capacity: decide_per_s %v, claim_share %v, %v; want 5000/s and 0.4 ms", decide, share, ok)
	}
}

// TestDecisionsShareNeedsPositiveTerms: a line whose decisions speed up
// beside claims, or whose base is not positive, is not a share, and no
// line at all is none.
func TestDecisionsShareNeedsPositiveTerms(t *testing.T) {
	for _, d := range []*Decisions{nil, {BaseMs: 0.3, PerClaimMs: -0.1}, {BaseMs: -0.1, PerClaimMs: 0.8}, {BaseMs: 0.3, PerClaimMs: 0}} {
		if decide, share, ok := d.Share(); ok {
			t.Errorf("%+v: a share of decide_per_s %v, claim_share %v; want none", d, decide, share)
		}
	}
}
