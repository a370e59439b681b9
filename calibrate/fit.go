package calibrate

import (
	"cmp"
	"errors"
	"math"
	"net/http"
	"slices"
	"time"

	"gonum.org/v1/gonum/stat"

	"stormsim/gateway/protocol"
	"stormsim/models"
)

// FitMethod describes, for calibration.json and the README, how the model
// parameters are derived from what the real runs measured.
const FitMethod = "capacity (decide: arrival, as cmd/gateway takes its admission token before any database work): " +
	"admit_per_s = 1 / the mean gap between consecutive admitted lines of gw-b while a backlog exists " +
	"(the later handshake decided before the earlier one's line: its gap is pure claim work, the queue never idle), " +
	"pooled over the runs; reject_per_s = 1 / the median gap between consecutive 429 decisions of gw-b " +
	"(they come in bursts, so the median gap is a back-to-back one); " +
	"every distribution is a lognormal fitted by log-moments (median exp(mean ln x), sigma sd(ln x), " +
	"capped at the largest sample); " +
	"rtt: the latency of rejected handshakes (429/503: no claim, no queue); reject_time: 0; " +
	"server_time: the residual of each admitted handshake not explained by the queue, " +
	"its latency minus its time at gw-b (decision to admitted line) minus the median rtt, floored at 0.1 ms; " +
	"detection delay: each client's start delay (first attempt sent - SIGKILL - its own initial wait), " +
	"each run's delays first scaled to the median of the runs' medians (every client sees the same crash at once: " +
	"a run's level is common to its clients, only the spread within a run is per client); " +
	"variants (reported, not used): the measured legs, out (send to gw-b's decision, its rejected line on the same " +
	"wall clock) and back (decision to answer) of rejected handshakes, first attempts and later ones apart, in place " +
	"of the rtt's halves, with server_time per admitted handshake whose decision is known: its latency minus its own out leg, " +
	"its time at gw-b and the median back leg, floored at 0.1 ms; the same with capacity.stall and the legs of retries for every attempt " +
	"(stall + retry legs: a first attempt's own out leg holds the stall); first_rtt and first_server_time fitted on first attempts alone; the capacity " +
	"deciding at the handshake's turn; the network alone fitted without a capacity (latency minus median rtt as server time); " +
	"capacity.stall (variant): per run, gw-b's first admission decision after the kill (the stall's end counted from the failure, " +
	"as the model counts it), fixed for one run, else uniform on [min, max] of the runs; its excess variant uses instead " +
	"that decision minus the earliest possible arrival (earliest first-attempt send + the run's fastest send-to-429-decision), floored at 0; " +
	"capacity.decide_per_s (variant, a decision stage before the claim queue; reject_per_s then 0): gw-b's decisions (admitted and 429) " +
	"divided by the time its backlog was non-empty, pooled over the runs; the backlog at t is the handshakes gw-b decided that " +
	"had arrived by t (send + the run's fastest send-to-429-decision) less its decisions by t, both on the shared wall clock; " +
	"with the stall variant the busy time is counted from gw-b's first decision on"

// minServerTime floors latency minus rtt: an admitted handshake faster than
// the median rejected one still did some work.
const minServerTime = 100 * time.Microsecond

// minSamples is the fewest latencies a distribution is fitted to.
const minSamples = 3

