package lab

import (
	"reflect"
	"testing"

	"stormsim/calibrate/measured"
	"stormsim/gateway/storm"
)

// TestOutcomeOf judges storms cut at a 1000 ms horizon (windows of 250 ms,
// the tail [900, 1000) ms) by hand.
func TestOutcomeOf(t *testing.T) {
	crash := storm.Summary{Reconnected: 2, TimedOut: 7, ByStatus: map[string]int64{"503": 3}}
	useful := []measured.Claim{{DecidedMs: 0, DoneMs: 100}, {DecidedMs: 0, DoneMs: 200}}
	// Claims in hand over [900, 920), [900, 960) and [950, 1000) (the last
	// done after the horizon: busy to it, not counted): the tail is covered,
	// and its two claims done are both wasted.
	busyTail := append(append([]measured.Claim{}, useful...),
		measured.Claim{DecidedMs: 850, DoneMs: 920, Wasted: true},
		measured.Claim{DecidedMs: 880, DoneMs: 960, Wasted: true},
		measured.Claim{DecidedMs: 950, DoneMs: 1010, Wasted: true})
	got := outcomeOf(crash, busyTail, []float64{10, 1000}, 1000, 250)
	want := &measured.Outcome{Outcome: "metastable", Metastable: true, HorizonMs: 1000, Connected: 2, TimedOut: 7, Shed: 3,
		Useful: 2, Wasted: 2, Skipped: 1, TailBusy: 1, TailUseful: 0,
		GoodputSeries: []int64{2, 0, 0, 0}, WastedSeries: []int64{0, 0, 0, 2}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("busy tail:\n got %+v\nwant %+v", got, want)
	}

	// Idle from 940 on: busy 40 % of the tail, so not metastable.
	idleTail := append(append([]measured.Claim{}, useful...),
		measured.Claim{DecidedMs: 850, DoneMs: 920, Wasted: true},
		measured.Claim{DecidedMs: 880, DoneMs: 940, Wasted: true})
	if got := outcomeOf(crash, idleTail, nil, 1000, 250); got.Outcome != "unfinished" || got.TailBusy != 0.4 || got.Metastable {
		t.Errorf("idle tail: %+v, want unfinished with tail_busy 0.4", got)
	}

	// A useful claim in the tail: 1 of 3, not under 10 %.
	mixed := append(append([]measured.Claim{}, busyTail...), measured.Claim{DecidedMs: 800, DoneMs: 990})
	if got := outcomeOf(crash, mixed, nil, 1000, 250); got.Outcome != "unfinished" || got.TailUseful != 1.0/3 {
		t.Errorf("useful tail: %+v, want unfinished with tail_useful 1/3", got)
	}

	back := crash
	back.AllReconnected = true
	if got := outcomeOf(back, busyTail, nil, 1000, 250); got.Outcome != "converged" || !got.Converged || got.Metastable {
		t.Errorf("all back: %+v, want converged", got)
	}
}
