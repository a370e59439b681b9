package models

import "stormsim/policies/rng"

// testBits gives well-spread test bits from a counter.
func testBits(i uint64) uint64 { return rng.Draw(1, i, 0, rng.StreamNetwork) }
