package calibrate

import (
	"reflect"
	"testing"
	"time"

	"stormsim/config"
	"stormsim/models"
)

// TestMeasureStall: first attempts sent at 20 and 35 ms after the origin,
// the run's fastest 429 reached its decision 2 ms after its send, so the
// earliest arrival is 22 ms; gw-b's first decision is the earliest of its
// claims and 429s.
func TestMeasureStall(t *testing.T) {
	origin := time.Unix(1000, 0)
	at := func(msAfter float64) time.Time { return origin.Add(time.Duration(msAfter * float64(time.Millisecond))) }
	out := func(v float64) *float64 { return &v }
	hs := []Handshake{
		{Attempt: 1, Status: 101, sent: at(35)},
		{Attempt: 1, Status: 429, sent: at(20), OutMs: out(130)},
		{Attempt: 2, Status: 429, sent: at(400), OutMs: out(2)},
		{Attempt: 2, Status: 101, sent: at(10), OutMs: out(0.5)}, // an admitted out leg is not a 429's: ignored
	}
	for _, c := range []struct {
		name    string
		claims  []Claim
		rejects []float64
		want    Stall
		ok      bool
	}{
		{"claim first", []Claim{{DecidedMs: 150}, {DecidedMs: 160}}, []float64{151}, Stall{150, 22, 128}, true},
		{"429 first", []Claim{{DecidedMs: 150}}, []float64{140}, Stall{140, 22, 118}, true},
		{"no stall", []Claim{{DecidedMs: 21}}, nil, Stall{21, 22, 0}, true},
		{"no decisions", nil, nil, Stall{}, false},
	} {
		got, ok := measureStall(hs, c.claims, c.rejects, origin)
		if ok != c.ok || got != c.want {
			t.Errorf("%s: measureStall = %+v, %v; want %+v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
	if _, ok := measureStall(hs[2:3], []Claim{{DecidedMs: 5}}, nil, origin); ok {
		t.Error("no first attempt: want ok false")
	}
}

// TestFitStall: one run gives a fixed stall, several a uniform over their
// range, all zero none.
func TestFitStall(t *testing.T) {
	for _, c := range []struct {
		name string
		ends []float64
		want *models.Distribution
	}{
		{"none", nil, nil},
		{"zero", []float64{0, 0}, nil},
		{"one run", []float64{142.6}, &models.Distribution{Dist: "fixed", Value: 142600 * time.Microsecond}},
		{"equal", []float64{50, 50}, &models.Distribution{Dist: "fixed", Value: 50 * time.Millisecond}},
		{"three runs", []float64{142.6, 30.1, 155.6}, &models.Distribution{Dist: "uniform", Min: 30100 * time.Microsecond, Max: 155600 * time.Microsecond}},
	} {
		if got := fitStall(c.ends); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: fitStall = %+v, want %+v", c.name, got, c.want)
		}
	}
}

// seedLabModels are fittedModels of the seed lab under f.
func seedLabModels(t *testing.T, f Fit) []labelled {
	t.Helper()
	s, err := config.Load("../configs/seed-lab.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	fitted, err := fittedModels(s, f)
	if err != nil {
		t.Fatal(err)
	}
	return fitted
}

// TestStallRetryLegsVariant: the variant "stall + retry legs" is the fitted
// capacity with the fitted stall, and the measured legs with the first
// attempts' own legs dropped (the stall stands for them); "measured legs,
// first attempts apart" keeps them and has no stall.
func TestStallRetryLegsVariant(t *testing.T) {
	fixed := func(ms int) *models.Distribution {
		return &models.Distribution{Dist: "fixed", Value: time.Duration(ms) * time.Millisecond}
	}
	f := Fit{Capacity: &models.CapacitySpec{AdmitPerS: 500, Decide: models.DecideOnArrival}, Stall: fixed(120),
		Detection: models.DetectionSpec{Kind: "reset"}}
	f.NetworkWithLegs.OutLeg, f.NetworkWithLegs.BackLeg = fixed(10), fixed(2)
	f.NetworkWithLegs.FirstOutLeg, f.NetworkWithLegs.FirstBackLeg = fixed(250), fixed(1)
	fitted := seedLabModels(t, f)
	byLabel := map[string]labelled{}
	for _, m := range fitted {
		byLabel[m.label] = m
	}
	v, legs := byLabel[LabelStallLegs].s, byLabel[LabelWithLegs].s
	if v == nil || legs == nil {
		t.Fatalf("variants %q and %q missing", LabelStallLegs, LabelWithLegs)
	}
	if !reflect.DeepEqual(v.Capacity.Stall, fixed(120)) || v.Network.FirstOutLeg != nil || v.Network.FirstBackLeg != nil ||
		!reflect.DeepEqual(v.Network.OutLeg, fixed(10)) || !reflect.DeepEqual(v.Network.BackLeg, fixed(2)) {
		t.Errorf("%s: stall %v, legs out %v back %v first out %v first back %v; want 120ms, 10ms, 2ms, none, none", LabelStallLegs,
			v.Capacity.Stall, v.Network.OutLeg, v.Network.BackLeg, v.Network.FirstOutLeg, v.Network.FirstBackLeg)
	}
	if legs.Capacity.Stall != nil || !reflect.DeepEqual(legs.Network.FirstOutLeg, fixed(250)) {
		t.Errorf("%s: stall %v, first out %v; want none, 250ms", LabelWithLegs, legs.Capacity.Stall, legs.Network.FirstOutLeg)
	}
}

// TestCalibratedSections: the pooled calibrated model takes its detection
// delay from the first arrivals, gives first attempts no out leg of their
// own (their first-arrival delay holds it) but their measured way back,
// retries the measured legs, shared every SharedEvery; its unshared
// variant differs only there.
func TestCalibratedSections(t *testing.T) {
	fixed := func(ms int) *models.Distribution {
		return &models.Distribution{Dist: "fixed", Value: time.Duration(ms) * time.Millisecond}
	}
	arrival := models.Distribution{Dist: "empirical", Points: []time.Duration{10 * time.Millisecond, 300 * time.Millisecond}}
	f := Fit{Capacity: &models.CapacitySpec{AdmitPerS: 500, Decide: models.DecideOnArrival}, FirstArrival: &arrival,
		SharedEvery: 25 * time.Millisecond, Detection: models.DetectionSpec{Kind: "reset"}}
	f.NetworkWithLegs.OutLeg, f.NetworkWithLegs.BackLeg = fixed(10), fixed(2)
	f.NetworkWithLegs.FirstOutLeg, f.NetworkWithLegs.FirstBackLeg = fixed(250), fixed(7)
	fitted := seedLabModels(t, f)
	pooled, unshared := fitted[0], fitted[1]
	if pooled.label != LabelPooled || unshared.label != LabelUnshared {
		t.Fatalf("first models %q, %q", pooled.label, unshared.label)
	}
	n, d := pooled.s.Network, pooled.s.Detection
	if !reflect.DeepEqual(d.Delay, arrival) || !n.FirstOutLeg.IsZero() || !reflect.DeepEqual(n.FirstBackLeg, fixed(7)) ||
		!reflect.DeepEqual(n.OutLeg, fixed(10)) || !reflect.DeepEqual(n.BackLeg, fixed(2)) || n.SharedEvery != 25*time.Millisecond {
		t.Errorf("pooled: detection %v, network %+v", d.Delay, n)
	}
	if u := unshared.s.Network; u.SharedEvery != 0 || !reflect.DeepEqual(u.OutLeg, n.OutLeg) {
		t.Errorf("unshared: network %+v", u)
	}
}

// TestPerRunModel: each run is fitted alone, so run 1's clients (first
// arrivals all 100 ms) and run 2's (all 300 ms) keep their own first
// waves, and replication r takes run r mod 2's.
func TestPerRunModel(t *testing.T) {
	run := func(arrivalMs float64) *RealRun {
		r := &RealRun{StartDelaysMs: []float64{5, 5, 5}}
		for range 3 {
			out := 20.0
			r.Handshakes = append(r.Handshakes, Handshake{Attempt: 2, Status: 429, LatencyMs: 25, OutMs: &out},
				Handshake{Attempt: 1, Status: 101, LatencyMs: 30})
			r.FirstArrivalMs = append(r.FirstArrivalMs, arrivalMs) // every client alike
		}
		return r
	}
	s, err := config.Load("../configs/seed-lab.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := perRunModel(s, []*RealRun{run(100), run(300)}, LabelPooled, LabelCalibrated)
	ok := err == nil
	if !ok || m.label != LabelCalibrated || len(m.scenarios()) != 2 {
		t.Fatalf("perRunModel: ok %v, %q, %d scenarios", ok, m.label, len(m.scenarios()))
	}
	for k, want := range []time.Duration{100 * time.Millisecond, 300 * time.Millisecond} {
		if d := m.scenarios()[k].Detection.Delay; d.Dist != "empirical" || d.Points[0] != want || d.Upper() != want {
			t.Errorf("run %d: first arrival %v, want all %v", k+1, d, want)
		}
	}
	if _, err := perRunModel(s, []*RealRun{run(100), {}}, LabelPooled, LabelCalibrated); err == nil {
		t.Error("a run with nothing to fit gave a per-run model")
	}
}