// Fit is the simulator's capacity, network and detection parameters
// measured on the real runs, with the observations they come from
// (milliseconds).
type Fit struct {
	Method            string    `json:"method"`
	FirstRejectedMs   Quantiles `json:"first_rejected_handshake_ms"` // first attempts answered 429/503
	RejectedMs        Quantiles `json:"rejected_handshake_ms"`       // later attempts answered 429/503
	FirstAdmittedMs   Quantiles `json:"first_admitted_handshake_ms"` // first attempts answered 101
	AdmittedMs        Quantiles `json:"admitted_handshake_ms"`       // later attempts answered 101
	AtGatewayMs       Quantiles `json:"admitted_at_gateway_ms"`      // admitted: decision to admitted line at gw-b
	ResidualMs        Quantiles `json:"admitted_residual_ms"`        // admitted: latency - time at gw-b - median rtt
	StartDelayMs      Quantiles `json:"start_delay_ms"`              // runs aligned
	FirstRejected     int       `json:"first_rejected_samples"`
	Rejected          int       `json:"rejected_samples"`
	Admitted          int       `json:"admitted_samples"`
	StartDelaySamples int       `json:"start_delay_samples"`
	// AdmitGapMs is the mean gap between consecutive admitted lines while a
	// backlog exists (AdmitGaps of them), RejectGapMs the median gap
	// between consecutive 429 decisions (RejectGaps of them).
	AdmitGapMs  float64 `json:"admit_gap_ms"`
	AdmitGaps   int     `json:"admit_gaps"`
	RejectGapMs float64 `json:"reject_gap_ms"`
	RejectGaps  int     `json:"reject_gaps"`
	// The legs of a handshake around gw-b's decision (Handshake.OutMs):
	// out from the send to the decision, back from the decision to the
	// answer; of rejected handshakes (FirstLegs and Legs of them), and for
	// comparison the out legs of admitted ones (placed by decisionsOf's
	// clock, so less certain).
	FirstOutMs         Quantiles `json:"first_rejected_out_ms"`
	OutMs              Quantiles `json:"rejected_out_ms"`
	FirstBackMs        Quantiles `json:"first_rejected_back_ms"`
	BackMs             Quantiles `json:"rejected_back_ms"`
	FirstAdmittedOutMs Quantiles `json:"first_admitted_out_ms"`
	AdmittedOutMs      Quantiles `json:"admitted_out_ms"`
	FirstLegs          int       `json:"first_rejected_leg_samples"`
	Legs               int       `json:"rejected_leg_samples"`
	// LegsResidualMs is, per admitted handshake whose decision is known,
	// its latency minus its own out leg, its time at gw-b and the median
	// back leg: the server time of the network with legs.
	LegsResidualMs Quantiles `json:"admitted_legs_residual_ms"`

	Capacity  *models.CapacitySpec `json:"capacity"` // nil: no backlog seen
	Network   models.NetworkSpec   `json:"network"`
	Detection models.DetectionSpec `json:"detection"`
	// NetworkWithFirst is Network with first_rtt and first_server_time
	// fitted on first attempts alone; NetworkOnly the network fitted
	// without a capacity (the whole admitted latency less the median rtt
	// as server time). Variants, compared in the report.
	NetworkWithFirst models.NetworkSpec `json:"network_with_first"`
	NetworkOnly      models.NetworkSpec `json:"network_only"`
	// NetworkWithLegs is Network with the measured out and back legs (and
	// first-attempt ones) in place of the rtt's halves: a variant.
	NetworkWithLegs models.NetworkSpec `json:"network_with_legs"`
	// The survivor's stall after the kill, per run (Stall): its end, gw-b's
	// first decision, and its excess over the earliest possible arrival
	// (ms); Stall fitted to the ends is capacity.stall in the variant
	// "calibrated + stall", StallExcess fitted to the excesses in
	// "calibrated + stall excess" (nil: no stall seen).
	StallEndsMs   []float64            `json:"stall_ends_ms"`
	StallExcessMs []float64            `json:"stall_excess_ms"`
	Stall         *models.Distribution `json:"stall"`
	StallExcess   *models.Distribution `json:"stall_excess"`
	// The survivor's decision rate while a backlog waits (Backlog), per
	// run and pooled: capacity.decide_per_s in the variant "calibrated +
	// decision backlog"; the after-stall rate, busy time counted from the
	// first decision, in "calibrated + stall + decision backlog" (0: no
	// backlog seen).
	DecidePerSRuns           []float64 `json:"decide_per_s_runs"`
	DecideAfterStallPerSRuns []float64 `json:"decide_after_stall_per_s_runs"`
	DecidePerS               float64   `json:"decide_per_s"`
	DecideAfterStallPerS     float64   `json:"decide_after_stall_per_s"`
}

