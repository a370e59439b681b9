package sim

import (
	"reflect"
	"testing"
	"time"

	"stormsim/models"
	"stormsim/policies"
)

func resolved(t *testing.T, s *Scenario) *Scenario {
	t.Helper()
	if err := s.Resolve(); err != nil {
		t.Fatal(err)
	}
	return s
}

func runFirst(t *testing.T, s *Scenario) Result {
	t.Helper()
	return Run(s, mustBackoff(t, s.Policies[0]), s.Seed)
}

// TestStaleRoutesHandComputed: four devices, one admitted per 100 ms slot,
// a fixed 100 ms retry, so they connect at 0, 100, 200 and 300 ms. A 1 ns
// renew and sweep period pins the reclaim at 250 ms + 1 ns. Stale time per
// device is min(connect, reclaim): 0 + 100 + 200 + 250.000001 ms.
func TestStaleRoutesHandComputed(t *testing.T) {
	s := resolved(t, &Scenario{Clients: 4, Seed: 3,
		Admission: models.AdmissionSpec{Kind: "slots", Slot: 100 * time.Millisecond, PerSlot: 1},
		Policies:  []policies.Spec{{Kind: "fixed", Base: 100 * time.Millisecond}},
		Lease:     &models.LeaseSpec{Duration: 250 * time.Millisecond, RenewEvery: 1, SweepEvery: 1, Delivery: "route_directed"},
	})
	r := runFirst(t, s).Reclaim
	want := &ReclaimResult{ReclaimMs: 250.000001, BoundLoMs: 249.999999, BoundHiMs: 250.000001,
		StaleRouteSeconds: 0.550000001, MaxPresenceErrorMs: 250.000001,
		StaleRoutes:           []int64{2, 1, 0}, // at 100 ms two are back, at 200 ms three, at 300 ms the sweep has run
		BlackholeRouteSeconds: 0.550000001, BlackholeMaxMs: 250.000001}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("reclaim = %+v\nwant      %+v", r, want)
	}
}

// TestZeroLatencyChangesNothing: a network of zero rtt and server time, and
// a pool-free, model-free scenario, give identical results.
func TestZeroLatencyChangesNothing(t *testing.T) {
	base := seedModel("full")
	with := *base
	with.Network = &models.NetworkSpec{RTT: models.Distribution{Dist: "fixed"}, ServerTime: models.Distribution{Value: 0}}
	resolved(t, &with)
	if a, b := runFirst(t, base), runFirst(t, &with); !reflect.DeepEqual(a, b) {
		t.Errorf("zero latency changed the result:\n%s\n%s", summary(a), summary(b))
	}
}

// TestLatencyShiftsConnects: with a fixed 40 ms rtt and 10 ms server time
// and unlimited admission, every client connects at 40/2 + 40/2 + 10 = 50 ms
// (the answer's arrival), with its attempt counted at 20 ms.
func TestLatencyShiftsConnects(t *testing.T) {
	s := resolved(t, &Scenario{Clients: 10, Admission: models.AdmissionSpec{Kind: "unlimited"},
		Policies: []policies.Spec{{Kind: "full", Base: time.Millisecond, Cap: time.Second}},
		Metrics:  Metrics{Window: 10 * time.Millisecond},
		Network:  &models.NetworkSpec{RTT: models.Distribution{Value: 40 * time.Millisecond}, ServerTime: models.Distribution{Value: 10 * time.Millisecond}}})
	r := runFirst(t, s)
	if lastConnectMs(r) != 50 || r.ConnectMs.P50 != 50 || len(r.Series.Attempts) != 3 || r.Series.Attempts[2] != 10 {
		t.Errorf("convergence %v, p50 %v, series %v; want 50, 50, [0 0 10]", lastConnectMs(r), r.ConnectMs.P50, r.Series.Attempts)
	}
}

// TestPoolRespectsEachBucket: four gateways, three survivors each with a
// token bucket of 40/s burst 10: in every 250 ms window each admits at most
// 10 + 40*0.25 = 20, and their accepts add up to the total.
func TestPoolRespectsEachBucket(t *testing.T) {
	for _, balancer := range []models.Balancer{models.BalancerRandom, models.BalancerRoundRobin, models.BalancerLeastConnections} {
		s := resolved(t, &Scenario{Clients: 600, Seed: 4, InitialJitter: 100 * time.Millisecond,
			Admission: models.AdmissionSpec{Kind: "token_bucket", Rate: 40, Burst: 10, RetryAfter: time.Second},
			Policies:  []policies.Spec{{Kind: "full", Base: 100 * time.Millisecond, Cap: 3200 * time.Millisecond}},
			Gateways:  &models.PoolSpec{Count: 4, Balancer: balancer, HealthCheck: 500 * time.Millisecond}})
		r := runFirst(t, s)
		var sum int64
		for _, g := range r.Gateways {
			sum += g.Accepted
			for w, a := range g.Series.Accepts {
				if a > 20 {
					t.Errorf("%s: gateway %d admitted %d in window %d, bound 20", balancer, g.Gateway, a, w)
				}
			}
		}
		if len(r.Gateways) != 3 || sum != r.Accepted || r.Accepted != 600 {
			t.Errorf("%s: %d gateways, accepts %d of %d, want 3 gateways and 600", balancer, len(r.Gateways), sum, r.Accepted)
		}
		if r.Refused == 0 {
			t.Errorf("%s: no attempt reached the dead gateway before its health check failed", balancer)
		}
	}
}

