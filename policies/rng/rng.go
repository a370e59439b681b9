// Package rng is stormsim's counter-based random number generator: every
// random number the simulator, its models and the real client use is a
// pure function of (seed, client, attempt, stream), with no state, so the
// simulator's engines and the real client make exactly the same draws
// whatever order they happen to evaluate them in.
package rng

import (
	"math/bits"
	"time"
)

// Stream separates independent uses of randomness for one client and attempt,
// so that adding a new random decision never shifts the existing ones.
type Stream uint64

// Streams used by the simulator, the models and the real client.
const (
	StreamBackoff     Stream = iota + 1 // the backoff delay after a failed attempt
	StreamInitial                       // the wait before the first attempt
	StreamDetection                     // when the client notices the failure
	StreamNetwork                       // handshake latency of an attempt
	StreamBalancer                      // which gateway a random balancer picks
	StreamGoaway                        // when a draining gateway tells the client
	StreamPhase                         // lease renew and sweep phases (client = gateway index)
	StreamServerTime                    // server time of an attempt
	StreamHealthCheck                   // a balancer's health-check phase
	StreamOutLeg                        // a measured request leg (network.out, first_out)
	StreamBackLeg                       // a measured answer leg (network.back, first_back)
	StreamHint                          // a uniform reconnect hint a goaway carries
	StreamDeployOrder                   // a deploy's random order of gateways (client = place)
	StreamGoawayLeg                     // a goaway's way to its client (network.goaway; attempt = the drain's round)
	StreamGoneLeg                       // a departure's way to its gateway (network.gone)
)

// SplitMix64 is the finaliser of Steele, Lea and Flood's SplitMix64
// generator: a bijective mix of the 64 input bits.
func SplitMix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Draw returns 64 uniformly distributed random bits that depend only on
// seed, client, attempt and stream: no state, no call order.
func Draw(seed, client, attempt uint64, stream Stream) uint64 {
	return DrawKeyed(StreamKey(seed, stream), client, attempt)
}

// StreamKey is the part of a draw that depends only on seed and stream, so
// a hot loop can compute it once: Draw(s, c, a, st) equals
// DrawKeyed(StreamKey(s, st), c, a).
func StreamKey(seed uint64, stream Stream) uint64 {
	return SplitMix64(seed ^ uint64(stream)*0xd1b54a32d192ed03)
}

// DrawKeyed is Draw with its stream key computed in advance.
func DrawKeyed(key, client, attempt uint64) uint64 {
	return SplitMix64(SplitMix64(key^client) ^ attempt*0xa0761d6478bd642f)
}

// UniformDuration maps the random bits u to a duration uniform on [0, n),
// using integer arithmetic only (the high word of u*n). It returns 0 for n <= 0.
func UniformDuration(u uint64, n time.Duration) time.Duration {
	if n <= 0 {
		return 0
	}
	hi, _ := bits.Mul64(u, uint64(n))
	return time.Duration(hi)
}

// Float64 maps u to a float64 uniform on [0, 1) with 53 bits of precision.
// Use it only off the event path (latency distributions, balancers).
func Float64(u uint64) float64 {
	return float64(u>>11) * (1.0 / (1 << 53))
}
