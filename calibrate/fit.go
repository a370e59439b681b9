package calibrate

import (
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
const FitMethod = "every distribution is a lognormal fitted by log-moments (median exp(mean ln x), sigma sd(ln x), " +
	"capped at the largest sample); " +
	"rtt: the latency of rejected handshakes (429/503: no database work) after a client's first attempt; " +
	"first_rtt: the same for first attempts, which meet the gateway at its busiest (the whole population at once); " +
	"reject_time: 0, a rejected handshake's whole latency being its rtt; " +
	"server_time and first_server_time: admitted later and first attempts' latency minus the median rtt of their kind, " +
	"floored at 0.1 ms; " +
	"detection delay: each client's start delay (first attempt sent - SIGKILL - its own initial wait), " +
	"each run's delays first scaled to the median of the runs' medians (every client sees the same crash at once: " +
	"a run's level is common to its clients, only the spread within a run is per client)"

// minServerTime floors latency minus rtt: an admitted handshake faster than
// the median rejected one still did some work.
const minServerTime = 100 * time.Microsecond

// minSamples is the fewest latencies a distribution is fitted to.
const minSamples = 3

// Fit is the simulator's network and detection parameters measured on the
// real runs, with the observations they come from (milliseconds).
type Fit struct {
	Method            string               `json:"method"`
	FirstRejectedMs   Quantiles            `json:"first_rejected_handshake_ms"` // first attempts answered 429/503
	RejectedMs        Quantiles            `json:"rejected_handshake_ms"`       // later attempts answered 429/503
	FirstAdmittedMs   Quantiles            `json:"first_admitted_handshake_ms"` // first attempts answered 101
	AdmittedMs        Quantiles            `json:"admitted_handshake_ms"`       // later attempts answered 101
	StartDelayMs      Quantiles            `json:"start_delay_ms"`              // runs aligned
	FirstRejected     int                  `json:"first_rejected_samples"`
	Rejected          int                  `json:"rejected_samples"`
	Admitted          int                  `json:"admitted_samples"`
	StartDelaySamples int                  `json:"start_delay_samples"`
	Network           models.NetworkSpec   `json:"network"`
	Detection         models.DetectionSpec `json:"detection"`
}

// fitModel fits the network (first_rtt, rtt, server_time, reject_time) and
// the detection delay to the real runs' handshakes and, per run, the
// clients' start delays (ms).
func fitModel(handshakes []Handshake, startsPerRun [][]float64) (Fit, error) {
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
	f := Fit{Method: FitMethod, FirstRejectedMs: nearestRank(firstRejected), RejectedMs: nearestRank(rejected),
		FirstAdmittedMs: nearestRank(firstAdmitted), AdmittedMs: nearestRank(admitted), StartDelayMs: nearestRank(starts),
		FirstRejected: len(firstRejected), Rejected: len(rejected), Admitted: len(allAdmitted), StartDelaySamples: len(starts)}
	if len(rejected)+len(firstRejected) < minSamples || len(allAdmitted) < minSamples {
		return f, errors.New("too few handshakes to fit the network: the storm needs at least 3 rejected and 3 admitted attempts (is admission limited?)")
	}
	// With too few of one kind, both kinds share one rtt.
	if len(firstRejected) < minSamples || len(rejected) < minSamples {
		rejected = append(rejected, firstRejected...)
		firstRejected = nil
	}
	f.Network.RTT = fitLognormal(rejected)
	rtt, firstRTT := median(rejected), median(rejected)
	if firstRejected != nil {
		d := fitLognormal(firstRejected)
		f.Network.FirstRTT, firstRTT = &d, median(firstRejected)
	}
	firstServer := make([]float64, 0, len(firstAdmitted))
	for _, a := range firstAdmitted {
		firstServer = append(firstServer, max(a-firstRTT, ms(minServerTime)))
	}
	server := make([]float64, 0, len(admitted))
	for _, a := range admitted {
		server = append(server, max(a-rtt, ms(minServerTime)))
	}
	// With too few of one kind, both kinds share one server time.
	if len(firstServer) < minSamples || len(server) < minSamples {
		server, firstServer = append(server, firstServer...), nil
	}
	f.Network.ServerTime = fitLognormal(server)
	if firstServer != nil {
		d := fitLognormal(firstServer)
		f.Network.FirstServerTime = &d
	}
	f.Network.RejectTime = &models.Distribution{Dist: "fixed"}
	f.Detection = models.DetectionSpec{Kind: "reset"}
	if len(starts) >= minSamples {
		f.Detection.Delay = fitLognormal(starts)
	}
	return f, nil
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
