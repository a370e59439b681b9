package fit

import (
	"errors"
	"math"
	"time"

	"gonum.org/v1/gonum/stat"

	"stormsim/calibrate/measured"
	"stormsim/gateway/protocol"
	"stormsim/internal/quantile"
	"stormsim/models"
)

// minServerTime floors an admitted handshake's server time: one faster
// than the median way back still did some work.
const minServerTime = 100 * time.Microsecond

// Legs are a handshake's ways to and from the survivor's decision, from
// the rejected attempts whose decision is known (ms), and what an admitted
// one spends beyond them.
type Legs struct {
	// RetryOutMs is from when the retry was due to the survivor's decision
	// stage: its lateness plus its way, without its wait behind others
	// there (retryLegsOf).
	RetryOutMs  Quantiles `json:"retry_out_ms"`
	RetryBackMs Quantiles `json:"retry_back_ms"` // from the decision to the answer
	RetryLagMs  Quantiles `json:"retry_lag_ms"`  // how late the retries were sent against their clients' plan (in the out leg)
	FirstBackMs Quantiles `json:"first_back_ms"` // first attempts, decision to answer
	Retries     int       `json:"retries"`       // rejected retries with both legs
	// Calm is how many of them met an idle decision stage, their ways the
	// ones the rest are given; under minSamples, every out leg was taken
	// whole, waits included.
	Calm   int `json:"calm"`
	Firsts int `json:"firsts"` // rejected first attempts with both legs
	// ServerTimeMs is, per admitted handshake whose decision is known, its
	// latency less its own out leg, its time at the survivor and the
	// median back leg.
	ServerTimeMs Quantiles `json:"server_time_ms"`

	Out, Back, FirstBack, ServerTime models.Distribution `json:"-"` // the fitted network's
}

// fitLegs fits the legs of rejected retries (out and back), the back leg
// of rejected first attempts, and the admitted handshakes' server time.
func fitLegs(runs []*measured.Run) (Legs, error) {
	var l Legs
	var out, back, lags, firstBack []float64
	for _, r := range runs {
		for _, h := range r.Handshakes {
			if h.OutMs == nil || h.Status != protocol.StatusTooManyRequests {
				continue
			}
			if h.Attempt == 1 {
				firstBack = append(firstBack, h.LatencyMs-*h.OutMs)
				continue
			}
			back, lags = append(back, h.LatencyMs-*h.OutMs), append(lags, h.LagMs)
		}
		legs, calm := retryLegsOf(r)
		for _, x := range legs {
			out = append(out, x.legMs)
		}
		l.Calm += calm
	}
	l.RetryOutMs, l.RetryBackMs, l.RetryLagMs = measured.NearestRank(out), measured.NearestRank(back), measured.NearestRank(lags)
	l.FirstBackMs, l.Retries, l.Firsts = measured.NearestRank(firstBack), len(out), len(firstBack)
	if len(out) < minSamples {
		return l, errors.New("network: fewer than 3 rejected retries whose decision is known: the storm must reject retries (admission limited below the clients)")
	}
	l.Out, l.Back = fitLognormal(out), fitLognormal(back)
	l.FirstBack = l.Back
	if len(firstBack) >= minSamples {
		l.FirstBack = fitLognormal(firstBack)
	}
	backMedian := quantile.Median(back)
	var residual []float64
	for _, r := range runs {
		for _, h := range r.Handshakes {
			if h.Admitted() && h.OutMs != nil && h.GatewayMs != nil {
				residual = append(residual, max(h.LatencyMs-*h.OutMs-*h.GatewayMs-backMedian, ms(minServerTime)))
			}
		}
	}
	l.ServerTimeMs = measured.NearestRank(residual)
	if len(residual) < minSamples {
		return l, errors.New("network.server_time: fewer than 3 admitted handshakes whose decision and claim are known")
	}
	l.ServerTime = fitLognormal(residual)
	return l, nil
}

// fitLognormal fits a lognormal to positive samples (ms) by the moments of
// their logarithms: median exp(mean ln x), sigma the standard deviation of
// ln x, capped at the largest sample so the model never draws a delay
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
		return models.Distribution{Dist: models.DistFixed, Value: median}
	}
	return models.Distribution{Dist: models.DistLognormal, Median: median, Sigma: roundTo(min(sigma, 5), 1e-4),
		Cap: max(durationMs(hi), median)}
}

func roundTo(v, step float64) float64 { return math.Round(v/step) * step }

// ms converts d to float milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
