package sim

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"stormsim/models"
	"stormsim/policies"
)

// firstAttempts runs s and returns each client's first attempt time in
// the storm (or, with then_drain, none: use the drain's result).
func firstAttempts(t *testing.T, s *Scenario) ([]time.Duration, Result) {
	t.Helper()
	first := make([]time.Duration, s.Clients)
	for i := range first {
		first[i] = -1
	}
	st := newStorm(s, mustBackoff(t, s.Policies[0]), s.Seed)
	st.trace = func(a attemptTrace) {
		if first[a.client] < 0 {
			first[a.client] = a.arrival
		}
	}
	runStorm(st, wheel{ringLimit: maxRingBuckets, minLook: minLook}, nil)
	return first, st.result()
}

func drainScenario(clients int, pace models.DrainPaceSpec, grace time.Duration) *Scenario {
	return &Scenario{Clients: clients, Seed: 5, Disconnect: Disconnect{At: time.Second},
		Admission: models.AdmissionSpec{Kind: models.AdmissionUnlimited},
		Policies:  []policies.Spec{{Kind: policies.KindFixed, Base: 100 * time.Millisecond}},
		Failure:   &models.FailureSpec{Kind: models.FailureDrain, Grace: grace},
		Drain:     &DrainSpec{Pace: pace}}
}

// TestBatchDrainGoawayTimes: 8 clients drained at t = 1 s in batches of 3
// every 2 s, admission unlimited, no jitter or latency: each client's
// first (and only) attempt is at its goaway, floor(i/3)*2s after 1 s:
// 1, 1, 1, 3, 3, 3, 5, 5 s.
func TestBatchDrainGoawayTimes(t *testing.T) {
	s := resolved(t, drainScenario(8, models.DrainPaceSpec{Kind: models.PaceBatches, Size: 3, Interval: 2 * time.Second}, 10*time.Second))
	got, res := firstAttempts(t, s)
	sec := time.Second
	want := []time.Duration{sec, sec, sec, 3 * sec, 3 * sec, 3 * sec, 5 * sec, 5 * sec}
	if !slices.Equal(got, want) {
		t.Errorf("first attempts %v, want %v", got, want)
	}
	if res.Drain.PaceMs != 4000 || res.Drain.CutGoaways != 0 || res.Drain.DrainMs != 4000 || res.Attempts != 8 {
		t.Errorf("drain %+v, %d attempts; want the last goaway at 4 s after the drain's start, none cut, 8 attempts", *res.Drain, res.Attempts)
	}
}

// TestSpreadDrainGoawayTimes: 4 clients spread over 5 s from t = 1 s:
// i*5s/4 after it, 1, 2.25, 3.5 and 4.75 s; and 3 over 1 s, rounded
// down to the nanosecond: 1 s + 0, 333,333,333 and 666,666,666 ns.
func TestSpreadDrainGoawayTimes(t *testing.T) {
	ms := time.Millisecond
	s := resolved(t, drainScenario(4, models.DrainPaceSpec{Kind: models.PaceSpread, Over: 5 * time.Second}, 10*time.Second))
	if got, _ := firstAttempts(t, s); !slices.Equal(got, []time.Duration{1000 * ms, 2250 * ms, 3500 * ms, 4750 * ms}) {
		t.Errorf("spread over 5s: first attempts %v", got)
	}
	s = resolved(t, drainScenario(3, models.DrainPaceSpec{Kind: models.PaceSpread, Over: time.Second}, 10*time.Second))
	if got, _ := firstAttempts(t, s); !slices.Equal(got, []time.Duration{time.Second, time.Second + 333_333_333, time.Second + 666_666_666}) {
		t.Errorf("spread over 1s: first attempts %v", got)
	}
}

// TestLameDuckGrace: nats' preset waits its 10 s grace before the first
// goaway, then at most 1 s apart (3 clients: W = min(2 min, 3 s)), so
// from a drain at 1 s the clients leave at 11, 12 and 13 s, and nobody
// before 11 s. The preset's 130 s shutdown is the drain's grace.
func TestLameDuckGrace(t *testing.T) {
	s := resolved(t, drainScenario(3, models.DrainPaceSpec{Kind: models.PaceNATS}, 0))
	if s.Failure.Grace != 130*time.Second {
		t.Errorf("grace %v, want the preset's shutdown, 2m10s", s.Failure.Grace)
	}
	got, _ := firstAttempts(t, s)
	if want := []time.Duration{11 * time.Second, 12 * time.Second, 13 * time.Second}; !slices.Equal(got, want) {
		t.Errorf("first attempts %v, want %v", got, want)
	}
}

