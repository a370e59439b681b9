package sim

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestWaitLineMatchesSlice: the run-length line counts what a plain slice
// of start times counts, whatever the mix of equal, evenly and unevenly
// spaced turns.
func TestWaitLineMatchesSlice(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 300 {
		var l waitLine
		var plain []time.Duration
		now, last := time.Duration(0), time.Duration(0)
		for range 2000 {
			if r.IntN(3) == 0 { // time passes
				now += time.Duration(r.IntN(40))
				l.advance(now)
				for len(plain) > 0 && plain[0] <= now {
					plain = plain[1:]
				}
				if l.len() != int64(len(plain)) {
					t.Fatalf("trial %d: at %v the line holds %d, want %d", trial, now, l.len(), len(plain))
				}
				continue
			}
			// A turn at or after the last one and after now: steps of 0, a
			// common 10 or anything.
			step := []time.Duration{0, 10, 10, 10, time.Duration(r.IntN(30))}[r.IntN(5)]
			last = max(last+step, now+1)
			l.add(last)
			plain = append(plain, last)
		}
	}
}

// TestWindowsDoubleExactly: counts added at random times into series
// bounded to a few windows equal a direct count at the final window,
// and a level series keeps the value at each coarse window's end.
func TestWindowsDoubleExactly(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		ws := windows{width: time.Duration(1 + r.IntN(100)), limit: 4 + r.IntN(20)}
		span := int64(ws.width) * int64(ws.limit)
		var counts, level windowSeries
		level.level = true
		ws.track(&counts)
		ws.track(&level)
		type sample struct {
			t time.Duration
			n int64
		}
		var all []sample
		var ends = map[time.Duration]int64{}
		for range 1 + r.IntN(300) {
			at := time.Duration(r.Int64N(span * int64(1+r.IntN(64))))
			n := int64(1 + r.IntN(5))
			counts.add(ws.index(at), n)
			all = append(all, sample{at, n})
			// A level is taken at a window end of the current width.
			end := (at/ws.width + 1) * ws.width
			level.add(ws.index(end-1), n-level.get(ws.index(end-1)))
			ends[end] = n
		}
		want := make([]int64, len(counts.v))
		for _, s := range all {
			want[int(s.t/ws.width)] += s.n
		}
		for i := range want {
			if counts.v[i] != want[i] {
				t.Fatalf("trial %d: window %d of %v holds %d, want %d", trial, i, ws.width, counts.v[i], want[i])
			}
		}
		if len(counts.v) > ws.limit || len(level.v) > ws.limit {
			t.Fatalf("trial %d: %d and %d windows, limit %d", trial, len(counts.v), len(level.v), ws.limit)
		}
		for i, v := range level.v {
			if w := ends[time.Duration(i+1)*ws.width]; v != w {
				t.Fatalf("trial %d: level at the end of window %d is %d, want %d", trial, i, v, w)
			}
		}
	}
}

func (s *windowSeries) get(w int) int64 {
	if w < len(s.v) {
		return s.v[w]
	}
	return 0
}
