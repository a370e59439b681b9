package report

import (
	"fmt"
	"math"
	"strings"
	"time"

	"stormsim/calibrate/fit"
)

// Sizing is what a calibration measured on this machine before its storm
// and what it chose from that (calibrate.Options.Size): a lab whose
// outcome depends on how fast the survivor claims is sized to the claim
// rate of the hour it runs in, not of the day its config was written.
type Sizing struct {
	// WarmupClients reconnected in the warm-up: the storm as written, with
	// no handshake timeout and no bucket, so that every claim is useful
	// and they queue, cut at 3 s when it has a horizon; WarmupClaimsPerS
	// is the survivor's claim rate there (fit.ClaimsOf), from WarmupGaps
	// backlogged claims.
	WarmupClients    int     `json:"warmup_clients"`
	WarmupClaimsPerS float64 `json:"warmup_claims_per_s"`
	WarmupGaps       int     `json:"warmup_gaps"`
	// WarmupDecidePerS is the survivor's decision rate in the warm-up, as
	// a fit measures it (fit.FirstWave.DecidePerS), handshakes a second; 0
	// when its first wave could not be timed. The hour moves it as it
	// moves the claims (2,000 to 8,200/s at 1,000 clients on one kind of
	// machine), and a decision stage slower than the hour's holds the
	// handshakes past their timeout.
	WarmupDecidePerS float64 `json:"warmup_decide_per_s,omitempty"`
	// WarmupContention is the warm-up's claims against the decisions
	// beside them (fit.Claims.Contention); nil when it could not be
	// fitted. The prediction claims by it (Claims).
	WarmupContention *fit.Contention `json:"warmup_contention,omitempty"`
	// WarmupDecisions is the warm-up's decisions against the claims
	// ending beside them (fit.Decisions); nil when it could not be
	// fitted. The prediction decides by it (Decide).
	WarmupDecisions *fit.Decisions `json:"warmup_decisions,omitempty"`
	// QueueOverTimeout is the rule for the clients: the first wave's
	// claims last this many handshake timeouts at the measured rate,
	// clients = ceil(QueueOverTimeout x timeout x rate); 0: as written.
	QueueOverTimeout float64 `json:"queue_over_timeout,omitempty"`
	TimeoutMs        float64 `json:"timeout_ms,omitempty"` // the policy's handshake timeout
	// BucketFraction is the rule for a token bucket's rate: this fraction
	// of the measured rate; 0: as written.
	BucketFraction float64 `json:"bucket_fraction,omitempty"`
	// Clients and BucketPerS are what was chosen (BucketPerS 0: no
	// bucket); WrittenClients and WrittenBucketPerS what the config said.
	Clients           int     `json:"clients"`
	BucketPerS        float64 `json:"bucket_per_s,omitempty"`
	WrittenClients    int     `json:"written_clients"`
	WrittenBucketPerS float64 `json:"written_bucket_per_s,omitempty"`
	// WarmupDisturbed: other work disturbed every warm-up tried (its rate
	// measured that work too); the storm is sized on the last all the
	// same, and the summary says so.
	WarmupDisturbed bool `json:"warmup_disturbed,omitempty"`
	// FirstWarmupClients and FirstWarmupClaimsPerS are the first
	// warm-up's, at the written count, when the count it chose was more
	// than a tenth from it: the storm was then warmed up again at that
	// count (the Warmup fields above) and sized on the second, the
	// survivor's claim rate depending on the clients it holds. 0: one
	// warm-up.
	FirstWarmupClients    int     `json:"first_warmup_clients,omitempty"`
	FirstWarmupClaimsPerS float64 `json:"first_warmup_claims_per_s,omitempty"`
}

// Claims is how the storm's prediction claims, given the decision share
// of the model it predicts with (capacity.decision_share, fitted on
// another storm): that share, and admit_per_s from the warm-up's mean
// claim gap less the share of the decisions inside one on the average,
// 1 / (1/WarmupClaimsPerS - share x WarmupContention.MeanDecisions),
// rounded to 0.1/s. The share is the gateway's, fitted on a storm with
// decisions of every kind beside its claims; the hour's speed is the
// warm-up's, whose decisions come mostly at its opening. With no share,
// no line in the warm-up or a base that is not positive, the warm-up's
// mean rate and no share.
func (z *Sizing) Claims(share time.Duration) (admitPerS float64, withShare time.Duration) {
	if k := z.WarmupContention; share > 0 && k != nil && z.WarmupClaimsPerS > 0 {
		baseMs := 1000/z.WarmupClaimsPerS - float64(share)/float64(time.Millisecond)*k.MeanDecisions
		if baseMs > 0 {
			return math.Round(10000/baseMs) / 10, share
		}
	}
	return z.WarmupClaimsPerS, 0
}

// Decide is how the storm's prediction decides, given the claim share of
// the model it predicts with (capacity.claim_share, fitted on another
// storm), as Claims is for the claims: that share, and decide_per_s from
// the warm-up's mean backlogged decision gap less the share of the claims
// ending inside one on the average, 1 / (WarmupDecisions.MeanGapMs - share
// x WarmupDecisions.MeanClaims), rounded to 1/s. With no share, no line in
// the warm-up or a base that is not positive, the warm-up's first-wave
// rate (WarmupDecidePerS) and no share; 0 when that too is unknown.
func (z *Sizing) Decide(share time.Duration) (decidePerS float64, withShare time.Duration) {
	if d := z.WarmupDecisions; share > 0 && d != nil {
		baseMs := d.MeanGapMs - float64(share)/float64(time.Millisecond)*d.MeanClaims
		if baseMs > 0 {
			return math.Round(1000 / baseMs), share
		}
	}
	return z.WarmupDecidePerS, 0
}

// Line says in one line what was measured and what was chosen.
func (z *Sizing) Line() string {
	var chose []string
	if z.QueueOverTimeout > 0 {
		chose = append(chose, fmt.Sprintf("%d clients (written %d: %g x the %.0f ms timeout of claims)", z.Clients, z.WrittenClients, z.QueueOverTimeout, z.TimeoutMs))
	}
	if z.BucketFraction > 0 {
		chose = append(chose, fmt.Sprintf("a bucket of %.1f/s (written %.1f/s: %g x the claim rate)", z.BucketPerS, z.WrittenBucketPerS, z.BucketFraction))
	}
	disturbed := ""
	if z.WarmupDisturbed {
		disturbed = ", DISTURBED by other work"
	}
	first := ""
	if z.FirstWarmupClients > 0 {
		first = fmt.Sprintf("a warm-up of %d clients claimed %.0f/s; at the count it chose, ", z.FirstWarmupClients, z.FirstWarmupClaimsPerS)
	}
	decided := ""
	if z.WarmupDecidePerS > 0 {
		decided = fmt.Sprintf(" and decided %.0f/s", z.WarmupDecidePerS)
	}
	if k := z.WarmupContention; k != nil {
		decided += fmt.Sprintf(", a claim taking %s + %s a decision beside it", fmtMs(k.BaseMs), fmtMs(k.PerDecisionMs))
	}
	if d := z.WarmupDecisions; d != nil {
		decided += fmt.Sprintf(", a backlogged decision %s + %s a claim ending beside it", fmtMs(d.BaseMs), fmtMs(d.PerClaimMs))
	}
	return fmt.Sprintf("sized to this machine: %sa warm-up of %d clients claimed %.0f/s (%d gaps%s)%s; chose %s",
		first, z.WarmupClients, z.WarmupClaimsPerS, z.WarmupGaps, disturbed, decided, strings.Join(chose, " and "))
}
