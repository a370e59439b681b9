package sim

import (
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
				Policies:  []policies.Spec{{Name: "fixed", Base: 100 * time.Millisecond}},
				Network: &models.NetworkSpec{RTT: models.Distribution{Value: 20 * time.Millisecond},
					ServerTime: models.Distribution{Value: 50 * time.Millisecond}, RejectTime: c.rejectTime}})
			r := runFirst(t, s)
			if r.ConvergenceMs != c.wantConvergence || r.Attempts != 3 || r.ConnectMs.P50 != 70 {
				t.Errorf("convergence %v ms, attempts %d, p50 %v ms; want %v, 3, 70", r.ConvergenceMs, r.Attempts, r.ConnectMs.P50, c.wantConvergence)
			}
		})
	}
}
