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
const FitMethod = "the checked model (calibrated) is fitted on each real run alone, replication r taking run r mod K's fit, " +
	"so that its spread holds how much the lab changed from run to run; calibrated.yaml is the same model fitted once on " +
	"all runs pooled (variant calibrated, pooled); " +
	"capacity (decide: arrival, as cmd/gateway takes its admission token before any database work): " +
	"admit_per_s = 1 / the mean gap between consecutive admitted lines of gw-b while a backlog exists " +
	"(the later handshake decided before the earlier one's line: its gap is pure claim work, the queue never idle); " +
	"reject_per_s = 1 / the median gap between consecutive 429 decisions of gw-b " +
	"(they come in bursts, so the median gap is a back-to-back one); " +
	"detection: reset, its delay the empirical distribution (every percentile) of the clients' first arrivals: " +
	"from the SIGKILL to gw-b's decision on the client's first attempt, less the client's own initial wait " +
	"(on a loaded machine a client's detection and its first request's way to the decision are slow together, for every " +
	"client at once; measured as one delay they keep that); " +
	"network: a first attempt has no out leg of its own (its first arrival holds it) and the back leg of first attempts; " +
	"a retry the legs of rejected retries, out = from when the retry was due (the previous answer plus the wait then chosen; " +
	"the client's own lateness included, as the model's out leg starts when the wait ends) to gw-b's 429 decision (its log " +
	"line and the client share the wall clock), back = decision to answer; each leg a lognormal fitted by log-moments " +
	"(median exp(mean ln x), sigma sd(ln x), capped at the largest sample); reject_time: 0; " +
	"server_time: per admitted handshake whose decision is known, its latency minus its own out leg, its time at gw-b " +
	"(decision to admitted line) and the median back leg, floored at 0.1 ms; " +
	"shared_every: per run, for every pair of rejected retries the difference of their out legs; the upper edge of the " +
	"widest run of send-gap bins (2, 5, 10, 25, 50, 100, 250 ms), from the narrowest on and skipping bins without pairs, " +
	"in which the median difference is at most half the median over all pairs; pooled, the median over the runs; " +
	"variants (reported, not checked): the pooled fit; it without shared delays; the first calibration, one rtt (a lognormal " +
	"of rejected latencies, server_time the admitted latency minus its time at gw-b and the median rtt) and a lognormal " +
	"detection delay fitted to the start delays (first attempt sent - SIGKILL - own initial wait, each run's scaled to the " +
	"median of the runs' medians), alone, with capacity.stall (per run, gw-b's first decision after the kill; fixed for one " +
	"run, else uniform on [min, max]), or with a decision stage (capacity.decide_per_s: gw-b's decisions divided by the time " +
	"its backlog of arrived, undecided requests was non-empty, pooled over the runs; reject_per_s then 0); the measured legs " +
	"with first attempts' own; the stall with the legs of retries; the capacity deciding at the handshake's turn; the " +
	"capacity without a network; the network alone fitted without a capacity (latency minus median rtt as server time)"

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
	// The legs of a handshake around gw-b's decision (Handshake.OutMs), in
	// ms: out to the decision, from the send for a first attempt and from
	// when it was due for a retry (RetryLagMs), back from the decision to
	// the answer; of rejected handshakes (FirstLegs and Legs of them), and
	// for comparison the out legs of admitted ones from their send (placed
	// by decisionsOf's clock, so less certain).
	FirstOutMs         Quantiles `json:"first_rejected_out_ms"`
	OutMs              Quantiles `json:"rejected_out_ms"`
	FirstBackMs        Quantiles `json:"first_rejected_back_ms"`
	BackMs             Quantiles `json:"rejected_back_ms"`
	FirstAdmittedOutMs Quantiles `json:"first_admitted_out_ms"`
	AdmittedOutMs      Quantiles `json:"admitted_out_ms"`
	FirstLegs          int       `json:"first_rejected_leg_samples"`
	Legs               int       `json:"rejected_leg_samples"`
	// RetryLagMs is how late the rejected retries were sent against the
	// time their client planned (Handshake.lagMs); their out legs above
	// include it, as the model's out leg starts when the wait ends.
	RetryLagMs Quantiles `json:"retry_lag_ms"`
	// LegsResidualMs is, per admitted handshake whose decision is known,
	// its latency minus its own out leg, its time at gw-b and the median
	// back leg: the server time of the network with legs.
	LegsResidualMs Quantiles `json:"admitted_legs_residual_ms"`

	Capacity  *models.CapacitySpec `json:"capacity"` // nil: no backlog seen
	Network   models.NetworkSpec   `json:"network"`
	Detection models.DetectionSpec `json:"detection"`
	// FirstArrival is the empirical distribution of the real runs'
	// first-arrival delays, pooled (RealRun.FirstArrivalMs): the calibrated
	// detection delay (first attempts then have no out leg of their own);
	// nil with too few.
	FirstArrivalMs Quantiles            `json:"first_arrival_ms"` // ms
	FirstArrival   *models.Distribution `json:"first_arrival"`
	// SharedEvery is network.shared_every: the median over the runs of
	// each run's measurement (RealRun.SharedEveryMs, fitSharedEvery).
	SharedEvery       time.Duration `json:"shared_every"`
	SharedEveryMsRuns []float64     `json:"shared_every_ms_runs"` // each run's, ms
	// NetworkOnly is the network fitted without a capacity (the whole
	// admitted latency less the median rtt as server time): a variant.
	NetworkOnly models.NetworkSpec `json:"network_only"`
	// NetworkWithLegs is Network with the measured out and back legs (and
	// first-attempt ones) in place of the rtt's halves: a variant.
	NetworkWithLegs models.NetworkSpec `json:"network_with_legs"`
	// The survivor's stall after the kill, per run (Stall): its end, gw-b's
	// first decision, and its excess over the earliest possible arrival
	// (ms); Stall fitted to the ends is capacity.stall in the variants
	// LabelWithStall and LabelStallLegs; StallExcess, fitted to the
	// excesses, is reported only (nil: no stall seen).
	StallEndsMs   []float64            `json:"stall_ends_ms"`
	StallExcessMs []float64            `json:"stall_excess_ms"`
	Stall         *models.Distribution `json:"stall"`
	StallExcess   *models.Distribution `json:"stall_excess"`
	// The survivor's decision rate while a backlog waits (Backlog), per
	// run and pooled: capacity.decide_per_s in the variant
	// LabelWithBacklog; the after-stall rate, busy time counted from the
	// first decision, is reported only (0: no backlog seen).
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
	var atGateway, residual []float64
	for _, h := range handshakes {
		if h.Status != http.StatusSwitchingProtocols || h.GatewayMs == nil {
			continue
		}
		atGateway = append(atGateway, *h.GatewayMs)
		r := max(h.LatencyMs-*h.GatewayMs-rtt, ms(minServerTime))
		residual = append(residual, r)
	}
	f.AtGatewayMs, f.ResidualMs = nearestRank(atGateway), nearestRank(residual)
	if len(residual) < minSamples { // no gateway times: the whole latency less rtt
		residual = serverTimes(allAdmitted, rtt)
	}
	f.Network.ServerTime = fitLognormal(residual)

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
	var firstOut, out, firstBack, back, firstAdmittedOut, admittedOut, lags []float64
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
			out, back = append(out, *h.OutMs+h.lagMs), append(back, h.LatencyMs-*h.OutMs)
			lags = append(lags, h.lagMs)
		}
	}
	f.FirstOutMs, f.OutMs, f.FirstBackMs, f.BackMs = nearestRank(firstOut), nearestRank(out), nearestRank(firstBack), nearestRank(back)
	f.FirstAdmittedOutMs, f.AdmittedOutMs = nearestRank(firstAdmittedOut), nearestRank(admittedOut)
	f.FirstLegs, f.Legs = len(firstOut), len(out)
	f.RetryLagMs = nearestRank(lags)
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