// fitModel fits the capacity, the network and the detection delay to the
// real runs' handshakes, per run gw-b's claims and 429 decision times, and
// per run the clients' start delays (ms).
func fitModel(handshakes []Handshake, startsPerRun [][]float64, claimsPerRun [][]Claim, rejectsPerRun [][]float64) (Fit, error) {
	var firstRejected, rejected, firstAdmitted, admitted []float64
	for _, h := range handshakes {
		switch {
		case h.Status == http.StatusSwitchingProtocols && h.Attempt == 1:
			firstAdmitted = append(firstAdmitted, h.LatencyMs)
		case h.Status == http.StatusSwitchingProtocols:
			admitted = append(admitted, h.LatencyMs)
		case (h.Status == protocol.StatusTooManyRequests || h.Status == protocol.StatusServiceUnavailable) && h.Attempt == 1:
			firstRejected = append(firstRejected, h.LatencyMs)
		case h.Status == protocol.StatusTooManyRequests || h.Status == protocol.StatusServiceUnavailable:
			rejected = append(rejected, h.LatencyMs)
		}
	}
	starts := alignRuns(startsPerRun)
	allAdmitted := append(slices.Clone(firstAdmitted), admitted...)
	allRejected := append(slices.Clone(firstRejected), rejected...)
	f := Fit{Method: FitMethod, FirstRejectedMs: nearestRank(firstRejected), RejectedMs: nearestRank(rejected),
		FirstAdmittedMs: nearestRank(firstAdmitted), AdmittedMs: nearestRank(admitted), StartDelayMs: nearestRank(starts),
		FirstRejected: len(firstRejected), Rejected: len(rejected), Admitted: len(allAdmitted), StartDelaySamples: len(starts)}
	if len(allRejected) < minSamples || len(allAdmitted) < minSamples {
		return f, errors.New("too few handshakes to fit the network: the storm needs at least 3 rejected and 3 admitted attempts (is admission limited?)")
	}
	f.Capacity = fitCapacity(&f, claimsPerRun, rejectsPerRun)

	// The chosen network: one rtt, the residual server time.
	rtt := median(allRejected)
	f.Network.RTT = fitLognormal(allRejected)
	f.Network.RejectTime = &models.Distribution{Dist: "fixed"}
	var atGateway, residual, firstResidual []float64
	for _, h := range handshakes {
		if h.Status != http.StatusSwitchingProtocols || h.GatewayMs == nil {
			continue
		}
		atGateway = append(atGateway, *h.GatewayMs)
		r := max(h.LatencyMs-*h.GatewayMs-rtt, ms(minServerTime))
		residual = append(residual, r)
		if h.Attempt == 1 {
			firstResidual = append(firstResidual, r)
		}
	}
	f.AtGatewayMs, f.ResidualMs = nearestRank(atGateway), nearestRank(residual)
	if len(residual) < minSamples { // no gateway times: the whole latency less rtt
		residual = serverTimes(allAdmitted, rtt)
	}
	f.Network.ServerTime = fitLognormal(residual)

	// Variant: first attempts apart.
	f.NetworkWithFirst = f.Network
	if len(firstRejected) >= minSamples && len(rejected) >= minSamples {
		firstRTT := fitLognormal(firstRejected)
		f.NetworkWithFirst.RTT, f.NetworkWithFirst.FirstRTT = fitLognormal(rejected), &firstRTT
	}
	if len(firstResidual) >= minSamples {
		d := fitLognormal(firstResidual)
		f.NetworkWithFirst.FirstServerTime = &d
	}

	// Variant: the measured legs around the decision.
	f.NetworkWithLegs = f.Network
	fitLegs(&f, handshakes)

	// Variant: the network alone, no capacity (the earlier calibration).
	f.NetworkOnly = networkOnly(firstRejected, rejected, firstAdmitted, admitted)

	f.Detection = models.DetectionSpec{Kind: "reset"}
	if len(starts) >= minSamples {
		f.Detection.Delay = fitLognormal(starts)
	}
	return f, nil
}

