package sim

import (
	"reflect"
	"testing"
	"time"

	"stormsim/models"
	"stormsim/policies"
)

// TestCapacityQueuesHandshakes: three clients at t = 0, admission
// unlimited, a gateway completing 10 admitted handshakes a second. All
// three arrive at 0, are decided at 0, 100 and 200 ms and connected when
// each 100 ms of work ends: attempts count at their arrival, accepts at
// their decision.
func TestCapacityQueuesHandshakes(t *testing.T) {
	s := resolved(t, &Scenario{Clients: 3, Admission: models.AdmissionSpec{Kind: "unlimited"},
		Policies: []policies.Spec{{Kind: "fixed", Base: time.Second}},
		Metrics:  Metrics{Window: 100 * time.Millisecond},
		Capacity: &models.CapacitySpec{AdmitPerS: 10}})
	r := runFirst(t, s)
	want := Quantiles{P50: 200, P90: 300, P99: 300, Max: 300}
	if r.ConnectMs != want || !reflect.DeepEqual(r.Series.Attempts, []int64{3, 0, 0}) || !reflect.DeepEqual(r.Series.Accepts, []int64{1, 1, 1}) {
		t.Errorf("connects %+v, attempts %v and accepts %v per window; want %+v, [3 0 0], [1 1 1]", r.ConnectMs, r.Series.Attempts, r.Series.Accepts, want)
	}
}

// TestCapacityDecidesAtTurn: four clients at t = 0, one admission per 1 s
// slot, a fixed 1 s retry; an admitted handshake takes 100 ms, a rejected one
// 10 ms. Worked by hand:
//
//	c0 decided 0 (admitted), done 100
//	c1, c2, c3 decided 100, 110, 120 (slot 0 used), told at 110, 120, 130
//	c1 back at 1110, decided 1110 (admitted, slot 1), done 1210
//	c2 back at 1120, waits, decided 1210 (rejected), told 1220
//	c3 back at 1130, decided 1220 (rejected), told 1230
//	c2 back at 2220 (admitted, slot 2), done 2320
//	c3 back at 2230, decided 2320 (rejected), told 2330
//	c3 back at 3330 (admitted), done 3430
//
// so 10 attempts and the last client connected at 3430 ms.
func TestCapacityDecidesAtTurn(t *testing.T) {
	s := resolved(t, &Scenario{Clients: 4, Admission: models.AdmissionSpec{Kind: "slots", Slot: time.Second, PerSlot: 1},
		Policies: []policies.Spec{{Kind: "fixed", Base: time.Second}},
		Metrics:  Metrics{Window: time.Second},
		Capacity: &models.CapacitySpec{AdmitPerS: 10, RejectPerS: 100}})
	r := runFirst(t, s)
	if r.Attempts != 10 || lastConnectMs(r) != 3430 || !reflect.DeepEqual(r.Series.Accepts, []int64{1, 1, 1, 1}) {
		t.Errorf("attempts %d, last connect %v ms, accepts per second %v; want 10, 3430, [1 1 1 1]", r.Attempts, lastConnectMs(r), r.Series.Accepts)
	}
}

// TestCapacityDecidesOnArrival is TestCapacityDecidesAtTurn's storm with
// decide: arrival, worked by hand (admitted 100 ms, rejected 10 ms, the
// rejections answered without waiting behind the claim but adding their
// 10 ms to it):
//
//	c0 at 0 admitted (slot 0), done 100; c1, c2, c3 at 0 rejected, told at 10
//	(the gateway busy until 100 + 3*10 = 130)
//	c1, c2, c3 back at 1010: one admitted (slot 1), done 1110; two told at 1020
//	the two back at 2020: one admitted (slot 2), done 2120; one told at 2030
//	the last back at 3030: admitted, done 3130
//
// so 10 attempts (4, 3, 2, 1 per second) and the last client connected at
// 3130 ms; and three clients into an unlimited gateway at 10/s connect at
// 100, 200 and 300 ms, as when deciding at the turn.
func TestCapacityDecidesOnArrival(t *testing.T) {
	s := resolved(t, &Scenario{Clients: 4, Admission: models.AdmissionSpec{Kind: "slots", Slot: time.Second, PerSlot: 1},
		Policies: []policies.Spec{{Kind: "fixed", Base: time.Second}},
		Metrics:  Metrics{Window: time.Second},
		Capacity: &models.CapacitySpec{AdmitPerS: 10, RejectPerS: 100, Decide: models.DecideOnArrival}})
	r := runFirst(t, s)
	if r.Attempts != 10 || lastConnectMs(r) != 3130 || !reflect.DeepEqual(r.Series.Attempts, []int64{4, 3, 2, 1}) ||
		!reflect.DeepEqual(r.Series.Accepts, []int64{1, 1, 1, 1}) {
		t.Errorf("attempts %d, last connect %v ms, attempts %v and accepts %v per second; want 10, 3130, [4 3 2 1], [1 1 1 1]",
			r.Attempts, lastConnectMs(r), r.Series.Attempts, r.Series.Accepts)
	}
	q := resolved(t, &Scenario{Clients: 3, Admission: models.AdmissionSpec{Kind: "unlimited"},
		Policies: []policies.Spec{{Kind: "fixed", Base: time.Second}},
		Metrics:  Metrics{Window: 100 * time.Millisecond},
		Capacity: &models.CapacitySpec{AdmitPerS: 10, Decide: models.DecideOnArrival}})
	if got, want := runFirst(t, q).ConnectMs, (Quantiles{P50: 200, P90: 300, P99: 300, Max: 300}); got != want {
		t.Errorf("unlimited: connects %+v, want %+v", got, want)
	}
}

