package calibrate

import (
	"errors"
	"math"
	"slices"
	"time"

	"gonum.org/v1/gonum/stat"

	"stormsim/models"
)

// FitMethod describes, for calibration.json and the README, how the model
// parameters are derived from what the real runs measured.
const FitMethod = "rtt: lognormal by log-moments (median exp(mean ln x), sigma sd(ln x), capped at the largest sample) " +
	"of the latency of rejected handshakes (429/503), which do no database work; " +
	"server_time: the same fit of admitted handshakes' latency minus the median rtt (floored at 0.1 ms); " +
	"reject_time: 0 (rejected handshakes do no database work, their whole latency is the rtt); " +
	"detection delay: the same fit of each client's time from the SIGKILL to its connection's end"

// minServerTime floors latency minus rtt: an admitted handshake faster than
// the median rejected one still did some work.
const minServerTime = 100 * time.Microsecond

// minSamples is the fewest latencies a distribution is fitted to.
const minSamples = 3

// Fit is the simulator's network and detection parameters measured on the
// real runs, with the observations they come from.
type Fit struct {
	Method           string               `json:"method"`
	RejectedSamples  int                  `json:"rejected_samples"`
	AdmittedSamples  int                  `json:"admitted_samples"`
	NoticeSamples    int                  `json:"notice_samples"`
	RejectedMs       Quantiles            `json:"rejected_handshake_ms"` // observed
	AdmittedMs       Quantiles            `json:"admitted_handshake_ms"` // observed
	NoticeMs         Quantiles            `json:"notice_ms"`             // observed
	Network          models.NetworkSpec   `json:"network"`
	Detection        models.DetectionSpec `json:"detection"`
	MedianRTTMs      float64              `json:"median_rtt_ms"`
	MeanServerTimeMs float64              `json:"mean_server_time_ms"` // of the fitted distribution (cap ignored)
}

// fitModel fits the network (rtt, server_time) and the detection delay to
// latencies in milliseconds: rejected and admitted handshakes (answered -
// sent) and notice delays (connection end - SIGKILL).
func fitModel(rejected, admitted, notice []float64) (Fit, error) {
	f := Fit{Method: FitMethod, RejectedSamples: len(rejected), AdmittedSamples: len(admitted), NoticeSamples: len(notice),
		RejectedMs: nearestRank(rejected), AdmittedMs: nearestRank(admitted), NoticeMs: nearestRank(notice)}
	if len(rejected) < minSamples || len(admitted) < minSamples {
		return f, errors.New("too few handshakes to fit the network: the storm needs at least 3 rejected and 3 admitted attempts (is admission limited?)")
	}
	f.Network.RTT = fitLognormal(rejected)
	rtt := stat.Quantile(0.5, stat.Empirical, slices.Sorted(slices.Values(rejected)), nil)
	f.MedianRTTMs = rtt
	server := make([]float64, len(admitted))
	for i, a := range admitted {
		server[i] = max(a-rtt, ms(minServerTime))
	}
	f.Network.ServerTime = fitLognormal(server)
	f.Network.RejectTime = &models.Distribution{Dist: "fixed"}
	f.MeanServerTimeMs = ms(f.Network.ServerTime.Mean())
	f.Detection = models.DetectionSpec{Kind: "reset"}
	if len(notice) >= minSamples {
		f.Detection.Delay = fitLognormal(notice)
	}
	return f, nil
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
