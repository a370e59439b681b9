package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
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
		if r.IntN(3) == 0 {
			s.Capacity.GoawayPerS = 100 + r.Float64()*50000
		}
	}
	if r.IntN(4) == 0 {
		s.ThenDrain = &DrainPhase{Grace: d(time.Millisecond, time.Second), Spread: r.IntN(2) == 0}
	}
	if (s.Draining() || s.ThenDrain != nil) && r.IntN(2) == 0 {
		if s.Failure != nil {
			s.Failure.Spread = false
		}
		if s.ThenDrain != nil {
			s.ThenDrain.Spread = false
		}
		s.Drain = randomDrain(r, d)
	}
	if r.IntN(4) == 0 {
		addDeploy(r, s, d)
	}
	if s.Network != nil && r.IntN(3) == 0 { // a drain's first attempts slower while it ends sessions
		way := dist()
		s.Network.DrainFirstOut = &way
	}
}

// randomDrain draws a drain section: any pace, any hint.
func randomDrain(r *rand.Rand, d func(lo, hi time.Duration) time.Duration) *DrainSpec {
	var ds DrainSpec
	switch r.IntN(5) {
	case 1:
		ds.Pace = models.DrainPaceSpec{Kind: models.PaceBatches, Size: 1 + r.IntN(40), Interval: d(time.Millisecond, 300*time.Millisecond)}
	case 2:
		ds.Pace = models.DrainPaceSpec{Kind: models.PaceSpread, Over: d(time.Millisecond, 2*time.Second)}
		if r.IntN(2) == 0 {
			ds.Pace.MaxGap = d(time.Microsecond, 20*time.Millisecond)
		}
	case 3:
		ds.Pace = models.DrainPaceSpec{Kind: models.PaceLameDuck, Grace: d(0, 500*time.Millisecond), MaxGap: d(time.Microsecond, 10*time.Millisecond)}
	case 4:
		ds.Pace = models.DrainPaceSpec{Kind: []models.DrainPaceKind{models.PacePhoenix, models.PaceAnyCable, models.PaceNATS, models.PaceEnvoy}[r.IntN(4)]}
	}
	switch r.IntN(4) {
	case 1:
		ds.ReconnectHint = models.ReconnectHintSpec{Kind: models.HintFixed, Delay: d(time.Millisecond, time.Second)}
	case 2:
		ds.ReconnectHint = models.ReconnectHintSpec{Kind: models.HintUniform, Over: d(2*time.Millisecond, 2*time.Second)}
	case 3:
		ds.ReconnectHint = models.ReconnectHintSpec{Kind: models.HintReserved, Rate: 1 + r.Float64()*1000, Burst: 1 + r.IntN(30)}
	}
	return &ds
}

