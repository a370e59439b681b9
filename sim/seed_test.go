package sim

import (
	"testing"
	"time"

	"stormsim/models"
	"stormsim/policies"
)

// seedModel is the seed document's discrete backoff model: 1000 clients drop
// at t=0, 5 handshakes admitted per 10 ms slot, base 100 ms, cap 3200 ms.
func seedModel(policy policies.KindName) *Scenario {
	s := &Scenario{
		Name:      "seed-backoff-model",
		Seed:      1,
		Clients:   1000,
		Admission: models.AdmissionSpec{Kind: "slots", Slot: 10 * time.Millisecond, PerSlot: 5},
		Policies:  []policies.Spec{{Kind: policy, Base: 100 * time.Millisecond, Cap: 3200 * time.Millisecond}},
		Metrics:   Metrics{Window: 10 * time.Millisecond},
	}
	if err := s.Resolve(); err != nil {
		panic(err)
	}
	return s
}

func mustBackoff(t testing.TB, s policies.Spec) *policies.Backoff {
	t.Helper()
	b, err := policies.New(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSeedTableExponential reproduces the seed's row exactly: every round
// admits 5 of the crowd, so 200 rounds make 1000+995+...+5 = 100,500
// attempts; the waits are 100, 200, ..., 1600 ms and then 3200 ms, so the
// last round starts at 3100 + 194*3200 = 623,900 ms.
func TestSeedTableExponential(t *testing.T) {
	s := seedModel("exponential")
	r := Run(s, mustBackoff(t, s.Policies[0]), s.Seed)
	if r.Attempts != 100_500 || r.Accepted != 1000 || r.Rejected != 99_500 {
		t.Errorf("attempts/accepted/rejected = %d/%d/%d, want 100500/1000/99500", r.Attempts, r.Accepted, r.Rejected)
	}
	if r.FirstWindowAttempts != 1000 || r.PeakAttemptsPerWindow != 1000 {
		t.Errorf("first window %d, peak %d, want 1000, 1000", r.FirstWindowAttempts, r.PeakAttemptsPerWindow)
	}
	if lastConnectMs(r) != 623_900 {
		t.Errorf("convergence = %v ms, want 623900", lastConnectMs(r))
	}
}

// TestSeedTableFullJitter checks the seed's full-jitter row to its order of
// magnitude (the seed's figure is one random draw): 5,257 attempts, the last
// client in at 4,580 ms.
func TestSeedTableFullJitter(t *testing.T) {
	s := seedModel("full")
	r := Run(s, mustBackoff(t, s.Policies[0]), s.Seed)
	if r.Attempts < 4000 || r.Attempts > 7000 {
		t.Errorf("attempts = %d, want about 5,257", r.Attempts)
	}
	if lastConnectMs(r) < 3500 || lastConnectMs(r) > 6000 {
		t.Errorf("convergence = %v ms, want about 4,580", lastConnectMs(r))
	}
	// Everyone tries at t=0; in continuous time the retries drawn below
	// 10 ms (a tenth of uniform[0, 100 ms)) land in the same slot too.
	if r.FirstWindowAttempts < 1000 || r.FirstWindowAttempts > 1150 || r.Accepted != 1000 {
		t.Errorf("first window %d, accepted %d, want 1000..1150, 1000", r.FirstWindowAttempts, r.Accepted)
	}
	t.Logf("full jitter: %d attempts, convergence %v ms", r.Attempts, lastConnectMs(r))
}