// TestCapacityDecisionStage: four clients at t = 0, a token bucket of
// burst 1 refilling one token per 100 ms, a fixed 150 ms retry, and a
// decision stage of 20 ms per handshake (decide_per_s 50) before 10 ms
// claims. Worked by hand:
//
//	c0-c3 at 0 decided 20, 40, 60, 80: c0 admitted (done 30, next token
//	at 120), c1-c3 rejected and told then, back at 190, 210, 230
//	c1 decided 210 (the stage free since 80), admitted (token at 120),
//	done 220, next token at 310; c2 decided 230, c3 250: rejected, back
//	380, 400
//	c2 decided 400, admitted (done 410, next token at 500); c3 decided
//	420, rejected, back 570, decided 590, admitted, done 600
//
// arrivals per 100 ms window [4 1 2 1 1 1] (at 0, 190, 210 and 230, 380,
// 400, 570), decisions [4 0 3 0 2 1], last connect 600 ms. And
// three clients into an unlimited gateway deciding 50/s with claims at
// 10/s are decided at 20, 40, 60 and connected at 120, 220, 320: the
// claims queue behind the decisions. Cut at 50 ms, two of them are
// decided (at 20 and 40) and none is answered; decided on arrival with no
// stage, no decided series is kept (it would be the attempts).
func TestCapacityDecisionStage(t *testing.T) {
	s := resolved(t, &Scenario{Clients: 4, Admission: models.AdmissionSpec{Kind: "token_bucket", Rate: 10, Burst: 1},
		Policies: []policies.Spec{{Kind: "fixed", Base: 150 * time.Millisecond}},
		Metrics:  Metrics{Window: 100 * time.Millisecond},
		Capacity: &models.CapacitySpec{AdmitPerS: 100, Decide: models.DecideOnArrival, DecidePerS: 50}})
	r := runFirst(t, s)
	decisions := r.Series.Decided
	if r.Attempts != 10 || lastConnectMs(r) != 600 || !reflect.DeepEqual(r.Series.Attempts, []int64{4, 1, 2, 1, 1, 1}) ||
		!reflect.DeepEqual(decisions, []int64{4, 0, 3, 0, 2, 1}) {
		t.Errorf("attempts %d, last connect %v ms, attempts %v and decisions %v per window; want 10, 600, [4 1 2 1 1 1], [4 0 3 0 2 1]",
			r.Attempts, lastConnectMs(r), r.Series.Attempts, decisions)
	}
	q := resolved(t, &Scenario{Clients: 3, Admission: models.AdmissionSpec{Kind: "unlimited"},
		Policies: []policies.Spec{{Kind: "fixed", Base: time.Second}},
		Metrics:  Metrics{Window: 100 * time.Millisecond},
		Capacity: &models.CapacitySpec{AdmitPerS: 10, Decide: models.DecideOnArrival, DecidePerS: 50}})
	r = runFirst(t, q)
	if want := (Quantiles{P50: 220, P90: 320, P99: 320, Max: 320}); r.ConnectMs != want || !reflect.DeepEqual(r.Series.Attempts, []int64{3}) {
		t.Errorf("unlimited: connects %+v, attempts per window %v; want %+v, [3]", r.ConnectMs, r.Series.Attempts, want)
	}
	q.Horizon = 50 * time.Millisecond
	r = runFirst(t, q)
	if !reflect.DeepEqual(r.Series.Decided, []int64{2}) || !reflect.DeepEqual(r.Series.Attempts, []int64{3}) || r.Accepted != 0 {
		t.Errorf("cut at 50 ms: decided %v, attempts %v, accepted %d; want [2], [3], 0", r.Series.Decided, r.Series.Attempts, r.Accepted)
	}
	q.Horizon, q.Capacity.DecidePerS = 0, 0
	if r = runFirst(t, q); r.Series.Decided != nil {
		t.Errorf("decided on arrival: decided series %v, want none", r.Series.Decided)
	}
}

// lastConnectMs is a result's convergence time in ms, 0 when it has none.
func lastConnectMs(r Result) float64 {
	ms, _ := r.Convergence()
	return ms
}
