package models

import "stormsim/policies"

// testBits gives well-spread test bits from a counter.
func testBits(i uint64) uint64 { return policies.Draw(1, i, 0, policies.StreamNetwork) }
