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
	out.Outcome = models.Judge(st.allBack(), tail)
	out.Converged, out.Metastable = out.Outcome == models.OutcomeConverged, out.Outcome == models.OutcomeMetastable
	return out
}

// allBack reports whether every client ended connected or gave up
// (max_attempts). A deploy's clients connect once per goaway, so there it
// is the clients connected at the end that count, not the connects.
func (st *storm) allBack() bool {
	connected := st.rec.count
	if st.deploy != nil {
		connected = st.deploy.online
	}
	return connected+st.rec.abandoned == int64(st.s.Clients)
}
