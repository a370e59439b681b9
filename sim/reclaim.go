package sim

import (
	"stormsim/models"
	"time"
)

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