// addDeploy turns s into a rolling deploy of a pool, with the models a
// deploy keeps.
func addDeploy(r *rand.Rand, s *Scenario, d func(lo, hi time.Duration) time.Duration) {
	s.Failure, s.ThenDrain, s.Lease, s.Detection = nil, nil, nil, nil
	count := 2 + r.IntN(4)
	s.Gateways = &models.PoolSpec{Count: count, Balancer: []models.Balancer{models.BalancerRandom, models.BalancerRoundRobin, models.BalancerLeastConnections}[r.IntN(3)]}
	if r.IntN(2) == 0 {
		s.Gateways.HealthCheck = d(0, 500*time.Millisecond)
	}
	wait := r.IntN(3) != 0
	s.Deploy = &DeploySpec{Order: []DeployOrder{DeployIndex, DeployReverse, DeployRandom}[r.IntN(3)], Batch: 1 + r.IntN(count-1),
		Pause: d(0, 300*time.Millisecond), Startup: d(0, time.Second), WaitReady: &wait, Grace: d(time.Millisecond, 2*time.Second)}
	s.Drain = nil
	if r.IntN(2) == 0 {
		s.Drain = randomDrain(r, d)
	}
	if r.IntN(3) == 0 {
		s.DrainPolicy = &policies.Spec{Kind: "full", Base: d(time.Millisecond, 50*time.Millisecond), Cap: time.Second}
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
		tracer := func(h *uint64) func(attemptTrace) {
			return func(a attemptTrace) {
				*h = rng.SplitMix64(*h ^ uint64(a.arrival)<<3 ^ uint64(a.out) ^ uint64(a.client)<<40)
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
		checkCounts(t, fmt.Sprintf("case %d (%+v, policy %+v)", i, *s, s.Policies[0]), s, got, naive)
		if s.Network == nil && s.Capacity == nil {
			// Without latency or a queue every answer is immediate and an
			// admitted client connects at its arrival: the naive tally holds
			// the core metrics too. It knows nothing of outcomes, goodput and
			// queues, nor of convergence (its last connect is kept whatever
			// the storm did).
			core := got
			core.modelResults = modelResults{Refused: got.Refused, Unavailable: got.Unavailable}
			core.OutcomeResult, core.Series.Goodput, core.Series.Wasted, core.Series.Queue = nil, nil, nil, nil
			core.Series.Goaways = nil
			core.ConvergenceMs = &core.ConnectMs.Max
			plain := naive.result(b.Spec.Label, s.Clients, got.Abandoned)
			plain.modelResults = core.modelResults
			if extra := len(got.Series.Goaways) - len(plain.Series.Attempts); extra > 0 {
				// A deploy's goaways share the series' windows, after
				// the last attempt too; the naive tally sees attempts only.
				pad := func(v []int64) []int64 { return append(v, make([]int64, extra)...) }
				plain.Series.Attempts, plain.Series.Accepts, plain.Series.Rejects = pad(plain.Series.Attempts), pad(plain.Series.Accepts), pad(plain.Series.Rejects)
			}
			if !reflect.DeepEqual(core, plain) {
				t.Fatalf("case %d: recorder and naive tally differ\nrecorder: %+v\nnaive:    %+v", i, summary(core), summary(plain))
			}
		}
		if d := got.Deploy; d != nil && d.NotBack == 0 && !s.HasTimeouts() {
			// Every round of a deploy ends in one admitted attempt when
			// every answer is waited for and everyone got back: a client's
			// goaways are its admissions.
			if q, twice := naiveReconnects(s, b); q != d.Reconnects || twice != d.DrainedMoreThanOnce {
				t.Fatalf("case %d: deploy reconnects %+v (%d more than once), naive count %+v (%d)", i, d.Reconnects, d.DrainedMoreThanOnce, q, twice)
			}
		}
	}
}

// checkCounts holds a result to the counts' definitions, which the naive
// tally follows attempt by attempt: attempts = accepted + rejected + shed
// + skipped + waiting, refused and unavailable being parts of rejected;
// timed_out <= attempts; the attempts, accepts and rejects per window as
// tallied (when the windows were not merged); and a storm the horizon cut
// has series that run to the window the horizon falls in.
func checkCounts(t *testing.T, name string, s *Scenario, got Result, naive naiveTally) {
	t.Helper()
	var o OutcomeResult
	if got.OutcomeResult != nil {
		o = *got.OutcomeResult
	}
	if sum := got.Accepted + got.Rejected + o.Shed + o.Skipped + o.Waiting; got.Attempts != sum {
		t.Fatalf("%s: attempts %d, but accepted %d + rejected %d + shed %d + skipped %d + waiting %d = %d",
			name, got.Attempts, got.Accepted, got.Rejected, o.Shed, o.Skipped, o.Waiting, sum)
	}
	if o.TimedOut > got.Attempts {
		t.Fatalf("%s: timed_out %d > attempts %d", name, o.TimedOut, got.Attempts)
	}
	type counts struct{ attempts, accepted, rejected, refused, unavailable, shed, skipped, waiting int64 }
	gotCounts := counts{got.Attempts, got.Accepted, got.Rejected, got.Refused, got.Unavailable, o.Shed, o.Skipped, o.Waiting}
	wantCounts := counts{sum(naive.attempts), naive.accepted, naive.rejected, naive.refused, naive.unavailable, naive.shed, naive.skipped, naive.waiting}
	if gotCounts != wantCounts {
		t.Fatalf("%s: counts %+v, tallied %+v", name, gotCounts, wantCounts)
	}
	if got.WindowMs == ms(s.Metrics.Window) {
		for _, c := range []struct {
			name      string
			got, want []int64
		}{{"attempts", got.Series.Attempts, naive.attempts}, {"accepts", got.Series.Accepts, naive.accepts}, {"rejects", got.Series.Rejects, naive.rejects}} {
			if !slices.Equal(trimZeros(c.got), trimZeros(c.want)) {
				t.Fatalf("%s: series.%s %v, tallied %v", name, c.name, c.got, c.want)
			}
		}
	}
	if got.OutcomeResult != nil && !o.Converged {
		window := time.Duration(got.WindowMs * float64(time.Millisecond))
		if want := int((s.EffectiveHorizon()-1)/window) + 1; len(got.Series.Attempts) != want {
			t.Fatalf("%s: a storm cut at %v has %d windows of %v, want %d", name, s.EffectiveHorizon(), len(got.Series.Attempts), window, want)
		}
	}
}

// trimZeros is s without its trailing zeros.
func trimZeros(s []int64) []int64 {
	for len(s) > 0 && s[len(s)-1] == 0 {
		s = s[:len(s)-1]
	}
	return s
}

// naiveReconnects runs s on the reference engine, counts each client's
// admitted attempts and takes their nearest-rank quantiles by sorting.
func naiveReconnects(s *Scenario, b *policies.Backoff) (CountQuantiles, int64) {
	admits := make([]int64, s.Clients)
	referenceRun(s, b, s.Seed, func(a attemptTrace) {
		if a.out == admitted {
			admits[a.client]++
		}
	})
	var twice int64
	for _, n := range admits {
		if n > 1 {
			twice++
		}
	}
	slices.Sort(admits)
	rank := func(q float64) int64 { return admits[max(1, int(math.Ceil(q*float64(len(admits))-1e-9)))-1] }
	return CountQuantiles{P50: rank(0.5), P99: rank(0.99), Max: admits[len(admits)-1]}, twice
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
		if s.Gateways != nil {
			s.Gateways.Connections = 0 // the new client count's default
		}
		s.Network = &models.NetworkSpec{RTT: models.Distribution{Dist: "lognormal", Median: time.Duration(1+r.IntN(50)) * time.Millisecond, Sigma: 0.2 + r.Float64()}}
		if err := s.Resolve(); err != nil {
			t.Fatal(err)
		}
		w := wheel{ringLimit: maxRingBuckets, minLook: []int{1, minLook}[i%2]}
		b := mustBackoff(t, s.Policies[0])
		st := newStorm(s, b, s.Seed)
		runStorm(st, w, nil)
		got := st.result()
		want, _ := referenceRun(s, b, s.Seed, func(attemptTrace) {})
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d (%+v): engine and reference differ\nengine:    %+v\nreference: %+v", i, *s, summary(got), summary(want))
		}
	}
}