// TestPaceCutAtGrace: one a second for 5 clients with a 2.5 s grace: the
// first three at 0, 1 and 2 s, the two the pace would tell at 3 and 4 s
// at the grace, 2.5 s.
func TestPaceCutAtGrace(t *testing.T) {
	s := resolved(t, drainScenario(5, models.DrainPaceSpec{Kind: models.PaceBatches, Size: 1, Interval: time.Second}, 2500*time.Millisecond))
	got, res := firstAttempts(t, s)
	sec := time.Second
	if want := []time.Duration{sec, 2 * sec, 3 * sec, 3500 * time.Millisecond, 3500 * time.Millisecond}; !slices.Equal(got, want) {
		t.Errorf("first attempts %v, want %v", got, want)
	}
	if res.Drain.CutGoaways != 2 || res.Drain.PaceMs != 2500 || res.Drain.LeftoverRoutes != 0 {
		t.Errorf("drain %+v: want 2 cut, the last goaway at the grace, no route left", *res.Drain)
	}
	if w := s.Warnings(); len(w) != 1 || !strings.Contains(w[0], "past its grace") {
		t.Errorf("warnings %q, want one about the grace", w)
	}
}

// TestReservedHintRejectsNobody: 200 clients of a gateway drained all at
// once to a fresh one admitting 100/s with a burst of 10. Without a hint
// they all arrive at once: 10 get in and the rest are refused. With
// reserved hints (the fresh gateway's rate and burst by default) client k
// waits for slot k, ceil(max(0, k+1-10)/100 s): clients 0-9 at once,
// client 10 at 10 ms, ..., client 199 at 1.9 s; each finds its token, so
// 200 attempts, none refused, the last back 1.9 s after the drain.
func TestReservedHintRejectsNobody(t *testing.T) {
	base := func() *Scenario {
		return &Scenario{Clients: 200, Seed: 9, Admission: models.AdmissionSpec{Kind: models.AdmissionTokenBucket, Rate: 100, Burst: 10, RetryAfter: time.Second},
			Policies:  []policies.Spec{{Kind: policies.KindFull, Base: 100 * time.Millisecond, Cap: 3200 * time.Millisecond}},
			ThenDrain: &DrainPhase{Grace: 3 * time.Second}}
	}
	plain := resolved(t, base())
	before := runFirst(t, plain).Drain
	if before.Rejected < 150 {
		t.Fatalf("without a hint the drain refused %d, want most of 190", before.Rejected)
	}
	hinted := base()
	hinted.Drain = &DrainSpec{ReconnectHint: models.ReconnectHintSpec{Kind: models.HintReserved}}
	d := runFirst(t, resolved(t, hinted)).Drain
	if d.Attempts != 200 || d.Rejected != 0 || d.DrainMs != 1900 {
		t.Errorf("reserved: %d attempts, %d rejected, last back after %v ms; want 200, 0 and 1900", d.Attempts, d.Rejected, d.DrainMs)
	}
	// Slot k is before 250 ms when (k-9)*10 ms < 250 ms: clients 0-33 in
	// the drain's first window.
	if d.Series == nil || d.Series.Attempts[0] != 34 {
		t.Errorf("drain series %+v, want 34 attempts in the first 250 ms", d.Series)
	}
}