// fitCapacity fits admit_per_s and reject_per_s (see FitMethod) and
// records the gaps in f; nil when no run shows a backlog of admissions.
func fitCapacity(f *Fit, claimsPerRun [][]Claim, rejectsPerRun [][]float64) *models.CapacitySpec {
	busy := 0.0
	for _, claims := range claimsPerRun {
		c := slices.Clone(claims)
		slices.SortFunc(c, func(a, b Claim) int { return cmp.Compare(a.DoneMs, b.DoneMs) })
		for i := 1; i < len(c); i++ {
			if c[i].DecidedMs < c[i-1].DoneMs { // waiting while the earlier one was served
				busy += c[i].DoneMs - c[i-1].DoneMs
				f.AdmitGaps++
			}
		}
	}
	var gaps []float64
	for _, rejects := range rejectsPerRun {
		r := slices.Sorted(slices.Values(rejects))
		for i := 1; i < len(r); i++ {
			gaps = append(gaps, r[i]-r[i-1])
		}
	}
	f.RejectGaps = len(gaps)
	if f.AdmitGaps < minSamples || busy <= 0 {
		return nil
	}
	f.AdmitGapMs = busy / float64(f.AdmitGaps)
	c := &models.CapacitySpec{AdmitPerS: roundTo(1000/f.AdmitGapMs, 0.1), Decide: models.DecideOnArrival}
	if len(gaps) >= minSamples {
		f.RejectGapMs = median(gaps)
		if f.RejectGapMs > 0 {
			c.RejectPerS = roundTo(1000/f.RejectGapMs, 1)
		}
	}
	return c
}

// fitLegs fits f.NetworkWithLegs's legs (see FitMethod) to the rejected
// handshakes whose decision is known, first attempts apart when both kinds
// have enough samples, and records the legs' quantiles in f.
func fitLegs(f *Fit, handshakes []Handshake) {
	var firstOut, out, firstBack, back, firstAdmittedOut, admittedOut []float64
	for _, h := range handshakes {
		switch {
		case h.OutMs == nil:
		case h.Status == http.StatusSwitchingProtocols && h.Attempt == 1:
			firstAdmittedOut = append(firstAdmittedOut, *h.OutMs)
		case h.Status == http.StatusSwitchingProtocols:
			admittedOut = append(admittedOut, *h.OutMs)
		case h.Attempt == 1:
			firstOut, firstBack = append(firstOut, *h.OutMs), append(firstBack, h.LatencyMs-*h.OutMs)
		default:
			out, back = append(out, *h.OutMs), append(back, h.LatencyMs-*h.OutMs)
		}
	}
	f.FirstOutMs, f.OutMs, f.FirstBackMs, f.BackMs = nearestRank(firstOut), nearestRank(out), nearestRank(firstBack), nearestRank(back)
	f.FirstAdmittedOutMs, f.AdmittedOutMs = nearestRank(firstAdmittedOut), nearestRank(admittedOut)
	f.FirstLegs, f.Legs = len(firstOut), len(out)
	if len(firstOut) < minSamples || len(out) < minSamples {
		out, back = append(out, firstOut...), append(back, firstBack...)
		firstOut = nil
	}
	if len(out) < minSamples {
		return
	}
	o, b := fitLognormal(out), fitLognormal(back)
	f.NetworkWithLegs.OutLeg, f.NetworkWithLegs.BackLeg = &o, &b
	// The server time left once each admitted handshake's own out leg is
	// known: its first attempts' stall is in that leg, not counted again.
	backMedian := median(back)
	var residual []float64
	for _, h := range handshakes {
		if h.Status == http.StatusSwitchingProtocols && h.OutMs != nil && h.GatewayMs != nil {
			residual = append(residual, max(h.LatencyMs-*h.OutMs-*h.GatewayMs-backMedian, ms(minServerTime)))
		}
	}
	f.LegsResidualMs = nearestRank(residual)
	if len(residual) >= minSamples {
		f.NetworkWithLegs.ServerTime = fitLognormal(residual)
	}
	if firstOut != nil {
		fo, fb := fitLognormal(firstOut), fitLognormal(firstBack)
		f.NetworkWithLegs.FirstOutLeg, f.NetworkWithLegs.FirstBackLeg = &fo, &fb
	}
}

