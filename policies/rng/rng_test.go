package rng

import (
	"testing"
	"time"
)

// TestSplitMix64KnownAnswers: the first three outputs of a SplitMix64
// generator seeded with 0, as published for the reference generator (Java's
// SplittableRandom(0).nextLong() is -2152535657050944081, the first). A
// generator's i-th output is the finaliser of i times the golden gamma.
func TestSplitMix64KnownAnswers(t *testing.T) {
	const gamma = 0x9e3779b97f4a7c15
	for i, want := range []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f} {
		if got := SplitMix64(uint64(i) * gamma); got != want {
			t.Errorf("output %d: %#x, want %#x", i+1, got, want)
		}
	}
}

// TestDrawKnownAnswers pins Draw to vectors computed by a separate
// implementation of its documented composition,
// SplitMix64(SplitMix64(SplitMix64(seed ^ stream*K1) ^ client) ^ attempt*K2),
// written in Python: the real client and every saved result depend on these
// exact bits. Each input changes the draw, and DrawKeyed with the stream's
// key gives the same bits.
func TestDrawKnownAnswers(t *testing.T) {
	for _, c := range []struct {
		seed, client, attempt uint64
		stream                Stream
		want                  uint64
	}{
		{0, 0, 0, StreamBackoff, 0x59b51f71b30beff7},
		{1, 2, 3, StreamBackoff, 0xbe41676ccbe71f3b},
		{1, 2, 3, StreamInitial, 0x6bc3a2aca0ffc36a},
		{42, 999_999, 7, StreamNetwork, 0x34c90bee465093ef},
		{1<<64 - 1, 1<<32 - 1, 1 << 40, Stream(12), 0x71e646ea2ea5ca29},
	} {
		if got := Draw(c.seed, c.client, c.attempt, c.stream); got != c.want {
			t.Errorf("Draw(%d, %d, %d, %d) = %#x, want %#x", c.seed, c.client, c.attempt, c.stream, got, c.want)
		}
		if got := DrawKeyed(StreamKey(c.seed, c.stream), c.client, c.attempt); got != c.want {
			t.Errorf("DrawKeyed(StreamKey(%d, %d), %d, %d) = %#x, want %#x", c.seed, c.stream, c.client, c.attempt, got, c.want)
		}
	}
}

// TestUniformDuration: the high word of u*n, uniform over [0, n).
func TestUniformDuration(t *testing.T) {
	for _, c := range []struct {
		u    uint64
		n    time.Duration
		want time.Duration
	}{{0, 10, 0}, {1 << 63, 10, 5}, {1<<64 - 1, 10, 9}, {1 << 62, 3 * time.Second, 750 * time.Millisecond}, {123, 0, 0}, {123, -5, 0}} {
		if got := UniformDuration(c.u, c.n); got != c.want {
			t.Errorf("UniformDuration(%#x, %v) = %v, want %v", c.u, c.n, got, c.want)
		}
	}
	// UniformDuration is uniform: 10 equal bins of 100k draws within 2%.
	var bins [10]int
	for i := uint64(0); i < 100_000; i++ {
		bins[UniformDuration(Draw(5, i, 1, StreamBackoff), 10)]++
	}
	for d, n := range bins {
		if n < 9_800 || n > 10_200 {
			t.Errorf("bin %d holds %d of 100000", d, n)
		}
	}
}
