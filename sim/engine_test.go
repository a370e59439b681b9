package sim

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"stormsim/models"
	"stormsim/policies"
)

// randomScenario draws a small scenario exercising every policy kind, both
// admission kinds and the client-side rules.
func randomScenario(r *rand.Rand) *Scenario {
	// Half the scenarios use whole milliseconds, so that exact ties between
	// attempts (and the scheduling-order rule that breaks them) are common.
	grain := time.Duration(1)
	if r.IntN(2) == 0 {
		grain = time.Millisecond
	}
	d := func(lo, hi time.Duration) time.Duration {
		return max(lo, (lo+time.Duration(r.Int64N(int64(hi-lo)+1)))/grain*grain)
	}
	s := &Scenario{Seed: r.Uint64(), Clients: 1 + r.IntN(300)}
	if r.IntN(2) == 0 {
		s.Admission = models.AdmissionSpec{Kind: "slots", Slot: d(time.Millisecond, 30*time.Millisecond), PerSlot: 1 + r.IntN(10)}
	} else {
		s.Admission = models.AdmissionSpec{Kind: "token_bucket", Rate: 1 + r.Float64()*500, Burst: 1 + r.IntN(20)}
	}
	if r.IntN(2) == 0 {
		s.Admission.RetryAfter = d(0, time.Second)
	}
	if r.IntN(2) == 0 {
		s.InitialJitter = d(time.Nanosecond, 300*time.Millisecond)
	}
	if r.IntN(3) == 0 {
		s.Disconnect.At = d(0, time.Second)
	}
	if r.IntN(2) == 0 {
		s.Metrics.Window = d(time.Millisecond, 500*time.Millisecond)
	}
	kind := policies.Kinds[r.IntN(len(policies.Kinds))].Name
	base := d(time.Millisecond, 200*time.Millisecond)
	p := policies.Spec{Name: kind, Base: base, Cap: base + d(0, 3*time.Second), MinGap: d(time.Millisecond, 50*time.Millisecond)}
	if r.IntN(3) == 0 {
		p.MaxAttempts = 1 + r.IntN(8)
	}
	p.HonorRetryAfter = r.IntN(2) == 0
	if r.IntN(3) == 0 {
		p.MinDelayAfterReject = d(0, 300*time.Millisecond)
	}
	if r.IntN(2) == 0 && kind != "none" && kind != "fixed" && kind != "decorrelated" {
		p.Multiplier = 1 + r.Float64()*3
	}
	s.Policies = []policies.Spec{p}
	if err := s.Resolve(); err != nil {
		panic(fmt.Sprintf("random scenario invalid: %v", err))
	}
	return s
}

// TestEngineMatchesReference is the engine's specification: on many random
// small scenarios the timing wheel and the plain priority queue agree on
// every metric and every series entry.
func TestEngineMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	n := 1500
	if testing.Short() {
		n = 200
	}
	defer func(limit int64) { ringLimit = limit }(ringLimit)
	for i := 0; i < n; i++ {
		s := randomScenario(r)
		// A tiny ring sends most retries beyond the horizon and back.
		ringLimit = []int64{maxRingBuckets, 64, 2}[i%3]
		b := mustBackoff(t, s.Policies[0])
		var gotTrace, wantTrace uint64
		tracer := func(h *uint64) func(time.Duration, uint32, bool) {
			return func(t time.Duration, c uint32, ok bool) {
				v := uint64(t)<<1 ^ uint64(c)<<40
				if ok {
					v++
				}
				*h = policies.SplitMix64(*h ^ v)
			}
		}
		got := runTraced(s, b, s.Seed, tracer(&gotTrace))
		want := referenceRun(s, b, s.Seed, tracer(&wantTrace))
		if gotTrace != wantTrace {
			t.Fatalf("case %d (%+v): engines process attempts in different orders", i, *s)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d (%+v, policy %+v): engine and reference differ\nengine:    %+v\nreference: %+v", i, *s, s.Policies[0], summary(got), summary(want))
		}
	}
}

func summary(r Result) string {
	return fmt.Sprintf("attempts %d accepted %d rejected %d abandoned %d peak %d/%d first %d conv %v q %+v windows %d",
		r.Attempts, r.Accepted, r.Rejected, r.Abandoned, r.PeakAttemptsPerWindow, r.PeakAcceptsPerWindow,
		r.FirstWindowAttempts, r.ConvergenceMs, r.ConnectMs, len(r.Series.Attempts))
}
