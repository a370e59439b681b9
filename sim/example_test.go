package sim_test

import (
	"fmt"
	"time"

	"stormsim/models"
	"stormsim/policies"
	"stormsim/sim"
)

// The seed document's discrete backoff model: 1,000 clients drop at t = 0,
// the server admits 5 handshakes per 10 ms slot, and clients back off
// exponentially without jitter (100 ms doubling to 3.2 s). Each round
// admits 5 of the crowd, so 200 rounds make 1000 + 995 + ... + 5 = 100,500
// attempts, and the last round starts at 3.1 s + 194 * 3.2 s = 623.9 s.
func ExampleRun() {
	s := &sim.Scenario{
		Clients:   1000,
		Admission: models.AdmissionSpec{Kind: "slots", Slot: 10 * time.Millisecond, PerSlot: 5},
		Policies:  []policies.Spec{{Kind: "exponential", Base: 100 * time.Millisecond, Cap: 3200 * time.Millisecond}},
	}
	if err := s.Resolve(); err != nil {
		fmt.Println(err)
		return
	}
	b, _ := policies.New(s.Policies[0])
	r := sim.Run(s, b, s.Seed)
	last, _ := r.Convergence()
	fmt.Println(r.Attempts, r.PeakAttemptsPerWindow, last)
	// Output: 100500 1000 623900
}
