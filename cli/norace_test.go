//go:build !race

package cli

// raceDetector reports whether the tests run with the race detector,
// which slows the engine about tenfold.
const raceDetector = false
