package sim

import (
	"time"

	"stormsim/models"
	"stormsim/policies"
)

// result assembles the run's metrics, the core ones and those of every
// model that is on.
func (st *storm) result() Result {
	s := st.s
	res := st.rec.result(st.underTest.Spec.Label, s.Clients)
	if s.Detection != nil {
		first, last := st.noticeRange()
		res.Detection = &DetectionResult{FirstNoticeMs: ms(first), LastNoticeMs: ms(last)}
	}
	if s.Lease != nil && !st.draining {
		res.Reclaim = st.reclaim()
	}
	if s.Database != nil {
		res.Database = st.database(res.Series.Accepts)
	}
	if st.draining {
		res.Drain = st.drainResult(res)
	}
	if s.ThenDrain != nil {
		res.Drain = thenDrain(s, st.underTest, st.seed)
	}
	return res
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
	window := s.Metrics.Window
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
	if s.Lease.Delivery == "route_directed" {
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

// database derives the database load from the accepts: each accepted
// reconnect claims its route (claim_cost statements) and syncs rows_per_sync
// rows, at the time it is admitted.
func (st *storm) database(accepts []int64) *DatabaseResult {
	db := st.s.Database
	window := st.s.Metrics.Window
	out := &DatabaseResult{RowsPerSync: db.RowsPerSync, ReadBudgetPerS: db.ReadBudgetPerS, RowsPerS: make([]float64, len(accepts))}
	perSecond := float64(time.Second) / float64(window)
	var above int64
	for w, a := range accepts {
		rows := a * int64(db.RowsPerSync)
		out.RowsTotal += rows
		out.ClaimsTotal += a * int64(db.ClaimCost)
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
	out := &DrainResult{Clients: s.Clients, GraceMs: ms(s.Failure.Grace), DrainMs: res.ConvergenceMs - ms(s.Disconnect.At),
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
	d.Failure = &models.FailureSpec{Kind: "drain", Grace: s.ThenDrain.Grace, Spread: s.ThenDrain.Spread}
	d.Disconnect, d.Detection, d.Lease, d.Gateways, d.Database, d.ThenDrain = Disconnect{}, nil, nil, nil, nil, nil
	if s.ThenDrain.Admission != nil {
		d.Admission = *s.ThenDrain.Admission
	}
	// The same seed: a client's draws are keyed by (client, attempt within
	// the round), so its drain round replays its storm round's numbers, as
	// the real client (gateway/client) does.
	st := newStorm(&d, underTest, seed)
	newEngine(st).run()
	return st.result().Drain
}
