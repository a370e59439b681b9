package calibrate

import (
	"strings"
	"testing"

	"stormsim/config"
)

// TestCalibratedModelNeverFallsBackSilently: the checked model is fitted
// on each run alone; when run 2 cannot be (it has no rejected handshake),
// that is an error naming the run, not the pooled model under the label
// "calibrated".
func TestCalibratedModelNeverFallsBackSilently(t *testing.T) {
	s, err := config.Load("../configs/seed-lab.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	fittable := &RealRun{Run: 1, Handshakes: []Handshake{
		{Attempt: 1, Status: 429, LatencyMs: 2}, {Attempt: 2, Status: 429, LatencyMs: 3}, {Attempt: 3, Status: 429, LatencyMs: 4},
		{Attempt: 1, Status: 101, LatencyMs: 5}, {Attempt: 2, Status: 101, LatencyMs: 6}, {Attempt: 4, Status: 101, LatencyMs: 7}}}
	admittedOnly := &RealRun{Run: 2, Handshakes: []Handshake{
		{Attempt: 1, Status: 101, LatencyMs: 5}, {Attempt: 1, Status: 101, LatencyMs: 6}, {Attempt: 1, Status: 101, LatencyMs: 7}}}
	pooled := labelled{label: LabelPooled, s: s}
	m, err := calibratedModel(s, []*RealRun{fittable, admittedOnly}, pooled)
	if err == nil || !strings.Contains(err.Error(), "run 2") {
		t.Errorf("calibratedModel = %s with %d per-run scenarios, err %v; want an error naming run 2", m.label, len(m.perRun), err)
	}
	if m, err := calibratedModel(s, []*RealRun{fittable, fittable}, pooled); err != nil || len(m.perRun) != 2 || m.label != LabelCalibrated {
		t.Errorf("two fittable runs: %s with %d per-run scenarios, err %v", m.label, len(m.perRun), err)
	}
}
