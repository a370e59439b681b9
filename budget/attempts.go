package budget

import (
	"math"
	"time"

	"stormsim/policies"
	"stormsim/sim"
)

// MinAttempts is a lower bound on the attempts of one storm of s in which
// every client uses backoff b. Every client attempts at least once. In the
// core model (no failure or load model, clients that never give up) more
// can be said: admission lets at most B + R*t clients in by time t (the
// admission's WindowBound, with B one window's worth twice over for the
// windows' alignment), and a client not yet in tries again at least every
// D = b.MaxWait(retry_after) plus its timeout, from its first attempt,
// which comes by t0 = disconnect.at + initial_jitter, until it is admitted
// or the horizon H. The k-th client admitted waits at least
// min((k-B)/R, H) - t0, so the storm makes at least
//
//	integral over k in [0, N] of max(0, min((k-B)/R, H) - t0) / D  -  N
//
// attempts (a client's last interval is partial, hence the -N).
func MinAttempts(s *sim.Scenario, b *policies.Backoff) float64 {
	n := float64(s.Clients)
	if models(s) || b.Spec.MaxAttempts > 0 {
		return n
	}
	adm := s.Admission.New()
	h := s.EffectiveHorizon()
	r := adm.WindowBound(h) / h.Seconds()
	if math.IsInf(r, 0) || r <= 0 {
		return n
	}
	bias := 2 * adm.WindowBound(time.Nanosecond)
	t0 := (s.Disconnect.At + s.InitialJitter).Seconds()
	d := (b.MaxWait(s.Admission.RetryAfter) + b.Spec.Timeout).Seconds()
	waiting := waitIntegral(n, bias, r, t0, h.Seconds())
	return math.Max(n, waiting/d-n)
}

// waitIntegral is the integral over x in [0, n] of
// max(0, min((x-bias)/r, h) - t0): client-seconds spent waiting.
func waitIntegral(n, bias, r, t0, h float64) float64 {
	if h <= t0 {
		return 0
	}
	clamp := func(x float64) float64 { return math.Max(0, math.Min(x, n)) }
	a, c := clamp(bias+r*t0), clamp(bias+r*h)
	f := func(x float64) float64 { return (x-bias)*(x-bias)/(2*r) - t0*x }
	return f(c) - f(a) + (n-c)*(h-t0)
}
