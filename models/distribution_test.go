package models

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
)

// TestEmpiricalSample: quantiles 0, 10 ms, 30 ms at probabilities 0, 1/2,
// 1. u/2^64 is the probability: u = 2^62 (1/4) is halfway into the first
// segment, 5 ms; 2^63 (1/2) starts the second, 10 ms; 3*2^62 (3/4) is
// halfway into it, 20 ms; the largest u stays below 30 ms.
func TestEmpiricalSample(t *testing.T) {
	d := Distribution{Dist: "empirical", Points: []time.Duration{0, 10 * time.Millisecond, 30 * time.Millisecond}}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		u    uint64
		want time.Duration
	}{{0, 0}, {1 << 62, 5 * time.Millisecond}, {1 << 63, 10 * time.Millisecond}, {3 << 62, 20 * time.Millisecond},
		{^uint64(0), 30*time.Millisecond - 1}} {
		if got := d.Sample(c.u); got != c.want {
			t.Errorf("Sample(%#x) = %v, want %v", c.u, got, c.want)
		}
	}
	// Each half holds half the mass: (5 ms + 20 ms) / 2.
	if got := d.Mean(); got != 12500*time.Microsecond {
		t.Errorf("Mean = %v, want 12.5ms", got)
	}
	if got := d.Upper(); got != 30*time.Millisecond {
		t.Errorf("Upper = %v, want 30ms", got)
	}
	// Equal points: a step the draws cannot fall inside.
	flat := Distribution{Dist: "empirical", Points: []time.Duration{time.Second, time.Second}}
	if got := flat.Sample(12345); got != time.Second {
		t.Errorf("flat Sample = %v, want 1s", got)
	}
}

// TestEmpiricalValidate names the offending key.
func TestEmpiricalValidate(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		d    Distribution
		want string
	}{
		{Distribution{Dist: "empirical", Points: []time.Duration{ms}}, "points: must list 2 to 1001 quantiles (got 1)"},
		{Distribution{Dist: "empirical", Points: []time.Duration{2 * ms, ms}}, "points[1]: must be >= 0 and >= the point before it (got 1ms)"},
		{Distribution{Dist: "empirical", Points: []time.Duration{-ms, ms}}, "points[0]: must be >= 0 and >= the point before it (got -1ms)"},
		{Distribution{Dist: "uniform", Min: 0, Max: ms, Points: []time.Duration{0, ms}}, "points: apply to dist: empirical only (got uniform)"},
		{Distribution{Dist: "gamma"}, "dist: must be fixed, uniform, lognormal or empirical (got gamma)"},
	} {
		if err := c.d.Validate(); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("Validate(%+v) = %v, want %q", c.d, err, c.want)
		}
	}
}

// TestLognormalSampleIsGonumsQuantile: a lognormal sample is gonum's
// distuv.LogNormal quantile at p = (u>>11 + 1/2) / 2^53, rounded to the
// nanosecond and capped, validated or not.
func TestLognormalSampleIsGonumsQuantile(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, d := range []Distribution{
		{Dist: "lognormal", Median: 30 * time.Millisecond, Sigma: 0.5},
		{Dist: "lognormal", Median: 7 * time.Microsecond, Sigma: 2.5, Cap: time.Second},
		{Dist: "lognormal", Median: 1, Sigma: 0.1},
	} {
		raw := d
		if err := d.Validate(); err != nil {
			t.Fatal(err)
		}
		ln := distuv.LogNormal{Mu: math.Log(float64(d.Median)), Sigma: d.Sigma}
		for range 100_000 {
			u := r.Uint64()
			p := (float64(u>>11) + 0.5) / (1 << 53)
			want := min(time.Duration(math.Round(ln.Quantile(p))), d.Upper())
			if got := d.Sample(u); got != want {
				t.Fatalf("%+v: Sample(%#x) = %v, want %v", d, u, got, want)
			}
			if got := raw.Sample(u); got != want {
				t.Fatalf("%+v unvalidated: Sample(%#x) = %v, want %v", raw, u, got, want)
			}
		}
	}
}
