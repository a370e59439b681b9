package sim

import "math/big"

// outcome says how the storm ended at its horizon.
func (st *storm) outcome() *OutcomeResult {
	e := st.end
	out := &OutcomeResult{HorizonMs: ms(st.horizon), Connected: st.rec.count, TimedOut: e.timedOut, Wasted: e.wasted,
		Shed: e.shed, Skipped: e.skips, QueueWaitMs: e.waits.quantiles()}
	out.Converged = st.rec.count+st.rec.abandoned == int64(st.s.Clients)
	survivors := int64(len(st.queues))
	if st.pool != nil {
		survivors = int64(len(st.pool.adms) - 1)
	}
	span := st.horizon - e.tailFrom
	if survivors > 0 && span > 0 {
		out.TailBusy = float64(e.tailBusy) / (float64(span) * float64(survivors))
	}
	if e.tailServed > 0 {
		out.TailUseful = float64(e.tailUseful) / float64(e.tailServed)
	}
	// Busy >= 90 % and useful < 10 %, compared exactly.
	busy := new(big.Int).Mul(big.NewInt(int64(e.tailBusy)), big.NewInt(10))
	capacity := new(big.Int).Mul(big.NewInt(int64(span)), big.NewInt(9*survivors))
	switch {
	case out.Converged:
		out.Outcome = OutcomeConverged
	case survivors > 0 && e.tailServed > 0 && busy.Cmp(capacity) >= 0 && e.tailUseful*10 < e.tailServed:
		out.Outcome, out.Metastable = OutcomeMetastable, true
	default:
		out.Outcome = OutcomeUnfinished
	}
	return out
}