// empiricalPoints is how many quantiles fitEmpirical keeps at most: every
// percentile.
const empiricalPoints = 101

// fitEmpirical is the empirical distribution of samples (ms, at least 2):
// n points, n the number of samples up to empiricalPoints, point i the
// sorted samples' quantile at i/(n-1) interpolated between order
// statistics (the usual h = p(m-1) rule for m samples), so with up to
// empiricalPoints samples the points are the samples themselves.
func fitEmpirical(samples []float64) models.Distribution {
	sorted := slices.Sorted(slices.Values(samples))
	n := min(len(sorted), empiricalPoints)
	points := make([]time.Duration, n)
	for i := range points {
		h := float64(i) * float64(len(sorted)-1) / float64(n-1)
		lo := min(int(h), len(sorted)-2)
		points[i] = durationMs(sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo]))
	}
	return models.Distribution{Dist: "empirical", Points: points}
}

// durationMs converts float milliseconds to a duration rounded to the
// microsecond, so that fitted parameters print readably.
func durationMs(v float64) time.Duration {
	return time.Duration(math.Round(v*1000)) * time.Microsecond
}

func roundTo(v, step float64) float64 { return math.Round(v/step) * step }

// fitFirstArrival pools the runs' first-arrival delays into f.FirstArrival
// (see RealRun.FirstArrivalMs).
func (f *Fit) fitFirstArrival(runs []*RealRun) {
	var all []float64
	for _, r := range runs {
		all = append(all, r.FirstArrivalMs...)
	}
	f.FirstArrivalMs, f.FirstArrival = nearestRank(all), nil
	if len(all) >= minSamples {
		d := fitEmpirical(all)
		f.FirstArrival = &d
	}
}

// fitShared sets f.SharedEvery from the runs' measurements.
func (f *Fit) fitShared(runs []*RealRun) {
	f.SharedEveryMsRuns = nil
	for _, r := range runs {
		f.SharedEveryMsRuns = append(f.SharedEveryMsRuns, r.SharedEveryMs)
	}
	f.SharedEvery = durationMs(median(f.SharedEveryMsRuns))
}
