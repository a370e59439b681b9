package sim

import (
	"reflect"
	"testing"
	"time"

	"stormsim/models"
	"stormsim/policies"
)

// TestRejectTimeAnswersRejectionsSooner: two clients send at t = 0 over a
// fixed 20 ms rtt with a 50 ms server time; one handshake is admitted per
// 100 ms slot and a rejected client waits a fixed 100 ms. Both arrive at
// 10 ms; client 0 is admitted and connected at 10 + 10 + 50 = 70 ms.
// Client 1 is rejected: with server time on every answer it hears so at
// 70 ms, sends again at 170, arrives at 180 (slot 1, admitted) and is
// connected at 240 ms; with a reject time of 0 it hears at 20 ms, arrives
// again at 130 (slot 1) and is connected at 190 ms.
func TestRejectTimeAnswersRejectionsSooner(t *testing.T) {
	zero := models.Distribution{}
	cases := []struct {
		name            string
		rejectTime      *models.Distribution
		wantConvergence float64
	}{
		{"server time on every answer", nil, 240},
		{"rejections answered after the rtt", &zero, 190},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := resolved(t, &Scenario{Clients: 2,
				Admission: models.AdmissionSpec{Kind: "slots", Slot: 100 * time.Millisecond, PerSlot: 1},
				Policies:  []policies.Spec{{Kind: "fixed", Base: 100 * time.Millisecond}},
				Network: &models.NetworkSpec{RTT: models.Distribution{Value: 20 * time.Millisecond},
					ServerTime: models.Distribution{Value: 50 * time.Millisecond}, RejectTime: c.rejectTime}})
			r := runFirst(t, s)
			if lastConnectMs(r) != c.wantConvergence || r.Attempts != 3 || r.ConnectMs.P50 != 70 {
				t.Errorf("convergence %v ms, attempts %d, p50 %v ms; want %v, 3, 70", lastConnectMs(r), r.Attempts, r.ConnectMs.P50, c.wantConvergence)
			}
		})
	}
}

// TestMeasuredLegsPlaceTheDecision: one handshake per 100 ms slot, a fixed
// 100 ms retry wait, no server time, rtt 10 ms, two clients sending at 0.
// With the rtt's halves both first attempts are decided at 5 ms (client 0
// connects at 10, client 1 hears at 10, is decided again at 115 in slot 1
// and connects at 120). With a first out leg of 80 ms both are decided at
// 80; client 0 connects at 80 + 5 = 85, client 1 hears at 85, sends at 185,
// is decided at 190 (slot 1, rtt half again) and connects at 195. With all
// four legs (first 80 out, 40 back; later 30 out, 20 back) client 0
// connects at 120, client 1 hears at 120, sends at 220, is decided at 250
// (slot 2) and connects at 270.
func TestMeasuredLegsPlaceTheDecision(t *testing.T) {
	ms := func(v time.Duration) *models.Distribution { return &models.Distribution{Value: v * time.Millisecond} }
	cases := []struct {
		name                       string
		out, back, firstOut, first *models.Distribution // first: first_back
		wantP50, wantLastMs        float64
		wantAttemptsPer25ms        []int64
	}{
		{"rtt halves", nil, nil, nil, nil, 10, 120, []int64{2, 0, 0, 0, 1}},
		{"first out leg", nil, nil, ms(80), nil, 85, 195, []int64{0, 0, 0, 2, 0, 0, 0, 1}},
		{"all four legs", ms(30), ms(20), ms(80), ms(40), 120, 270, []int64{0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runFirst(t, twoClientsOneSlot(t, &models.NetworkSpec{RTT: *ms(10), OutLeg: c.out, BackLeg: c.back,
				FirstOutLeg: c.firstOut, FirstBackLeg: c.first}))
			if r.ConnectMs.P50 != c.wantP50 || lastConnectMs(r) != c.wantLastMs || r.Attempts != 3 ||
				!reflect.DeepEqual(r.Series.Attempts, c.wantAttemptsPer25ms) {
				t.Errorf("p50 %v, last %v, attempts %d, per 25 ms %v; want %v, %v, 3, %v", r.ConnectMs.P50, lastConnectMs(r),
					r.Attempts, r.Series.Attempts, c.wantP50, c.wantLastMs, c.wantAttemptsPer25ms)
			}
		})
	}
}

// twoClientsOneSlot is two clients sending at 0 over net, one handshake
// admitted per 100 ms slot, a fixed 100 ms retry wait, 25 ms windows.
func twoClientsOneSlot(t *testing.T, net *models.NetworkSpec) *Scenario {
	return resolved(t, &Scenario{Clients: 2,
		Admission: models.AdmissionSpec{Kind: "slots", Slot: 100 * time.Millisecond, PerSlot: 1},
		Policies:  []policies.Spec{{Kind: "fixed", Base: 100 * time.Millisecond}},
		Metrics:   Metrics{Window: 25 * time.Millisecond},
		Network:   net})
}
