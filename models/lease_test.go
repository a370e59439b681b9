package models

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestReclaimInsideBound: over many random (duration, renew, sweep, seed,
// survivors) the reclaim time lies in (duration - renew, duration + sweep].
func TestReclaimInsideBound(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 20_000; i++ {
		l := LeaseSpec{Duration: time.Duration(1 + r.Int64N(int64(10*time.Second)))}
		l.RenewEvery = time.Duration(1 + r.Int64N(int64(l.Duration)))
		l.SweepEvery = time.Duration(1 + r.Int64N(int64(3*time.Second)))
		got := l.Reclaim(r.Uint64(), 1+r.IntN(5))
		lo, hi := ReclaimBound(l.Duration, l.RenewEvery, l.SweepEvery)
		if got <= lo || got > hi {
			t.Fatalf("%+v: reclaim %v outside (%v, %v]", l, got, lo, hi)
		}
	}
}

// TestReclaimDistribution compares reclaim times over seeds with the closed
// form for one survivor: R = duration - phi + eta, phi ~ U[0, renew),
// eta ~ U(0, sweep], independent. Its CDF at x is
// (1/(renew*sweep)) * integral over phi in [0, renew) of clamp(x - duration + phi, 0, sweep),
// integrated numerically here; the Kolmogorov-Smirnov distance must stay
// under the 0.1% critical value 1.95/sqrt(n).
func TestReclaimDistribution(t *testing.T) {
	for _, l := range []LeaseSpec{
		{Duration: 1500 * time.Millisecond, RenewEvery: 500 * time.Millisecond, SweepEvery: 500 * time.Millisecond}, // the seed's lab
		{Duration: 3 * time.Second, RenewEvery: time.Second, SweepEvery: 250 * time.Millisecond},
	} {
		const n = 20_000
		samples := make([]float64, n)
		for i := range samples {
			samples[i] = float64(l.Reclaim(uint64(i), 1)) / float64(time.Millisecond)
		}
		slices.Sort(samples)
		a, b, d := ms(l.RenewEvery), ms(l.SweepEvery), ms(l.Duration)
		cdf := func(x float64) float64 {
			const steps = 2000
			sum := 0.0
			for k := 0; k < steps; k++ {
				phi := (float64(k) + 0.5) / steps * a
				sum += math.Min(math.Max(x-d+phi, 0), b)
			}
			return sum / steps / b
		}
		ks := 0.0
		for i, x := range samples {
			f := cdf(x)
			ks = math.Max(ks, math.Max(math.Abs(f-float64(i+1)/n), math.Abs(f-float64(i)/n)))
		}
		if crit := 1.95 / math.Sqrt(n); ks > crit {
			t.Errorf("%+v: KS distance %.4f above %.4f", l, ks, crit)
		}
		mean := 0.0
		for _, x := range samples {
			mean += x / n
		}
		if want := d - a/2 + b/2; math.Abs(mean-want) > 0.01*want {
			t.Errorf("%+v: mean reclaim %.1f ms, want %.1f ms", l, mean, want)
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// TestHeartbeatNoticeInsideWindow: heartbeat detection lands in
// [idle - ping, idle] for every client, and spreads over that window.
func TestHeartbeatNoticeInsideWindow(t *testing.T) {
	d := DetectionSpec{Kind: "heartbeat", Ping: 500 * time.Millisecond, Idle: 3 * time.Second}
	lo, hi := d.Idle, time.Duration(0)
	for c := uint64(0); c < 10_000; c++ {
		n := d.NoticeDelay(9, c)
		if n < d.Idle-d.Ping || n > d.Idle {
			t.Fatalf("client %d notices at %v, outside [%v, %v]", c, n, d.Idle-d.Ping, d.Idle)
		}
		lo, hi = min(lo, n), max(hi, n)
	}
	if lo > d.Idle-d.Ping+10*time.Millisecond || hi < d.Idle-10*time.Millisecond {
		t.Errorf("notices span only [%v, %v]", lo, hi)
	}
}

// TestDistributionSamples: fixed is exact, uniform stays in [min, max), and
// lognormal's median matches its parameter.
func TestDistributionSamples(t *testing.T) {
	fixed := Distribution{Value: 7 * time.Millisecond}
	uniform := Distribution{Dist: "uniform", Min: 5 * time.Millisecond, Max: 15 * time.Millisecond}
	logn := Distribution{Dist: "lognormal", Median: 20 * time.Millisecond, Sigma: 0.5}
	var below int
	const n = 20_000
	for i := uint64(0); i < n; i++ {
		u := testBits(i)
		if got := fixed.Sample(u); got != 7*time.Millisecond {
			t.Fatalf("fixed sample %v", got)
		}
		if got := uniform.Sample(u); got < uniform.Min || got >= uniform.Max {
			t.Fatalf("uniform sample %v outside [5ms, 15ms)", got)
		}
		if logn.Sample(u) < logn.Median {
			below++
		}
	}
	if frac := float64(below) / n; math.Abs(frac-0.5) > 0.015 {
		t.Errorf("lognormal: %.3f of samples below the median, want 0.5", frac)
	}
}
