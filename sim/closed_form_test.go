package sim

import (
	"reflect"
	"testing"
	"time"

	"stormsim/models"
	"stormsim/policies"
)

// TestNoJitterRounds pins the closed form of a synchronized crowd: N clients,
// slots admitting K, a fixed wait B >= slot. Every round admits K, so the
// storm takes R = ceil(N/K) rounds, makes sum_{r<R} (N - r*K) attempts, and
// the last client connects at (R-1)*B.
func TestNoJitterRounds(t *testing.T) {
	tests := []struct {
		n, k int
		b    time.Duration
	}{
		{1000, 5, 100 * time.Millisecond},
		{1000, 7, 10 * time.Millisecond},
		{1, 1, time.Second},
		{50, 50, 20 * time.Millisecond},
		{12345, 100, 35 * time.Millisecond},
	}
	for _, tt := range tests {
		s := &Scenario{Clients: tt.n, Admission: models.AdmissionSpec{Kind: "slots", Slot: 10 * time.Millisecond, PerSlot: tt.k},
			Policies: []policies.Spec{{Kind: "fixed", Base: tt.b}}}
		if err := s.Resolve(); err != nil {
			t.Fatal(err)
		}
		rounds := (tt.n + tt.k - 1) / tt.k
		var attempts int64
		for r := 0; r < rounds; r++ {
			attempts += int64(tt.n - r*tt.k)
		}
		got := Run(s, mustBackoff(t, s.Policies[0]), 1)
		wantConv := float64((time.Duration(rounds-1) * tt.b).Milliseconds())
		if got.Attempts != attempts || lastConnectMs(got) != wantConv || got.PeakAcceptsPerWindow != int64(min(tt.k, tt.n)) {
			t.Errorf("N=%d K=%d B=%v: attempts %d conv %v peak accepts %d; want %d, %v, %d",
				tt.n, tt.k, tt.b, got.Attempts, lastConnectMs(got), got.PeakAcceptsPerWindow, attempts, wantConv, tt.k)
		}
	}
}

// TestDeterminism: the same scenario and seed give the same result; another
// seed gives another (full jitter draws differ).
func TestDeterminism(t *testing.T) {
	s := seedModel("full")
	b := mustBackoff(t, s.Policies[0])
	a1, a2, other := Run(s, b, 1), Run(s, b, 1), Run(s, b, 2)
	if !reflect.DeepEqual(a1, a2) {
		t.Fatal("two runs with one seed differ")
	}
	if reflect.DeepEqual(a1, other) {
		t.Fatal("seeds 1 and 2 gave identical full-jitter storms")
	}
}

// TestMaxAttemptsAbandons: with one attempt allowed and K admitted, N-K give up.
func TestMaxAttemptsAbandons(t *testing.T) {
	s := &Scenario{Clients: 100, Admission: models.AdmissionSpec{Kind: "slots", Slot: 10 * time.Millisecond, PerSlot: 30},
		Policies: []policies.Spec{{Kind: "full", Base: 10 * time.Millisecond, Cap: time.Second, MaxAttempts: 1}}}
	if err := s.Resolve(); err != nil {
		t.Fatal(err)
	}
	got := Run(s, mustBackoff(t, s.Policies[0]), 1)
	if got.Accepted != 30 || got.Abandoned != 70 || got.Attempts != 100 {
		t.Errorf("accepted %d abandoned %d attempts %d, want 30, 70, 100", got.Accepted, got.Abandoned, got.Attempts)
	}
}
