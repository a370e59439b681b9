package sim

import (
	"slices"
	"testing"
	"time"

	"stormsim/models"
	"stormsim/policies"
)

// TestDecisionShareHandWorked: three clients at t = 0, a decision stage
// of 1 ms a handshake, claims of 2 ms and a share of 0.5 ms a decision.
// Worked by hand:
//
//	decisions at 1, 2 and 3 ms, whatever the claims do
//	c0's claim starts at 1; 2 and 3 fall in (1, 3] and (1, 3.5]: it ends at 4
//	c1's starts at 4 (the gateway free), no decision after: 6
//	c2's at 6: 8
//
// The first run charges nothing (3, 5 and 7 ms), the second is charged
// against its decisions and makes the same ones: settled in 2 runs.
func TestDecisionShareHandWorked(t *testing.T) {
	s := resolved(t, &Scenario{Clients: 3, Admission: models.AdmissionSpec{Kind: "unlimited"},
		Policies: []policies.Spec{{Kind: "fixed", Base: time.Second}},
		Metrics:  Metrics{Window: time.Millisecond},
		Capacity: &models.CapacitySpec{AdmitPerS: 500, Decide: models.DecideOnArrival, DecidePerS: 1000, DecisionShare: 500 * time.Microsecond}})
	r := runFirst(t, s)
	want := Quantiles{P50: 6, P90: 8, P99: 8, Max: 8}
	if r.ConnectMs != want {
		t.Errorf("connects %+v; want %+v", r.ConnectMs, want)
	}
	if r.Share == nil || *r.Share != (ShareResult{Passes: 2, Settled: true}) {
		t.Errorf("share %+v; want 2 passes, settled", r.Share)
	}
}

// TestClaimShareHandWorked: three clients at t = 0, a decision stage of
// 1 ms a handshake, claims of 0.5 ms and a claim share of 1 ms a claim
// (no decision share). Worked by hand:
//
//	d0: (0, 1], no claim has ended: 1; c0's claim 1 to 1.5
//	d1: from 1; c0's end (1.5) falls in (1, 2]: 3; c1's claim 3 to 3.5
//	d2: from 3; c1's end (3.5) falls in (3, 4]: 5; c2's claim 5 to 5.5,
//	    outside (3, 5]
//
// Without the share the claims would end at 1.5, 2.5 and 3.5. Each
// decision is charged against the claims its own run has booked, so the
// second run makes the first one's decisions: settled in 2.
func TestClaimShareHandWorked(t *testing.T) {
	s := resolved(t, &Scenario{Clients: 3, Admission: models.AdmissionSpec{Kind: "unlimited"},
		Policies: []policies.Spec{{Kind: "fixed", Base: time.Second}},
		Metrics:  Metrics{Window: time.Millisecond},
		Capacity: &models.CapacitySpec{AdmitPerS: 2000, Decide: models.DecideOnArrival, DecidePerS: 1000, ClaimShare: time.Millisecond}})
	r := runFirst(t, s)
	want := Quantiles{P50: 3.5, P90: 5.5, P99: 5.5, Max: 5.5}
	if r.ConnectMs != want {
		t.Errorf("connects %+v; want %+v", r.ConnectMs, want)
	}
	if r.Share == nil || *r.Share != (ShareResult{Passes: 2, Settled: true}) {
		t.Errorf("share %+v; want 2 passes, settled", r.Share)
	}
}

// TestDecisionShareFixedPoint checks the result of a storm whose
// decisions depend on its claims (a claim that ends late lets its client
// time out and retry: another decision) against the rule itself, from
// its trace alone: in arrival order, each claim starts when it was
// decided or when the gateway is free, whichever is later, and ends at
// start + 1/admit_per_s + share x (the decisions of that same run in
// (start, end]), a wasted claim (serve, no wasted_per_s) as a useful one;
// a handshake dropped at its turn (skip) costs nothing. With a claim
// share too, each decision, in arrival order, starts at its arrival or
// the previous decision, whichever is later, and ends at start +
// 1/decide_per_s + claim share x (the claims of that run ending in
// (start, end]).
func TestDecisionShareFixedPoint(t *testing.T) {
	for _, abandoned := range []models.Abandoned{models.AbandonedSkip, models.AbandonedServe} {
		for _, claimShare := range []time.Duration{0, 150 * time.Microsecond} {
			name := string(abandoned)
			if claimShare > 0 {
				name += "/claim share"
			}
			t.Run(name, func(t *testing.T) { testDecisionShareFixedPoint(t, abandoned, claimShare) })
		}
	}
}