// TestHealthCheckAtOnceRefusesNothing: with health_check 0 the balancer
// never sends an attempt to the dead gateway.
func TestHealthCheckAtOnceRefusesNothing(t *testing.T) {
	s := resolved(t, &Scenario{Clients: 200, Admission: models.AdmissionSpec{Kind: "token_bucket", Rate: 100, Burst: 10},
		Policies: []policies.Spec{{Kind: "full", Base: 100 * time.Millisecond, Cap: time.Second}},
		Gateways: &models.PoolSpec{Count: 3}})
	if r := runFirst(t, s); r.Refused != 0 {
		t.Errorf("refused = %d, want 0", r.Refused)
	}
}

// TestDrainLeavesNoRoutes: a drain with goaways spread over the grace period
// ends with every client reconnected and no route left on the gateway.
func TestDrainLeavesNoRoutes(t *testing.T) {
	s := resolved(t, &Scenario{Clients: 300, Seed: 2,
		Admission:   models.AdmissionSpec{Kind: "token_bucket", Rate: 200, Burst: 20, RetryAfter: time.Second},
		Policies:    []policies.Spec{{Kind: "full", Base: 100 * time.Millisecond, Cap: 3200 * time.Millisecond}},
		Failure:     &models.FailureSpec{Kind: "drain", Grace: 3 * time.Second, Spread: true},
		DrainPolicy: &policies.Spec{Kind: "full", Base: 20 * time.Millisecond, Cap: 500 * time.Millisecond},
		Gateways:    &models.PoolSpec{Count: 2, HealthCheck: time.Second},
	})
	r := runFirst(t, s)
	if r.Drain == nil || r.Drain.LeftoverRoutes != 0 || r.Accepted != 300 || r.Drain.DrainMs <= 0 {
		t.Fatalf("drain = %+v, accepted %d; want 0 leftover routes and 300 back", r.Drain, r.Accepted)
	}
	if r.Unavailable == 0 || r.Drain.Unavailable != r.Unavailable {
		t.Errorf("unavailable %d (drain %d): the draining gateway answered no 503 before its health check", r.Unavailable, r.Drain.Unavailable)
	}
	if r.Policy != "full" {
		t.Errorf("policy label %q, want the listed policy's", r.Policy)
	}
}

// TestDatabaseRows: every accepted reconnect reads rows_per_sync rows.
func TestDatabaseRows(t *testing.T) {
	s := seedModel("full")
	s.Database = &models.DatabaseSpec{RowsPerSync: 25, ReadBudgetPerS: 10_000}
	resolved(t, s)
	r := runFirst(t, s)
	db := r.Database
	if db.RowsTotal != 25*r.Accepted || db.ClaimsTotal != r.Accepted {
		t.Errorf("rows %d claims %d, want %d and %d", db.RowsTotal, db.ClaimsTotal, 25*r.Accepted, r.Accepted)
	}
	// 5 accepts per 10 ms window is 500/s, so 12,500 rows/s at the peak:
	// above the 10,000 budget for every window that admits its full 5.
	if db.PeakRowsPerS != 12_500 {
		t.Errorf("peak %v rows/s, want 12500", db.PeakRowsPerS)
	}
	full := 0
	for _, a := range r.Series.Accepts {
		if a == 5 {
			full++
		}
	}
	if db.TimeAboveBudgetMs != float64(10*full) {
		t.Errorf("time above budget %v ms, want %d", db.TimeAboveBudgetMs, 10*full)
	}
}

// TestHeartbeatDetection: clients of a hung gateway notice within
// [idle - ping, idle], and no attempt comes before idle - ping.
func TestHeartbeatDetection(t *testing.T) {
	s := resolved(t, &Scenario{Clients: 500, Admission: models.AdmissionSpec{Kind: "unlimited"},
		Policies:  []policies.Spec{{Kind: "full", Base: 100 * time.Millisecond, Cap: time.Second}},
		Failure:   &models.FailureSpec{Kind: "hang"},
		Detection: &models.DetectionSpec{Kind: "heartbeat", Ping: 500 * time.Millisecond, Idle: 3 * time.Second}})
	r := runFirst(t, s)
	if d := r.Detection; d.FirstNoticeMs < 2500 || d.LastNoticeMs > 3000 || d.LastNoticeMs-d.FirstNoticeMs < 400 {
		t.Errorf("notices in [%v, %v] ms, want a spread inside [2500, 3000]", d.FirstNoticeMs, d.LastNoticeMs)
	}
	if r.ConnectMs.P50 < 2500 || lastConnectMs(r) > 3000 {
		t.Errorf("connects p50 %v max %v, want inside [2500, 3000]", r.ConnectMs.P50, lastConnectMs(r))
	}
}

// TestHangNeedsHeartbeat: a hung gateway sends no RST.
func TestHangNeedsHeartbeat(t *testing.T) {
	s := &Scenario{Clients: 5, Admission: models.AdmissionSpec{Kind: "unlimited"},
		Policies:  []policies.Spec{{Kind: "fixed", Base: time.Second}},
		Failure:   &models.FailureSpec{Kind: "hang"},
		Detection: &models.DetectionSpec{Kind: "reset"}}
	err := s.Resolve()
	if fe, ok := err.(*FieldError); !ok || fe.Path != "detection.kind" {
		t.Errorf("Resolve = %v, want an error on detection.kind", err)
	}
}
