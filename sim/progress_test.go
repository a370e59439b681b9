package sim

import (
	"reflect"
	"testing"
	"time"

	"stormsim/models"
	"stormsim/policies"
)

// setUpScenario has first attempts spread by initial jitter, which the
// engine places one by one before it processes any: 3.5 x PlaceEvery
// clients.
func setUpScenario(t *testing.T) (*Scenario, *policies.Backoff) {
	t.Helper()
	s := &Scenario{Seed: 7, Clients: 7 * PlaceEvery / 2, InitialJitter: time.Second,
		Admission: models.AdmissionSpec{Kind: "token_bucket", Rate: 1e6, Burst: 1000},
		Policies:  []policies.Spec{{Kind: "full", Base: 100 * time.Millisecond, Cap: time.Second}}}
	if err := s.Resolve(); err != nil {
		t.Fatal(err)
	}
	b, err := policies.New(s.Policies[0])
	if err != nil {
		t.Fatal(err)
	}
	return s, b
}

// TestSetUpReportsAndStops: while first attempts are placed, report is
// called every PlaceEvery clients, before any attempt is processed (the
// first pass, finding the earliest send, reports 0 placed), so a caller
// can stop a storm whose set-up takes long; stopped there, the run
// returns the zero Result.
func TestSetUpReportsAndStops(t *testing.T) {
	s, b := setUpScenario(t)
	var placed []int
	r := RunWithProgress(s, b, s.Seed, func(p Progress) bool {
		if p.Attempts == 0 {
			placed = append(placed, p.Placed)
		}
		return true
	})
	want := []int{0, 0, 0, PlaceEvery, 2 * PlaceEvery, 3 * PlaceEvery}
	if !reflect.DeepEqual(placed, want) {
		t.Errorf("set-up reports with %v placed, want %v", placed, want)
	}
	if !reflect.DeepEqual(r, Run(s, b, s.Seed)) {
		t.Error("reporting during set-up changed the result")
	}
	calls := 0
	r = RunWithProgress(s, b, s.Seed, func(p Progress) bool {
		calls++
		return calls < 4 // stop at the first report with clients placed
	})
	if calls != 4 || !reflect.DeepEqual(r, Result{}) {
		t.Errorf("stopped in set-up: %d reports, result %+v; want 4 and the zero Result", calls, r)
	}
}