// TestDrainSectionWithPaceAllChangesNothing: a drain section that paces
// nothing and hints nothing gives the seed's drain, the drain's series
// aside.
func TestDrainSectionWithPaceAllChangesNothing(t *testing.T) {
	for _, withPool := range []bool{false, true} {
		mk := func() *Scenario {
			s := &Scenario{Clients: 300, Seed: 4, InitialJitter: 100 * time.Millisecond,
				Admission: models.AdmissionSpec{Kind: models.AdmissionTokenBucket, Rate: 400, Burst: 20, RetryAfter: time.Second},
				Policies:  []policies.Spec{{Kind: policies.KindFull, Base: 100 * time.Millisecond, Cap: 3200 * time.Millisecond}},
				Failure:   &models.FailureSpec{Kind: models.FailureDrain}, ThenDrain: &DrainPhase{}}
			if withPool {
				s.Gateways = &models.PoolSpec{Count: 3, HealthCheck: 500 * time.Millisecond}
			}
			return s
		}
		plain := runFirst(t, resolved(t, mk()))
		s := mk()
		s.Drain = &DrainSpec{}
		with := runFirst(t, resolved(t, s))
		if with.Drain.Series == nil {
			t.Fatal("no drain series with a drain section")
		}
		with.Drain.Series = nil
		if !reflect.DeepEqual(plain, with) {
			t.Errorf("pool %v: a drain section of pace all changed the result:\n%s\n%s", withPool, summary(plain), summary(with))
		}
	}
}

func TestDrainSectionErrors(t *testing.T) {
	policy := []policies.Spec{{Kind: policies.KindFixed, Base: time.Second}}
	unlimited := models.AdmissionSpec{Kind: models.AdmissionUnlimited}
	cases := []struct {
		name string
		s    Scenario
		path string
	}{
		{"nothing drains", Scenario{Clients: 1, Admission: unlimited, Policies: policy, Drain: &DrainSpec{}}, "drain"},
		{"a hint on a crash", Scenario{Clients: 1, Admission: unlimited, Policies: policy, Failure: &models.FailureSpec{Kind: models.FailureCrash},
			Drain: &DrainSpec{ReconnectHint: models.ReconnectHintSpec{Kind: models.HintFixed, Delay: time.Second}}}, "drain"},
		{"spread and a pace", Scenario{Clients: 1, Admission: unlimited, Policies: policy, Failure: &models.FailureSpec{Kind: models.FailureDrain, Spread: true},
			Drain: &DrainSpec{Pace: models.DrainPaceSpec{Kind: models.PaceEnvoy}}}, "failure.spread"},
		{"a reserved hint with nothing to reserve", Scenario{Clients: 1, Admission: unlimited, Policies: policy, ThenDrain: &DrainPhase{},
			Drain: &DrainSpec{ReconnectHint: models.ReconnectHintSpec{Kind: models.HintReserved}}}, "drain.reconnect_hint.rate"},
		{"a bad pace", Scenario{Clients: 1, Admission: unlimited, Policies: policy, ThenDrain: &DrainPhase{},
			Drain: &DrainSpec{Pace: models.DrainPaceSpec{Kind: models.PaceBatches, Size: 10}}}, "drain.pace.interval"},
		{"a deploy without a pool", Scenario{Clients: 1, Admission: unlimited, Policies: policy, Deploy: &DeploySpec{}}, "deploy"},
		{"a deploy with a failure", Scenario{Clients: 1, Admission: unlimited, Policies: policy, Deploy: &DeploySpec{},
			Gateways: &models.PoolSpec{Count: 2}, Failure: &models.FailureSpec{}}, "failure"},
		{"a deploy draining every gateway at once", Scenario{Clients: 1, Admission: unlimited, Policies: policy, Deploy: &DeploySpec{Batch: 2},
			Gateways: &models.PoolSpec{Count: 2}}, "deploy.batch"},
		{"a deploy of one gateway", Scenario{Clients: 1, Admission: unlimited, Policies: policy, Deploy: &DeploySpec{},
			Gateways: &models.PoolSpec{Count: 1}}, "gateways.count"},
	}
	for _, c := range cases {
		s := c.s
		err := s.Resolve()
		fe, ok := err.(*FieldError)
		if !ok || fe.Path != c.path {
			t.Errorf("%s: %v, want an error on %s", c.name, err, c.path)
		}
	}
}

func TestDrainWarnings(t *testing.T) {
	s := resolved(t, &Scenario{Clients: 10, Admission: models.AdmissionSpec{Kind: models.AdmissionUnlimited},
		Policies: []policies.Spec{{Kind: policies.KindFixed, Base: time.Second}}, ThenDrain: &DrainPhase{},
		Drain: &DrainSpec{ReconnectHint: models.ReconnectHintSpec{Kind: models.HintFixed, Delay: 3 * time.Second}}})
	if w := s.Warnings(); len(w) != 1 || !strings.Contains(w[0], "spreads nothing") {
		t.Errorf("warnings %q, want one: a fixed hint with pace all", w)
	}
}

