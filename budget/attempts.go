package budget

import (
	"math"
	"time"

	"stormsim/models"
	"stormsim/policies"
	"stormsim/sim"
)

// MinAttempts is a lower bound on the attempts that reach a gateway before
// the horizon in one storm of s in which every client uses backoff b: the
// attempts the engine processes. It holds for every model.
//
// Every client attempts at least once when its first attempt surely comes
// before the horizon H, by t0 (disconnect.at + initial_jitter + the
// longest notice or goaway + the longest trip out). Then, unless clients
// give up (max_attempts), a client not yet connected tries again at least
// every D: the longest backoff (b.MaxWait of the Retry-After) plus its
// timeout plus the longest round trip; without a timeout a handshake may
// wait in a capacity queue for ever, so that with a capacity D is
// bounded only with a timeout. And clients connect no faster than B + R*t
// by time t: R is, per gateway (every gateway of a pool counted), the
// smaller of admission's rate (its WindowBound, B one window's worth twice
// over for the windows' alignment) and a capacity's admit_per_s (B one
// handshake in service each). So the k-th client to connect waits at
// least min((k-B)/R, H) - t0, and a storm makes at least
//
//	integral over k in [0, N] of max(0, min((k-B)/R, H) - t0) / D  -  N
//
// attempts (a client's last interval is partial, hence the -N).
func MinAttempts(s *sim.Scenario, b *policies.Backoff) float64 {
	h := s.EffectiveHorizon()
	t0 := latestFirstArrival(s)
	if t0 >= h {
		return 0 // some clients may never attempt before the horizon
	}
	n := float64(s.Clients)
	b = stormBackoff(s, b)
	if b.Spec.MaxAttempts > 0 {
		return n
	}
	d := b.MaxWait(s.Admission.RetryAfter) + b.Spec.Timeout
	if s.Network != nil {
		d += 2 * s.Network.MaxRoundTrip()
	}
	if s.Capacity != nil && b.Spec.Timeout == 0 || d <= 0 {
		return n
	}
	r, bias := connectBound(s, h)
	if math.IsInf(r, 0) || r <= 0 {
		return n
	}
	waiting := waitIntegral(n, bias, r, t0.Seconds(), h.Seconds())
	return math.Max(n, waiting/d.Seconds()-n)
}

// stormBackoff is the backoff the storm's clients use: a planned drain's
// drain_policy replaces the listed one.
func stormBackoff(s *sim.Scenario, b *policies.Backoff) *policies.Backoff {
	if s.Failure != nil && s.Failure.Kind == models.FailureDrain && s.DrainPolicy != nil {
		if d, err := policies.New(*s.DrainPolicy); err == nil {
			return d
		}
	}
	return b
}

// latestFirstArrival bounds when the last client's first attempt reaches
// a gateway.
func latestFirstArrival(s *sim.Scenario) time.Duration {
	t := s.Disconnect.At + s.InitialJitter
	switch {
	case s.Failure != nil && s.Failure.Kind == models.FailureDrain:
		t += s.Failure.Grace
	case s.Detection != nil && s.Detection.Kind == models.DetectionHeartbeat:
		t += s.Detection.Idle
	case s.Detection != nil:
		t += s.Detection.Delay.Upper()
	}
	if s.Network != nil {
		t += s.Network.MaxRoundTrip()
	}
	return t
}

// connectBound is the rate R (per second) and the head start B (clients)
// of the bound B + R*t on the clients connected by time t, over a horizon
// h.
func connectBound(s *sim.Scenario, h time.Duration) (r, bias float64) {
	spec := s.Admission
	gateways := 1.0
	if s.Gateways != nil {
		gateways = float64(s.Gateways.Count)
		if s.Gateways.Admission != nil {
			spec = *s.Gateways.Admission
		}
	}
	adm := spec.New()
	r, bias = adm.WindowBound(h)/h.Seconds(), 2*adm.WindowBound(time.Nanosecond)
	if c := s.Capacity; c != nil && c.AdmitPerS > 0 && (math.IsInf(r, 0) || c.AdmitPerS < r) {
		r, bias = c.AdmitPerS, 1
	}
	return gateways * r, gateways * bias
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