// TestCountsAddUpAtTheHorizon holds random storms that the horizon cuts
// while their gateways queue, shed and skip to the counts' definitions
// (checkCounts), on both engines: a slow capacity, often a timeout, and a
// horizon short enough that many handshakes are still waiting or in
// service at it.
func TestCountsAddUpAtTheHorizon(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 29))
	n := 400
	if testing.Short() {
		n = 60
	}
	var waiting, shed, skipped int
	for i := 0; i < n; i++ {
		s := randomScenario(r)
		s.Capacity = &models.CapacitySpec{AdmitPerS: 10 + r.Float64()*500, RejectPerS: float64(r.IntN(3)) * (100 + r.Float64()*2000),
			Decide: []models.Decide{models.DecideAtTurn, models.DecideOnArrival}[r.IntN(2)]}
		if s.Capacity.Decide == models.DecideOnArrival && r.IntN(2) == 0 {
			s.Capacity.DecidePerS, s.Capacity.RejectPerS = 50+r.Float64()*2000, 0
		}
		if r.IntN(2) == 0 {
			s.Capacity.Abandoned = models.AbandonedSkip
		}
		if r.IntN(3) == 0 {
			s.Capacity.MaxQueue = 1 + r.IntN(30)
		}
		if r.IntN(3) != 0 {
			s.Policies[0].Timeout = time.Duration(1+r.IntN(500)) * time.Millisecond
		}
		s.Horizon = s.Disconnect.At + time.Duration(50+r.IntN(3000))*time.Millisecond
		if err := s.Resolve(); err != nil {
			t.Fatal(err)
		}
		b := mustBackoff(t, s.Policies[0])
		st := newStorm(s, b, s.Seed)
		runStorm(st, wheel{ringLimit: []int64{maxRingBuckets, 2}[i%2], minLook: []int{1, 0}[i%2]}, nil)
		got := st.result()
		want, naive := referenceRun(s, b, s.Seed, func(attemptTrace) {})
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d (%+v): engine and reference differ\nengine:    %+v\nreference: %+v", i, *s, summary(got), summary(want))
		}
		checkCounts(t, fmt.Sprintf("case %d (%+v, capacity %+v, policy %+v)", i, *s, *s.Capacity, s.Policies[0]), s, got, naive)
		if o := got.OutcomeResult; o != nil {
			waiting, shed, skipped = waiting+min(1, int(o.Waiting)), shed+min(1, int(o.Shed)), skipped+min(1, int(o.Skipped))
		}
	}
	// The storms must exercise what they are for.
	if waiting < n/4 || shed < n/20 || skipped < n/20 {
		t.Errorf("of %d storms, %d left handshakes waiting, %d shed and %d skipped: too few to test the counts", n, waiting, shed, skipped)
	}
}

