package lab

import (
	"testing"
	"time"

	"stormsim/calibrate/measured"
	"stormsim/gateway/storm"
	"stormsim/models"
	"stormsim/policies"
	"stormsim/sim"
)

// TestOutcomeRuleShared gives the simulator and the lab the same storm:
// the simulator runs it, and the lab judges the survivor's claims log
// that storm writes, worked out by hand. Both must reach the same
// verdict, from the same busy and useful fractions.
func TestOutcomeRuleShared(t *testing.T) {
	storm1000 := func(horizon time.Duration, capacity models.CapacitySpec, admission models.AdmissionSpec) *sim.Scenario {
		s := &sim.Scenario{Clients: 1000, Horizon: horizon, Admission: admission, Metrics: sim.Metrics{Window: time.Second},
			Policies: []policies.Spec{{Kind: "fixed", Base: 100 * time.Millisecond, Timeout: time.Second}}, Capacity: &capacity}
		if err := s.Resolve(); err != nil {
			t.Fatal(err)
		}
		return s
	}
	cases := []struct {
		name      string
		s         *sim.Scenario
		claims    []measured.Claim
		connected int
		want      models.Outcome
	}{{
		// One survivor claiming 100/s for everyone, decided at the turn:
		// claim k is decided at 10k ms and done 10 ms later; the first
		// 100 connect, every later one is wasted. Cut at 60 s, the last
		// claim decided is the one at 59.99 s. In the tail [54, 60) s the
		// survivor is always busy and none of its 600 claims is useful.
		name: "unlimited admission: metastable",
		s:    storm1000(time.Minute, models.CapacitySpec{AdmitPerS: 100}, models.AdmissionSpec{Kind: "unlimited"}),
		claims: func() (cs []measured.Claim) {
			for k := range 6000 {
				cs = append(cs, measured.Claim{DecidedMs: float64(10 * k), DoneMs: float64(10 * (k + 1)), Wasted: k >= 100})
			}
			return cs
		}(),
		connected: 100,
		want:      models.OutcomeMetastable,
	}, {
		// A bucket of 90/s (burst 10) taken on arrival before claims of
		// 10 ms: 10 claims at 0, then every 100 ms 9 decided at once and
		// done 10, 20, ..., 90 ms later, each in time; the rest rejected
		// at no cost. Cut at 5 s, the tail [4.5, 5) s has the survivor
		// busy 90 % of the time, and all its 45 claims useful: a storm
		// still recovering. Counting the thousands of rejections in the
		// tail as served work (fewer than 2 % of them useful) would call
		// it metastable.
		name: "token bucket below the claim rate: unfinished",
		s: storm1000(5*time.Second, models.CapacitySpec{AdmitPerS: 100, Decide: models.DecideOnArrival},
			models.AdmissionSpec{Kind: "token_bucket", Rate: 90, Burst: 10}),
		claims: func() (cs []measured.Claim) {
			for j := range 10 {
				cs = append(cs, measured.Claim{DecidedMs: 0, DoneMs: float64(10 * (j + 1))})
			}
			for r := 1; r < 50; r++ {
				for j := range 9 {
					cs = append(cs, measured.Claim{DecidedMs: float64(100 * r), DoneMs: float64(100*r + 10*(j+1))})
				}
			}
			return cs
		}(),
		connected: 10 + 49*9,
		want:      models.OutcomeUnfinished,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := policies.New(c.s.Policies[0])
			if err != nil {
				t.Fatal(err)
			}
			simulated := sim.Run(c.s, b, c.s.Seed)
			crash := storm.Summary{Reconnected: c.connected}
			horizonMs := float64(c.s.Horizon) / float64(time.Millisecond)
			real := outcomeOf(crash, c.claims, nil, horizonMs, 1000)
			if simulated.Connected != int64(c.connected) {
				t.Fatalf("the simulator connected %d, the claims log says %d: not the same storm", simulated.Connected, c.connected)
			}
			if simulated.Outcome != c.want || real.Outcome != string(c.want) {
				t.Errorf("simulator %s, lab %s; want %s", simulated.Outcome, real.Outcome, c.want)
			}
			if simulated.TailBusy != real.TailBusy || simulated.TailUseful != real.TailUseful {
				t.Errorf("tail busy %v and useful %v in the simulator, %v and %v in the lab: they must agree",
					simulated.TailBusy, simulated.TailUseful, real.TailBusy, real.TailUseful)
			}
		})
	}
}
