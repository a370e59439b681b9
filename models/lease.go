package models

import (
	"time"

	"stormsim/internal/param"
	"stormsim/policies/rng"
)

// MinLeasePeriod is the shortest lease loop period: below it renewals would
// dominate the database's write load for no gain in reclaim time.
const MinLeasePeriod = 100 * time.Millisecond

// LeasePeriod is how often a gateway renews its lease and sweeps:
// max(100ms, min(ping, lease/3)). A ping of 0 means no heartbeat limit.
func LeasePeriod(lease, ping time.Duration) time.Duration {
	p := lease / 3
	if ping > 0 {
		p = min(p, ping)
	}
	return max(MinLeasePeriod, p)
}

// ReclaimBound is the analytic window for the time from a gateway's death to
// the sweep that deletes its routes: the last renew happened less than renew
// before the death, the lease ends duration after it, and a sweep runs within
// sweep after expiry: [duration - renew, duration + sweep].
func ReclaimBound(duration, renew, sweep time.Duration) (lo, hi time.Duration) {
	return duration - renew, duration + sweep
}

// LeaseSpec is the gateways' liveness lease and the sweep that reclaims a
// dead gateway's routes.
type LeaseSpec struct {
	Duration   time.Duration `yaml:"duration"`    // lease length
	RenewEvery time.Duration `yaml:"renew_every"` // default LeasePeriod(duration, ping)
	SweepEvery time.Duration `yaml:"sweep_every"` // default renew_every (one loop does both)
	// Delivery is "presence" (default: routes give presence and kick
	// addresses) or "route_directed" (messages follow routes, so a stale
	// route is a black hole).
	Delivery Delivery `yaml:"delivery"`
}

// Delivery is how messages reach devices (LeaseSpec.Delivery).
type Delivery string

// The deliveries.
const (
	// DeliveryPresence: every gateway pushes to its own connections;
	// routes give presence and kick addresses.
	DeliveryPresence Delivery = "presence"
	// DeliveryRouteDirected: messages follow routes, so a stale route is
	// a black hole.
	DeliveryRouteDirected Delivery = "route_directed"
)

// Validate checks the spec and fills in defaults; ping is the heartbeat
// interval (0 if none).
func (l *LeaseSpec) Validate(ping time.Duration) error {
	if l.Duration <= 0 {
		return &param.Error{Key: "duration", Problem: "must be > 0", Got: l.Duration}
	}
	if l.RenewEvery < 0 || l.SweepEvery < 0 {
		return &param.Error{Key: "renew_every", Problem: "periods must be >= 0", Got: l.RenewEvery}
	}
	switch l.Delivery {
	case "":
		l.Delivery = DeliveryPresence
	case DeliveryPresence, DeliveryRouteDirected:
	default:
		return &param.Error{Key: "delivery", Problem: "must be presence or route_directed", Got: l.Delivery}
	}
	if l.RenewEvery == 0 {
		l.RenewEvery = LeasePeriod(l.Duration, ping)
	}
	if l.SweepEvery == 0 {
		l.SweepEvery = l.RenewEvery
	}
	if l.RenewEvery > l.Duration {
		return &param.Error{Key: "renew_every", Problem: "must be <= duration, or a live gateway's lease lapses", Got: l.RenewEvery}
	}
	return nil
}

// Reclaim is when the first surviving gateway's sweep deletes the routes of
// the gateway that died at t = 0. Its last renew happened at a uniformly
// random phase in (-renew, 0], so the lease expires at E = duration - phase;
// survivor g (1..survivors) sweeps at psi_g + k*sweep for every integer k,
// psi_g uniform in [0, sweep), and deletes at its first sweep strictly after
// E. The result lies in (duration - renew, duration + sweep].
func (l *LeaseSpec) Reclaim(seed uint64, survivors int) time.Duration {
	expiry := l.Duration - rng.UniformDuration(rng.Draw(seed, 0, 0, rng.StreamPhase), l.RenewEvery)
	best := time.Duration(-1)
	for g := 1; g <= max(survivors, 1); g++ {
		psi := rng.UniformDuration(rng.Draw(seed, uint64(g), 1, rng.StreamPhase), l.SweepEvery)
		k := floorDiv(expiry-psi, l.SweepEvery) + 1
		if at := psi + time.Duration(k)*l.SweepEvery; best < 0 || at < best {
			best = at
		}
	}
	return best
}

func floorDiv(a, b time.Duration) int64 {
	q := int64(a / b)
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
