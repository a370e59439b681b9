package sim

import (
	"math/big"
	"slices"
	"time"

	"stormsim/models"
	"stormsim/policies"
)

// result assembles the run's metrics, the core ones and those of every
// model that is on.
func (st *storm) result() Result {
	s := st.s
	for g := range st.end.lines {
		st.sampleLine(&st.end.lines[g], g, st.horizon+1)
	}
	res := st.rec.result(st.underTest.Spec.Label, s.Clients)
	if st.rec.tracked || st.end.cut {
		res.OutcomeResult = st.outcome()
		if !res.Converged {
			res.ConvergenceMs = nil
		}
	}
	if s.Detection != nil {
		first, last := st.noticeRange()
		res.Detection = &DetectionResult{FirstNoticeMs: ms(first), LastNoticeMs: ms(last)}
	}
	if s.Lease != nil && !st.draining {
		res.Reclaim = st.reclaim()
	}
	if s.Database != nil {
		res.Database = st.database(res.Series)
	}
	if st.draining {
		res.Drain = st.drainResult(res)
	}
	if s.ThenDrain != nil {
		res.Drain = thenDrain(s, st.underTest, st.seed)
	}
	return res
}

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

// noticeRange is the earliest and latest time a client noticed the failure.
func (st *storm) noticeRange() (first, last time.Duration) {
	first = st.noticeAt(0)
	last = first
	for c := 1; c < st.s.Clients; c++ {
		t := st.noticeAt(uint32(c))
		first, last = min(first, t), max(last, t)
	}
	return first, last
}

// reclaim computes the lease model: the dead gateway's routes linger until
// the reclaim sweep, except those of devices that reconnected first and so
// overwrote their own route. Device i's route is stale from the failure
// (t = 0) until min(connect_i, reclaim).
func (st *storm) reclaim() *ReclaimResult {
	s := st.s
	survivors := 1
	if s.Gateways != nil {
		survivors = s.Gateways.Count - 1
	}
	r := s.Lease.Reclaim(st.seed, survivors)
	lo, hi := models.ReclaimBound(s.Lease.Duration, s.Lease.RenewEvery, s.Lease.SweepEvery)
	out := &ReclaimResult{ReclaimMs: ms(r), BoundLoMs: ms(lo), BoundHiMs: ms(hi), StaleRoutes: []int64{}}

	var total durationSum
	var longest time.Duration
	// The series' window, or coarser when the reclaim lies beyond the
	// series' limit (a lease far longer than the storm).
	window := st.rec.width
	for (r+window-1)/window > time.Duration(st.rec.limit) {
		window *= 2
	}
	if window != st.rec.width {
		coarse := ms(window)
		out.StaleRoutesWindowMs = &coarse
	}
	windows := int((r + window - 1) / window) // up to the window holding the reclaim
	out.StaleRoutes = make([]int64, windows)
	connectedBy := int64(0) // connects at or before the current window's end
	w := 0
	st.rec.eachConnect(func(rank int64, t time.Duration) {
		stale := min(t, r)
		total.add(stale)
		longest = max(longest, stale)
		for w < windows && time.Duration(w+1)*window < t {
			out.StaleRoutes[w] = int64(s.Clients) - connectedBy
			w++
		}
		connectedBy = rank
	})
	for ; w < windows; w++ {
		out.StaleRoutes[w] = int64(s.Clients) - connectedBy
	}
	// The reclaim ends every remaining stale route.
	for w := range out.StaleRoutes {
		if time.Duration(w+1)*window >= r {
			out.StaleRoutes[w] = 0
		}
	}
	if never := int64(s.Clients) - st.rec.count; never > 0 {
		for i := int64(0); i < never; i++ {
			total.add(r)
		}
		longest = r
	}
	out.StaleRouteSeconds = total.seconds()
	out.MaxPresenceErrorMs = ms(longest)
	if s.Lease.Delivery == models.DeliveryRouteDirected {
		out.BlackholeRouteSeconds, out.BlackholeMaxMs = out.StaleRouteSeconds, out.MaxPresenceErrorMs
	}
	return out
}

// durationSum adds durations exactly, without overflow for any realistic
// storm (whole seconds and leftover nanoseconds).
type durationSum struct{ secs, nanos int64 }

func (d *durationSum) add(t time.Duration) {
	d.secs += int64(t / time.Second)
	d.nanos += int64(t % time.Second)
	if d.nanos >= int64(time.Second) {
		d.secs, d.nanos = d.secs+1, d.nanos-int64(time.Second)
	}
}

func (d *durationSum) seconds() float64 { return float64(d.secs) + float64(d.nanos)/1e9 }

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

// drainResult reports a planned drain: each connection is closed right after
// its goaway, releasing its route, so the gateway holds a route at exit only
// for a client whose goaway would come after the grace period.
func (st *storm) drainResult(res Result) *DrainResult {
	s := st.s
	last, _ := res.Convergence()
	out := &DrainResult{Clients: s.Clients, GraceMs: ms(s.Failure.Grace), DrainMs: last - ms(s.Disconnect.At),
		Attempts: res.Attempts, Rejected: res.Rejected, Unavailable: res.Unavailable}
	for c := 0; c < s.Clients; c++ {
		if s.Failure.GoawayAt(st.seed, uint64(c)) > s.Failure.Grace {
			out.LeftoverRoutes++
		}
	}
	return out
}

// thenDrain runs the drain that follows the storm: every client, now on the
// survivor, gets a goaway and reconnects to a fresh gateway. It is a storm
// of its own, timed from the drain's start.
func thenDrain(s *Scenario, underTest *policies.Backoff, seed uint64) *DrainResult {
	d := *s
	d.Failure = &models.FailureSpec{Kind: models.FailureDrain, Grace: s.ThenDrain.Grace, Spread: s.ThenDrain.Spread}
	d.Disconnect, d.Detection, d.Lease, d.Gateways, d.Database, d.ThenDrain = Disconnect{}, nil, nil, nil, nil, nil
	if s.ThenDrain.Admission != nil {
		d.Admission = *s.ThenDrain.Admission
	}
	// The same seed: a client's draws are keyed by (client, attempt within
	// the round), so its drain round replays its storm round's numbers, as
	// the real client (gateway/client) does.
	st := newStorm(&d, underTest, seed)
	runStorm(st, wheel{ringLimit: maxRingBuckets, minLook: minLook}, nil)
	return st.result().Drain
}
