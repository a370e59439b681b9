package models

import "time"

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
