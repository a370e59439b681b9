package models

import "stormsim/internal/param"

// DatabaseSpec is the database work a reconnect causes: one route claim and
// a sync that reads rows_per_sync rows.
type DatabaseSpec struct {
	RowsPerSync    int     `yaml:"rows_per_sync"`     // rows read by one reconnect's sync (the seed: 25)
	ClaimCost      int     `yaml:"claim_cost"`        // statements per route claim (default 1)
	ReadBudgetPerS float64 `yaml:"read_budget_per_s"` // sustainable sync reads, rows/s; 0 = none
}

// Validate checks the spec and fills in defaults.
func (d *DatabaseSpec) Validate() error {
	if d.RowsPerSync == 0 {
		d.RowsPerSync = 25
	}
	if d.ClaimCost == 0 {
		d.ClaimCost = 1
	}
	if d.ReadBudgetPerS < 0 {
		return &param.Error{Key: "read_budget_per_s", Problem: "must be >= 0", Got: d.ReadBudgetPerS}
	}
	return nil
}