// networkOnly is the network fitted as if latency had no queue in it:
// first_rtt and rtt from first and later rejections, server times as
// admitted latency minus the median rtt of their kind.
func networkOnly(firstRejected, rejected, firstAdmitted, admitted []float64) models.NetworkSpec {
	var n models.NetworkSpec
	if len(firstRejected) < minSamples || len(rejected) < minSamples {
		rejected, firstRejected = append(slices.Clone(rejected), firstRejected...), nil
	}
	n.RTT = fitLognormal(rejected)
	rtt, firstRTT := median(rejected), median(rejected)
	if firstRejected != nil {
		d := fitLognormal(firstRejected)
		n.FirstRTT, firstRTT = &d, median(firstRejected)
	}
	firstServer, server := serverTimes(firstAdmitted, firstRTT), serverTimes(admitted, rtt)
	if len(firstServer) < minSamples || len(server) < minSamples {
		server, firstServer = append(server, firstServer...), nil
	}
	n.ServerTime = fitLognormal(server)
	if firstServer != nil {
		d := fitLognormal(firstServer)
		n.FirstServerTime = &d
	}
	n.RejectTime = &models.Distribution{Dist: "fixed"}
	return n
}

// serverTimes is each latency minus rtt, floored at minServerTime.
func serverTimes(latencies []float64, rtt float64) []float64 {
	out := make([]float64, 0, len(latencies))
	for _, a := range latencies {
		out = append(out, max(a-rtt, ms(minServerTime)))
	}
	return out
}

// alignRuns pools the runs' samples after scaling each run by the median
// of the runs' medians over its own median: in the lognormal's log space, a
// shift of each run's level to the common one.
func alignRuns(runs [][]float64) []float64 {
	var medians []float64
	for _, r := range runs {
		if len(r) > 0 {
			medians = append(medians, median(r))
		}
	}
	if len(medians) == 0 {
		return nil
	}
	target := median(medians)
	var out []float64
	for _, r := range runs {
		if len(r) == 0 {
			continue
		}
		scale := 1.0
		if m := median(r); m > 0 {
			scale = target / m
		}
		for _, v := range r {
			out = append(out, v*scale)
		}
	}
	return out
}

// median is the empirical median (the lower middle value); 0 for none.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return stat.Quantile(0.5, stat.Empirical, slices.Sorted(slices.Values(v)), nil)
}

// fitLognormal fits a lognormal to positive samples (ms) by the moments of
// their logarithms: median exp(mean ln x), sigma the standard deviation of
// ln x, capped at the largest sample so the model never draws a latency
// longer than any seen. Samples that are (almost) all equal give a fixed
// distribution.
func fitLognormal(samples []float64) models.Distribution {
	logs := make([]float64, 0, len(samples))
	hi := 0.0
	for _, x := range samples {
		x = max(x, ms(time.Microsecond))
		logs = append(logs, math.Log(x))
		hi = max(hi, x)
	}
	mu, sigma := stat.MeanStdDev(logs, nil)
	median := durationMs(math.Exp(mu))
	if !(sigma >= 0.01) || median <= 0 {
		return models.Distribution{Dist: "fixed", Value: median}
	}
	return models.Distribution{Dist: "lognormal", Median: median, Sigma: roundTo(min(sigma, 5), 1e-4),
		Cap: max(durationMs(hi), median)}
}

// durationMs converts float milliseconds to a duration rounded to the
// microsecond, so that fitted parameters print readably.
func durationMs(v float64) time.Duration {
	return time.Duration(math.Round(v*1000)) * time.Microsecond
}

func roundTo(v, step float64) float64 { return math.Round(v/step) * step }