// TestGoawaysAtTheGatewaysRate: a gateway that writes 10 goaways a second
// (capacity.goaway_per_s), draining 5 clients all at once at t = 1 s,
// gets them out at 1, 1.1, 1.2, 1.3 and 1.4 s; paced 300 ms apart, slower
// than its rate, each leaves at its pace's time.
func TestGoawaysAtTheGatewaysRate(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		pace models.DrainPaceSpec
		want []time.Duration
	}{
		{models.DrainPaceSpec{Kind: models.PaceAll}, []time.Duration{1000 * ms, 1100 * ms, 1200 * ms, 1300 * ms, 1400 * ms}},
		{models.DrainPaceSpec{Kind: models.PaceSpread, MaxGap: 300 * ms}, []time.Duration{1000 * ms, 1300 * ms, 1600 * ms, 1900 * ms, 2200 * ms}},
	} {
		s := drainScenario(5, c.pace, 10*time.Second)
		s.Capacity = &models.CapacitySpec{AdmitPerS: 1e6, GoawayPerS: 10}
		got, res := firstAttempts(t, resolved(t, s))
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: first attempts %v, want %v", c.pace.Kind, got, c.want)
		}
		if want := ms2(c.want[4] - time.Second); res.Drain.PaceMs != want {
			t.Errorf("%s: last goaway %v ms, want %v", c.pace.Kind, res.Drain.PaceMs, want)
		}
	}
}

func ms2(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// TestReservedHintFromTheGoawaysWrite: 4 clients drained all at once at
// t = 1 s by a gateway that gets a goaway out every 1 ms
// (capacity.goaway_per_s 1,000: the sessions end at 0, 1, 2 and 3 ms) to
// a bucket of 100/s with a burst of 1, so reserved slots 0, 10, 20 and 30
// ms. The gateway computes each hint when it writes the goaway,
// network.goaway before the session ends, not before the drain's start:
//
//	no leg:       written 0, 1, 2, 3   hints 0, 9, 18, 27   sends 1000, 1010, 1020, 1030 ms
//	leg 1 ms:     written 0, 0, 1, 2   hints 0, 10, 19, 28  sends 1000, 1011, 1021, 1031 ms
//	leg 3 ms:     written 0, 0, 0, 0   hints 0, 10, 20, 30  sends 1000, 1011, 1022, 1033 ms
//
// and with no hint the leg changes nothing: the clients go at their ends.
func TestReservedHintFromTheGoawaysWrite(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		name string
		leg  *models.Distribution
		hint models.ReconnectHintKind
		want []time.Duration
	}{
		{"reserved, no leg", nil, models.HintReserved, []time.Duration{1000 * ms, 1010 * ms, 1020 * ms, 1030 * ms}},
		{"reserved, leg 1 ms", &models.Distribution{Dist: models.DistFixed, Value: ms}, models.HintReserved, []time.Duration{1000 * ms, 1011 * ms, 1021 * ms, 1031 * ms}},
		{"reserved, leg 3 ms", &models.Distribution{Dist: models.DistFixed, Value: 3 * ms}, models.HintReserved, []time.Duration{1000 * ms, 1011 * ms, 1022 * ms, 1033 * ms}},
		{"no hint, leg 3 ms", &models.Distribution{Dist: models.DistFixed, Value: 3 * ms}, models.HintNone, []time.Duration{1000 * ms, 1001 * ms, 1002 * ms, 1003 * ms}},
	} {
		s := drainScenario(4, models.DrainPaceSpec{Kind: models.PaceAll}, 10*time.Second)
		s.Admission = models.AdmissionSpec{Kind: models.AdmissionTokenBucket, Rate: 100, Burst: 1, RetryAfter: time.Second}
		s.Drain.ReconnectHint = models.ReconnectHintSpec{Kind: c.hint}
		s.Capacity = &models.CapacitySpec{AdmitPerS: 1e6, GoawayPerS: 1000}
		s.Network = &models.NetworkSpec{GoawayLeg: c.leg}
		got, _ := firstAttempts(t, resolved(t, s))
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: first attempts %v, want %v", c.name, got, c.want)
		}
	}
}

