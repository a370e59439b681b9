package sim

import "stormsim/policies"

// Run simulates one storm of s (already resolved) in which every client
// reconnects with backoff b, drawing randomness from seed.
func Run(s *Scenario, b *policies.Backoff, seed uint64) Result {
	return Result{Policy: b.Spec.Label, Clients: s.Clients}
}
