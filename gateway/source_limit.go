package gateway

import (
	"net"
	"net/netip"
	"sync"
	"time"

	"stormsim/models"
)

// maxSources bounds the source buckets held at once. When every slot holds
// a source that is still refilling, a new source goes unchecked (straight to
// the admission bucket, as without the pre-limit) rather than being refused:
// the pre-limit protects against a few loud sources, not against many.
const maxSources = 65536

// sourceLimiter is the per-source pre-limit: one models.TokenBucket per
// source address, fed the time since start like the admission bucket.
type sourceLimiter struct {
	rate  float64
	burst int
	start time.Time
	// refill is how long an untouched bucket takes to fill up again: after
	// that it is indistinguishable from a fresh one and can be dropped.
	refill time.Duration

	mu      sync.Mutex
	buckets map[netip.Prefix]*sourceBucket
}

type sourceBucket struct {
	bucket *models.TokenBucket
	last   time.Duration
}

func newSourceLimiter(rate float64, burst int, start time.Time) *sourceLimiter {
	if rate <= 0 {
		return nil
	}
	return &sourceLimiter{rate: rate, burst: burst, start: start,
		refill:  time.Duration(float64(burst) / rate * float64(time.Second)),
		buckets: map[netip.Prefix]*sourceBucket{}}
}

// sourceOf is the key of a remote address: the IPv4 address, or the IPv6
// /64 (one subscriber's usual allocation). ok is false if it cannot be
// parsed (then the pre-limit does not apply).
func sourceOf(remote string) (netip.Prefix, bool) {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		return netip.Prefix{}, false
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Prefix{}, false
	}
	addr = addr.Unmap()
	bits := 32
	if addr.Is6() {
		bits = 64
	}
	p, err := addr.Prefix(bits)
	return p, err == nil
}

// admit takes a token from remote's bucket.
func (l *sourceLimiter) admit(remote string) bool {
	src, ok := sourceOf(remote)
	if !ok {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Since(l.start)
	b := l.buckets[src]
	if b == nil {
		if len(l.buckets) >= maxSources && !l.pruneLocked(now) {
			return true
		}
		b = &sourceBucket{bucket: models.NewTokenBucket(l.rate, l.burst)}
		l.buckets[src] = b
	}
	b.last = now
	return b.bucket.Admit(now)
}

// pruneLocked drops the buckets that have refilled completely and reports
// whether it freed any.
func (l *sourceLimiter) pruneLocked(now time.Duration) bool {
	n := len(l.buckets)
	for src, b := range l.buckets {
		if now-b.last >= l.refill {
			delete(l.buckets, src)
		}
	}
	return len(l.buckets) < n
}

// prune is pruneLocked for the lease loop, which keeps the table small.
func (l *sourceLimiter) prune() {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.pruneLocked(time.Since(l.start))
	l.mu.Unlock()
}
