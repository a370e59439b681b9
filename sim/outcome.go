package sim

import "stormsim/models"

// outcome says how the storm ended at its horizon, by the rule the lab
// shares (models.Judge).
func (st *storm) outcome() *OutcomeResult {
	e := st.end
	tail := e.tail.Tail()
	out := &OutcomeResult{HorizonMs: ms(st.horizon), Connected: st.rec.count, TimedOut: e.timedOut, Wasted: e.wasted,
		Shed: e.shed, Skipped: e.skips, Waiting: e.waiting, QueueWaitMs: e.waits.quantiles(),
		TailBusy: tail.BusyFraction(), TailUseful: tail.UsefulFraction()}
	out.Outcome = models.Judge(st.rec.count+st.rec.abandoned == int64(st.s.Clients), tail)
	out.Converged, out.Metastable = out.Outcome == models.OutcomeConverged, out.Outcome == models.OutcomeMetastable
	return out
}
