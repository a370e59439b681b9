package lab

import (
	"math"
	"strings"
	"testing"

	"stormsim/calibrate/measured"
	"stormsim/gateway/storm"
)

// TestDrainCheckSaysFailedGoaways: a drain whose gateway could not write
// some goaways fails its check, and the check says how many, so a
// shortfall in goaway_sent has its cause beside it.
func TestDrainCheckSaysFailedGoaways(t *testing.T) {
	p := Plan{Clients: 4, AcceptBound: math.Inf(1)}
	r := &measured.Run{Run: 1, Drain: &measured.Drain{
		Summary:    storm.Summary{Goaways: 3, Closes: map[string]int64{"1001": 4}, AtHead: 4},
		GoawaySent: 3, GoawayFailed: 1, RoutesOnDest: 4,
	}}
	var got *measured.Check
	for _, c := range Checks(p, r) {
		if c.Name == "drain" {
			got = &c
		}
	}
	if got == nil {
		t.Fatal("no drain check")
	}
	if got.Pass || !strings.Contains(got.Observed, "goaway 3 (sent 3, failed to write 1)") {
		t.Errorf("drain check %+v: want a failure that says 1 goaway failed to write", *got)
	}
}
