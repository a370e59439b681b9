package sim

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"stormsim/internal/finitejson"
	"stormsim/models"
	"stormsim/policies"
	"stormsim/policies/rng"
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
	p := policies.Spec{Kind: kind, Base: base, Cap: base + d(0, 3*time.Second), MinGap: d(time.Millisecond, 50*time.Millisecond)}
	if r.IntN(3) == 0 {
		p.MaxAttempts = 1 + r.IntN(8)
	}
	p.HonorRetryAfter = r.IntN(2) == 0
	if r.IntN(3) == 0 { // a handshake timeout, and with it a horizon short enough to test quickly
		p.Timeout = d(time.Millisecond, time.Second)
		s.Horizon = s.Disconnect.At + d(100*time.Millisecond, 20*time.Second)
	} else if r.IntN(5) == 0 {
		s.Horizon = s.Disconnect.At + d(10*time.Millisecond, 5*time.Second)
	}
	if r.IntN(3) == 0 {
		p.MinDelayAfterReject = d(0, 300*time.Millisecond)
	}
	if r.IntN(2) == 0 && kind != "none" && kind != "fixed" && kind != "decorrelated" {
		p.Multiplier = 1 + r.Float64()*3
	}
	s.Policies = []policies.Spec{p}
	if r.IntN(2) == 0 {
		addModels(r, s, d)
	}
	if err := s.Resolve(); err != nil {
		panic(fmt.Sprintf("random scenario invalid: %v", err))
	}
	return s
}

// addModels switches on a random subset of the failure and load models.
func addModels(r *rand.Rand, s *Scenario, d func(lo, hi time.Duration) time.Duration) {
	dist := func() models.Distribution {
		switch r.IntN(4) {
		case 0:
			return models.Distribution{Value: d(0, 20*time.Millisecond)}
		case 1:
			lo := d(0, 10*time.Millisecond)
			return models.Distribution{Dist: "uniform", Min: lo, Max: lo + d(time.Millisecond, 30*time.Millisecond)}
		case 2:
			points := []time.Duration{d(0, 5*time.Millisecond)}
			for range 1 + r.IntN(5) {
				points = append(points, points[len(points)-1]+d(0, 10*time.Millisecond))
			}
			return models.Distribution{Dist: "empirical", Points: points}
		}
		return models.Distribution{Dist: "lognormal", Median: d(time.Millisecond, 20*time.Millisecond), Sigma: 0.1 + r.Float64()}
	}
	switch r.IntN(4) {
	case 0:
		s.Failure = &models.FailureSpec{Kind: "drain", Grace: d(time.Millisecond, time.Second), Spread: r.IntN(2) == 0}
		if r.IntN(2) == 0 {
			s.DrainPolicy = &policies.Spec{Kind: "full", Base: d(time.Millisecond, 50*time.Millisecond), Cap: time.Second}
		}
	case 1:
		s.Failure = &models.FailureSpec{Kind: "hang"}
		s.Detection = &models.DetectionSpec{Kind: "heartbeat", Ping: d(time.Millisecond, 500*time.Millisecond)}
		s.Detection.Idle = s.Detection.Ping * time.Duration(1+r.IntN(6))
	case 2:
		s.Detection = &models.DetectionSpec{Kind: "reset", Delay: dist()}
	}
	if r.IntN(2) == 0 {
		s.Lease = &models.LeaseSpec{Duration: d(100*time.Millisecond, 3*time.Second)}
		if r.IntN(2) == 0 {
			s.Lease.SweepEvery = d(time.Millisecond, time.Second)
		}
		if r.IntN(2) == 0 {
			s.Lease.Delivery = "route_directed"
		}
	}
	if r.IntN(2) == 0 {
		s.Network = &models.NetworkSpec{RTT: dist(), ServerTime: dist()}
		// Each measured leg, when drawn, replaces its half of the rtt.
		legs := []**models.Distribution{&s.Network.OutLeg, &s.Network.BackLeg, &s.Network.FirstOutLeg, &s.Network.FirstBackLeg}
		for _, l := range legs {
			if r.IntN(3) == 0 {
				d := dist()
				*l = &d
			}
		}
		if r.IntN(3) == 0 { // delays shared by everyone crossing in the same interval
			s.Network.SharedEvery = d(time.Millisecond, 30*time.Millisecond)
		}
	}
	if r.IntN(2) == 0 {
		s.Gateways = &models.PoolSpec{Count: 2 + r.IntN(4), Balancer: []models.Balancer{models.BalancerRandom, models.BalancerRoundRobin, models.BalancerLeastConnections}[r.IntN(3)],
			HealthCheck: d(0, time.Second)}
	}
	if r.IntN(2) == 0 {
		s.Database = &models.DatabaseSpec{RowsPerSync: 1 + r.IntN(30), ReadBudgetPerS: float64(r.IntN(5000))}
	}
	if r.IntN(3) == 0 {
		s.Capacity = &models.CapacitySpec{AdmitPerS: 10 + r.Float64()*5000, RejectPerS: float64(r.IntN(3)) * r.Float64() * 20000,
			Decide: []models.Decide{models.DecideAtTurn, models.DecideOnArrival}[r.IntN(2)]}
		if s.Capacity.Decide == models.DecideOnArrival && r.IntN(2) == 0 { // a decision stage before the claims
			s.Capacity.DecidePerS, s.Capacity.RejectPerS = 10+r.Float64()*20000, 0
		}
		if r.IntN(2) == 0 {
			s.Capacity.Abandoned = models.AbandonedSkip
		}
		if r.IntN(3) == 0 {
			s.Capacity.MaxQueue = 1 + r.IntN(50)
		}
	}
	if r.IntN(4) == 0 {
		s.ThenDrain = &DrainPhase{Grace: d(time.Millisecond, time.Second), Spread: r.IntN(2) == 0}
	}
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
	for i := 0; i < n; i++ {
		s := randomScenario(r)
		// A tiny ring sends most retries beyond the horizon and back; draws
		// made ahead for every bucket, none, or the big ones.
		w := wheel{ringLimit: []int64{maxRingBuckets, 64, 2}[i%3], minLook: []int{1, 0, minLook, 1}[i%4]}
		b := mustBackoff(t, s.Policies[0])
		var gotTrace, wantTrace uint64
		tracer := func(h *uint64) func(time.Duration, uint32, bool) {
			return func(t time.Duration, c uint32, ok bool) {
				v := uint64(t)<<1 ^ uint64(c)<<40
				if ok {
					v++
				}
				*h = rng.SplitMix64(*h ^ v)
			}
		}
		st := newStorm(s, b, s.Seed)
		st.trace = tracer(&gotTrace)
		runStorm(st, w, nil)
		got := st.result()
		want, naive := referenceRun(s, b, s.Seed, tracer(&wantTrace))
		if gotTrace != wantTrace {
			t.Fatalf("case %d (%+v): engines process attempts in different orders", i, *s)
		}
		if ok, at := finitejson.Finite(&got); !ok {
			t.Fatalf("case %d (%+v): %s is not a finite number", i, *s, at)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d (%+v, policy %+v): engine and reference differ\nengine:    %+v\nreference: %+v", i, *s, s.Policies[0], summary(got), summary(want))
		}
		if s.Network == nil && s.Capacity == nil {
			// Without latency or a queue every answer is immediate, so a
			// timeout never fires: the naive tally still holds. It knows
			// nothing of outcomes, goodput and queues, nor of convergence
			// (its last connect is kept whatever the storm did).
			core := got
			core.modelResults = modelResults{Refused: got.Refused, Unavailable: got.Unavailable}
			core.OutcomeResult, core.Series.Goodput, core.Series.Wasted, core.Series.Queue = nil, nil, nil, nil
			core.ConvergenceMs = &core.ConnectMs.Max
			naive.modelResults = core.modelResults
			if !reflect.DeepEqual(core, naive) {
				t.Fatalf("case %d: recorder and naive tally differ\nrecorder: %+v\nnaive:    %+v", i, summary(core), summary(naive))
			}
		}
	}
}

