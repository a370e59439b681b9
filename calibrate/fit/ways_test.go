package fit

import (
	"math"
	"reflect"
	"testing"

	"stormsim/calibrate/measured"
)

// TestRetryLegsWaitOnce: six rejected retries (sent, out, lag ms): A 0, 1,
// 2; B 10, 2, 0; C 20, 3, 0; D 20.5, 6, 5; E 21, 9, 4; F 40, 3, 1, and a
// first attempt G sent at 20.8, decided at 30.8. The fastest one-way time
// is A's 1 ms, so each arrives at its send plus 1 ms, and each is decided
// at its send plus its out. A, B, C and F arrive with nothing ahead
// undecided (at F's 41 ms, six arrivals and six decisions before it): their
// ways are their outs, 1, 2, 3 and 3 ms. D arrives at 21.5 behind C
// (arrived 21, decided 23), E at 22 behind C, D and G: their outs waited
// too, so they take the calm ways in turn, 1 and 2 ms. Legs = lag + way:
// 3, 2, 3, 6, 6, 4 (taken whole they were 3, 2, 3, 11, 13, 4). The out
// leg is fitted to those (three admitted handshakes sent at 100 ms change
// nothing): median (3*2*3*6*6*4)^(1/6) = 2592^(1/6). With
// only A, D and E, D arrives with nothing ahead (A decided at 1 ms) and E
// behind D: two calm retries are too few to lend ways, 3, 11, 13.
func TestRetryLegsWaitOnce(t *testing.T) {
	retry := func(attempt int, sent, out, lag float64) measured.Handshake {
		h := legged(attempt, 429, out, out)
		h.SentMs, h.LagMs = sent, lag
		return h
	}
	hs := []measured.Handshake{retry(2, 0, 1, 2), retry(2, 10, 2, 0), retry(3, 20, 3, 0), retry(2, 20.5, 6, 5),
		retry(1, 20.8, 10, 0), retry(2, 21, 9, 4), retry(2, 40, 3, 1)}
	run := func(hs ...measured.Handshake) *measured.Run {
		r := &measured.Run{Handshakes: hs}
		for _, h := range hs {
			if h.Status != 429 {
				continue
			}
			r.RejectsMs = append(r.RejectsMs, h.SentMs+*h.OutMs)
		}
		return r
	}
	legs, calm := retryLegsOf(run(hs...))
	want := []retryLeg{{0, 3}, {10, 2}, {20, 3}, {20.5, 6}, {21, 6}, {40, 4}}
	if calm != 4 || !reflect.DeepEqual(legs, want) {
		t.Errorf("legs %v, %d calm; want %v, 4 calm", legs, calm, want)
	}
	admitted := legged(2, 101, 1, 10) // after them all: server times to fit, no effect on the legs
	gateway := 1.0
	admitted.SentMs, admitted.GatewayMs = 100, &gateway
	l, err := fitLegs([]*measured.Run{run(append(hs, admitted, admitted, admitted)...)})
	if err != nil {
		t.Fatal(err)
	}
	if wantMedian := durationMs(math.Pow(2592, 1.0/6)); l.Out.Median != wantMedian || l.Calm != 4 || l.Retries != 6 {
		t.Errorf("out %v, %d calm of %d; want median %v, 4 calm of 6", l.Out, l.Calm, l.Retries, wantMedian)
	}
	legs, calm = retryLegsOf(run(hs[0], hs[3], hs[5]))
	if want := []retryLeg{{0, 3}, {20.5, 11}, {21, 13}}; calm != 2 || !reflect.DeepEqual(legs, want) {
		t.Errorf("two calm retries: legs %v, %d calm; want %v, 2", legs, calm, want)
	}
}