func testDecisionShareFixedPoint(t *testing.T, abandoned models.Abandoned, claimShare time.Duration) {
	const admit, share, decide = time.Millisecond, 100 * time.Microsecond, 250 * time.Microsecond
	s := resolved(t, &Scenario{Clients: 400, Seed: 7, InitialJitter: 50 * time.Millisecond,
		Admission: models.AdmissionSpec{Kind: "unlimited"},
		Policies:  []policies.Spec{{Kind: "full", Base: 20 * time.Millisecond, Cap: 100 * time.Millisecond, Timeout: 100 * time.Millisecond}},
		Metrics:   Metrics{Window: 10 * time.Millisecond},
		Horizon:   5 * time.Second,
		Capacity: &models.CapacitySpec{AdmitPerS: 1000, Decide: models.DecideOnArrival, DecidePerS: 4000, DecisionShare: share,
			ClaimShare: claimShare, Abandoned: abandoned}})
	var trace []attemptTrace
	r := runTraced(s, mustBackoff(t, s.Policies[0]), s.Seed, func(a attemptTrace) { trace = append(trace, a) }, nil)
	if r.Share == nil || !r.Share.Settled || r.Share.Passes < 3 {
		t.Fatalf("share %+v; want settled after 3 runs or more (the decisions moved with the claims)", r.Share)
	}
	decisions := make([]time.Duration, 0, len(trace))
	for _, a := range trace {
		decisions = append(decisions, a.decided)
	}
	slices.Sort(decisions)
	inside := func(from, to time.Duration) int {
		lo, _ := slices.BinarySearch(decisions, from+1)
		hi, _ := slices.BinarySearch(decisions, to+1)
		return hi - lo
	}
	var free time.Duration
	claims, charged := 0, 0
	for _, a := range trace {
		start := max(a.decided, free)
		switch a.out {
		case admitted:
			n := inside(start, a.answered)
			if want := start + admit + time.Duration(n)*share; a.answered != want {
				t.Fatalf("client %d's claim from %v ended at %v; with %d decisions inside, want %v", a.client, start, a.answered, n, want)
			}
			claims++
			charged += n
		case skipped:
			if a.answered != start {
				t.Fatalf("client %d dropped at %v, done at %v; want at once", a.client, start, a.answered)
			}
		default:
			t.Fatalf("client %d: outcome %v in a storm that admits everyone", a.client, a.out)
		}
		free = a.answered
	}
	if claims == 0 || charged == 0 {
		t.Fatalf("%d claims charged %d decisions: the storm does not exercise the share", claims, charged)
	}
	chargedClaims := checkClaimShare(t, trace, decide, claimShare)
	t.Logf("%d runs, %d claims charged %d decisions, %d decisions charged %d claims, %d attempts, outcome %s",
		r.Share.Passes, claims, charged, len(trace), chargedClaims, r.Attempts, r.Outcome)
}

// checkClaimShare checks every decision of the trace against the claim
// share's rule and returns the claims charged in all.
func checkClaimShare(t *testing.T, trace []attemptTrace, decide, claimShare time.Duration) int {
	t.Helper()
	var ends []time.Duration
	for _, a := range trace {
		if a.out == admitted {
			ends = append(ends, a.answered)
		}
	}
	slices.Sort(ends)
	var free time.Duration
	charged := 0
	for _, a := range trace {
		start := max(a.arrival, free)
		lo, _ := slices.BinarySearch(ends, start+1)
		hi, _ := slices.BinarySearch(ends, a.decided+1)
		if want := start + decide + time.Duration(hi-lo)*claimShare; a.decided != want {
			t.Fatalf("client %d's decision from %v ended at %v; with %d claims ending inside, want %v", a.client, start, a.decided, hi-lo, want)
		}
		charged += hi - lo
		free = a.decided
	}
	if claimShare > 0 && charged == 0 {
		t.Fatalf("no decision was charged a claim: the storm does not exercise the claim share")
	}
	return charged
}
