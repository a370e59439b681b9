package sim

import (
	"slices"
	"time"
)

// database derives the database load from the accepts: each admitted
// handshake claims its route (claim_cost statements), and each one that
// connects its client syncs rows_per_sync rows. A wasted claim (its client
// gone) syncs nothing.
func (st *storm) database(series Series) *DatabaseResult {
	db := st.s.Database
	window := st.rec.width
	synced := series.Accepts
	if series.Goodput != nil {
		synced = series.Goodput
	}
	out := &DatabaseResult{RowsPerSync: db.RowsPerSync, ReadBudgetPerS: db.ReadBudgetPerS, RowsPerS: make([]float64, len(synced))}
	perSecond := float64(time.Second) / float64(window)
	var above int64
	claims := series.Accepts
	if series.Goodput != nil {
		// With an outcome the claims done are counted when they end:
		// useful and wasted; a handshake skipped after its token, or still
		// waiting for its claim at the horizon, claimed nothing.
		claims = slices.Concat(series.Goodput, series.Wasted)
	}
	for _, a := range claims {
		out.ClaimsTotal += a * int64(db.ClaimCost)
	}
	for w, a := range synced {
		rows := a * int64(db.RowsPerSync)
		out.RowsTotal += rows
		out.RowsPerS[w] = float64(rows) * perSecond
		out.PeakRowsPerS = max(out.PeakRowsPerS, out.RowsPerS[w])
		if db.ReadBudgetPerS > 0 && out.RowsPerS[w] > db.ReadBudgetPerS {
			above++
		}
	}
	out.TimeAboveBudgetMs = ms(time.Duration(above) * window)
	return out
}