// TestDrainFirstOutPacksTheDrainsEnd: 4 clients drained all at once at
// t = 1 s by a gateway that ends a session every 1 ms (goaway_per_s
// 1,000: ends at 0, 1, 2 and 3 ms) to a bucket of 1,000/s with a burst
// of 1, with reserved hints: slots 0, 1, 2 and 3 ms, so every client sends
// at its end, 1000, 1001, 1002 and 1003 ms, and finds its token. With
// network.drain_first_out 2 ms and no other delay, the attempts sent
// before the last end (1003 ms) take 2 ms and the last one none:
// arrivals 1002, 1003, 1004 and 1003 ms. At 1002 ms client 0 takes the
// one token the full bucket holds; at 1003 ms one token has come back and
// two clients ask for it: one is refused, 1 rejection and 5 attempts.
func TestDrainFirstOutPacksTheDrainsEnd(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		name     string
		way      *models.Distribution
		want     []time.Duration
		rejected int64
	}{
		{"no drain_first_out", nil, []time.Duration{1000 * ms, 1001 * ms, 1002 * ms, 1003 * ms}, 0},
		{"drain_first_out 2 ms", &models.Distribution{Dist: models.DistFixed, Value: 2 * ms}, []time.Duration{1002 * ms, 1003 * ms, 1004 * ms, 1003 * ms}, 1},
	} {
		s := drainScenario(4, models.DrainPaceSpec{Kind: models.PaceAll}, 10*time.Second)
		s.Admission = models.AdmissionSpec{Kind: models.AdmissionTokenBucket, Rate: 1000, Burst: 1, RetryAfter: time.Second}
		s.Drain.ReconnectHint = models.ReconnectHintSpec{Kind: models.HintReserved}
		s.Capacity = &models.CapacitySpec{AdmitPerS: 1e6, GoawayPerS: 1000}
		if c.way != nil {
			s.Network = &models.NetworkSpec{DrainFirstOut: c.way}
		}
		got, res := firstAttempts(t, resolved(t, s))
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: first attempts %v, want %v", c.name, got, c.want)
		}
		if res.Rejected != c.rejected || res.Attempts != 4+c.rejected {
			t.Errorf("%s: %d attempts, %d rejected; want %d and %d", c.name, res.Attempts, res.Rejected, 4+c.rejected, c.rejected)
		}
	}
}

// TestDrainFirstOutScaledByTheDrainsLoad: the drain above paced 2 ms
// apart (spread, max_gap 2 ms): its sessions end at 0, 2, 4 and 6 ms,
// 3 gaps over 6 ms against the gateway's 1 ms, half its full rate, so
// the busy way is half of 2 ms. Every client's slot (0-3 ms) is before
// its end, so its hint is 0 and it sends at its end: arrivals 1001,
// 1003 and 1005 ms, and 1006 ms for the last, none refused.
func TestDrainFirstOutScaledByTheDrainsLoad(t *testing.T) {
	ms := time.Millisecond
	s := drainScenario(4, models.DrainPaceSpec{Kind: models.PaceSpread, MaxGap: 2 * ms}, 10*time.Second)
	s.Admission = models.AdmissionSpec{Kind: models.AdmissionTokenBucket, Rate: 1000, Burst: 1, RetryAfter: time.Second}
	s.Drain.ReconnectHint = models.ReconnectHintSpec{Kind: models.HintReserved}
	s.Capacity = &models.CapacitySpec{AdmitPerS: 1e6, GoawayPerS: 1000}
	s.Network = &models.NetworkSpec{DrainFirstOut: &models.Distribution{Dist: models.DistFixed, Value: 2 * ms}}
	got, res := firstAttempts(t, resolved(t, s))
	if want := []time.Duration{1001 * ms, 1003 * ms, 1005 * ms, 1006 * ms}; !slices.Equal(got, want) {
		t.Errorf("first attempts %v, want %v", got, want)
	}
	if res.Rejected != 0 {
		t.Errorf("%d rejected, want 0", res.Rejected)
	}
}