// TestPackedAttemptsBeyondEvent: a plain storm whose clients make far
// more attempts than a packed event holds (packedAttMax) gives, attempt
// by attempt, what the reference engine gives; the count kept aside is
// the one drawn from. One admission a slot and waits of 1-2 ms keep the
// last clients retrying for seconds.
func TestPackedAttemptsBeyondEvent(t *testing.T) {
	for _, ring := range []int64{maxRingBuckets, 2} {
		s := &Scenario{
			Seed:      3,
			Clients:   300,
			Admission: models.AdmissionSpec{Kind: "slots", Slot: 10 * time.Millisecond, PerSlot: 1},
			Policies:  []policies.Spec{{Kind: "full", Base: time.Millisecond, Cap: 2 * time.Millisecond}},
		}
		if err := s.Resolve(); err != nil {
			t.Fatal(err)
		}
		b := mustBackoff(t, s.Policies[0])
		st := newStorm(s, b, s.Seed)
		if !st.plain {
			t.Fatal("the storm is not plain: it would not use packed events")
		}
		var got, want uint64
		perClient := make([]int, s.Clients)
		st.trace = func(a attemptTrace) {
			perClient[a.client]++
			got = rng.SplitMix64(got ^ uint64(a.arrival)<<3 ^ uint64(a.out) ^ uint64(a.client)<<40)
		}
		runStorm(st, wheel{ringLimit: ring, minLook: minLook}, nil)
		res := st.result()
		ref, _ := referenceRun(s, b, s.Seed, func(a attemptTrace) {
			want = rng.SplitMix64(want ^ uint64(a.arrival)<<3 ^ uint64(a.out) ^ uint64(a.client)<<40)
		})
		if most := slices.Max(perClient); most <= 2*packedAttMax {
			t.Fatalf("ring %d: the busiest client made %d attempts, not beyond %d: the test tests nothing", ring, most, 2*packedAttMax)
		}
		if got != want {
			t.Fatalf("ring %d: the engines process attempts in different orders", ring)
		}
		if !reflect.DeepEqual(res, ref) {
			t.Fatalf("ring %d: engine and reference differ\nengine:    %+v\nreference: %+v", ring, summary(res), summary(ref))
		}
	}
}