func summary(r Result) string {
	return fmt.Sprintf("attempts %d accepted %d rejected %d abandoned %d peak %d/%d first %d conv %v q %+v windows %d",
		r.Attempts, r.Accepted, r.Rejected, r.Abandoned, r.PeakAttemptsPerWindow, r.PeakAcceptsPerWindow,
		r.FirstWindowAttempts, lastConnectMs(r), r.ConnectMs, len(r.Series.Attempts))
}

// TestEngineMatchesReferenceOnBigBuckets runs storms whose buckets hold
// hundreds to thousands of events, so that the sorts made ahead of time,
// their merges with later events and the reuse of their scratch as
// buckets grow and shrink are all exercised.
func TestEngineMatchesReferenceOnBigBuckets(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 17))
	n := 12
	if testing.Short() {
		n = 3
	}
	for i := 0; i < n; i++ {
		s := randomScenario(r)
		s.Clients = 2000 + r.IntN(20000)
		s.Network = &models.NetworkSpec{RTT: models.Distribution{Dist: "lognormal", Median: time.Duration(1+r.IntN(50)) * time.Millisecond, Sigma: 0.2 + r.Float64()}}
		if err := s.Resolve(); err != nil {
			t.Fatal(err)
		}
		w := wheel{ringLimit: maxRingBuckets, minLook: []int{1, minLook}[i%2]}
		b := mustBackoff(t, s.Policies[0])
		st := newStorm(s, b, s.Seed)
		runStorm(st, w, nil)
		got := st.result()
		want, _ := referenceRun(s, b, s.Seed, func(time.Duration, uint32, bool) {})
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d (%+v): engine and reference differ\nengine:    %+v\nreference: %+v", i, *s, summary(got), summary(want))
		}
	}
}
