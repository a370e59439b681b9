package sim

import (
	"encoding/binary"
	"slices"
	"time"

	"stormsim/internal/quantile"
)

// recorder accumulates per-window counts and connect times.
type recorder struct {
	windows
	attempts    windowSeries
	accepts     windowSeries
	rejects     windowSeries
	decided     windowSeries // admission decisions by when made (decisions runs)
	goodput     windowSeries // claims done whose answer reached the client in time (tracked runs)
	wasted      windowSeries // claims done for clients that had gone (tracked runs)
	queue       windowSeries // handshakes waiting at each window's end, all gateways (tracked runs)
	abandoned   int64
	refused     int64
	unavailable int64
	gateways    []gatewaySeries // per pool gateway; empty without a pool
	tracked     bool            // goodput and queue are kept
	decisions   bool            // decided is kept (models.CapacitySpec.DecidesApart)
	allGateways bool            // gateway 0 serves too (a deploy), so its series are kept

	// Connect times arrive in non-decreasing order without network latency;
	// then they are kept as varint deltas (2-3 bytes a client instead of 8).
	// A decrease switches to a plain slice.
	deltas   []byte
	last     time.Duration
	connects []time.Duration
	count    int64
}

type gatewaySeries struct{ attempts, accepts, rejects, goodput, wasted, queue windowSeries }

// init prepares the recorder; tracked adds the goodput and queue series,
// decisions the decided one.
func (r *recorder) init(window time.Duration, gateways, clients int, tracked, decisions bool) {
	r.width, r.tracked, r.decisions = window, tracked, decisions
	r.deltas = make([]byte, 0, 2*clients+16) // most gaps fit two varint bytes
	r.gateways = make([]gatewaySeries, gateways)
	r.queue.level = true
	all := []*windowSeries{&r.attempts, &r.accepts, &r.rejects, &r.goodput, &r.wasted, &r.queue}
	for g := range r.gateways {
		gs := &r.gateways[g]
		gs.queue.level = true
		all = append(all, &gs.attempts, &gs.accepts, &gs.rejects, &gs.goodput, &gs.wasted, &gs.queue)
	}
	per := 3
	if tracked {
		per = 6
	}
	n := len(all) / 6 * per
	if decisions {
		all = append(all, &r.decided)
		n++
	}
	r.limit = seriesLimit(n)
	for _, ws := range all {
		r.track(ws)
	}
}

// attempt records an attempt that reached gateway gw at t, in the window
// of t, and, when the gateway was done with it before the horizon
// (settled), what it got in the window of its decision: out, or skipped
// when dropped (admitted, then dropped at its claim's turn). Shed and
// skipped handshakes are neither accepted nor rejected.
func (r *recorder) attempt(t, decided time.Duration, settled bool, out outcome, gw int, dropped bool) {
	w := r.index(t)
	r.attempts.add(w, 1)
	if len(r.gateways) > 0 && (gw > 0 || gw == 0 && r.allGateways) {
		r.gateways[gw].attempts.add(w, 1)
	}
	if !settled {
		return
	}
	if decided != t {
		w = r.index(decided)
	}
	switch {
	case dropped, out == shed, out == skipped:
		return
	case out == admitted:
		r.accepts.add(w, 1)
		if len(r.gateways) > 0 {
			r.gateways[gw].accepts.add(w, 1)
		}
		return
	case out == refused:
		r.refused++
	case out == unavailable:
		r.unavailable++
	}
	r.rejects.add(w, 1)
	if len(r.gateways) > 0 && (gw > 0 || gw == 0 && r.allGateways) {
		r.gateways[gw].rejects.add(w, 1)
	}
}

// decision records an admission decision made at t, before the horizon.
func (r *recorder) decision(t time.Duration) { r.decided.add(r.index(t), 1) }

// plainAttempt is attempt for a plain storm's attempt, settled at its
// arrival t (before the horizon) at the one gateway, admitted or not.
func (r *recorder) plainAttempt(t time.Duration, admitted bool) {
	w := r.index(t)
	r.attempts.add(w, 1)
	if admitted {
		r.accepts.add(w, 1)
	} else {
		r.rejects.add(w, 1)
	}
}

// claimed records a route claim whose answer left gateway gw at t: useful
// when its client was still there to get it, wasted when not.
func (r *recorder) claimed(t time.Duration, gw int, useful bool) {
	w := r.index(t)
	series := &r.wasted
	if useful {
		series = &r.goodput
	}
	series.add(w, 1)
	if len(r.gateways) > 0 {
		g := &r.gateways[gw]
		series = &g.wasted
		if useful {
			series = &g.goodput
		}
		series.add(w, 1)
	}
}

// waiting records n handshakes waiting at gateway gw at the end of the
// window that ends at end.
func (r *recorder) waiting(end time.Duration, gw int, n int64) {
	w := r.index(end - 1)
	r.queue.add(w, n)
	if len(r.gateways) > 0 {
		r.gateways[gw].queue.add(w, n)
	}
}

// connected records a client connected at t.
func (r *recorder) connected(t time.Duration) {
	r.count++
	if r.connects == nil && t >= r.last {
		r.deltas = binary.AppendUvarint(r.deltas, uint64(t-r.last))
		r.last = t
		return
	}
	if r.connects == nil {
		all := make([]time.Duration, 0, r.count)
		r.eachConnect(func(_ int64, d time.Duration) { all = append(all, d) })
		r.connects, r.deltas = all, nil
	}
	r.connects = append(r.connects, t)
}

// eachConnect calls f with the rank (from 1) and time of every connect, in
// time order.
func (r *recorder) eachConnect(f func(rank int64, t time.Duration)) {
	if r.connects != nil {
		slices.Sort(r.connects)
		for i, t := range r.connects {
			f(int64(i+1), t)
		}
		return
	}
	var t time.Duration
	var rank int64
	for buf := r.deltas; len(buf) > 0; {
		d, n := binary.Uvarint(buf)
		buf = buf[n:]
		t += time.Duration(d)
		rank++
		f(rank, t)
	}
}

// quantiles returns nearest-rank quantiles (the ceil(n*q)-th smallest) of
// the connect times.
func (r *recorder) quantiles() Quantiles {
	n := r.count
	if n == 0 {
		return Quantiles{}
	}
	ranks := [4]int64{quantile.RankPercent(n, 50), quantile.RankPercent(n, 90), quantile.RankPercent(n, 99), n}
	var at [4]time.Duration
	r.eachConnect(func(rank int64, t time.Duration) {
		for i, k := range ranks {
			if k == rank {
				at[i] = t
			}
		}
	})
	return Quantiles{P50: ms(at[0]), P90: ms(at[1]), P99: ms(at[2]), Max: ms(at[3])}
}

// result is the recorded part of the result. The series of a storm the
// horizon cut (cutAt > 0) run to the window cutAt falls in, the last one
// ending there; those of any other storm end with their last non-empty
// window.
func (r *recorder) result(policy string, clients int, cutAt time.Duration) Result {
	windows := 0
	if cutAt > 0 {
		r.reach(cutAt - 1)
		windows = int((cutAt-1)/r.width) + 1
	}
	res := Result{Policy: policy, Clients: clients, WindowMs: ms(r.width)}
	res.Abandoned, res.Refused, res.Unavailable = r.abandoned, r.refused, r.unavailable
	res.Series = r.trimmed(windows, &r.attempts, &r.accepts, &r.rejects, &r.goodput, &r.wasted, &r.queue, &r.decided)
	for w := range res.Series.Attempts {
		res.Attempts += res.Series.Attempts[w]
		res.Accepted += res.Series.Accepts[w]
		res.Rejected += res.Series.Rejects[w]
		res.PeakAttemptsPerWindow = max(res.PeakAttemptsPerWindow, res.Series.Attempts[w])
		res.PeakAcceptsPerWindow = max(res.PeakAcceptsPerWindow, res.Series.Accepts[w])
		if res.FirstWindowAttempts == 0 {
			res.FirstWindowAttempts = res.Series.Attempts[w]
		}
	}
	res.ConnectMs = r.quantiles()
	convergence := res.ConnectMs.Max
	res.ConvergenceMs = &convergence
	first := 1
	if r.allGateways {
		first = 0
	}
	for g := first; g < len(r.gateways); g++ {
		s := &r.gateways[g]
		gr := GatewayResult{Gateway: g, Series: r.trimmed(windows, &s.attempts, &s.accepts, &s.rejects, &s.goodput, &s.wasted, &s.queue, nil)}
		for w := range gr.Series.Attempts {
			gr.Attempts += gr.Series.Attempts[w]
			gr.Accepted += gr.Series.Accepts[w]
			gr.Rejected += gr.Series.Rejects[w]
			gr.PeakAcceptsPerWindow = max(gr.PeakAcceptsPerWindow, gr.Series.Accepts[w])
		}
		res.Gateways = append(res.Gateways, gr)
	}
	return res
}

// trimmed returns the series without the windows after the last one that
// holds anything, or the first windows of them when that is more, padded
// to one length, never nil; goodput and queue only when the run tracks
// them, decided (nil for a gateway's own) when it keeps decisions.
func (r *recorder) trimmed(windows int, attempts, accepts, rejects, goodput, wasted, queue, decided *windowSeries) Series {
	end := max(windows, lastNonZero(attempts.v)+1, lastNonZero(accepts.v)+1, lastNonZero(rejects.v)+1)
	if r.tracked {
		end = max(end, lastNonZero(goodput.v)+1, lastNonZero(wasted.v)+1, lastNonZero(queue.v)+1)
	}
	keepDecided := r.decisions && decided != nil
	if keepDecided {
		end = max(end, lastNonZero(decided.v)+1)
	}
	pad := func(s []int64) []int64 {
		out := make([]int64, end)
		copy(out, s)
		return out
	}
	out := Series{Attempts: pad(attempts.v), Accepts: pad(accepts.v), Rejects: pad(rejects.v)}
	if r.tracked {
		out.Goodput, out.Wasted, out.Queue = pad(goodput.v), pad(wasted.v), pad(queue.v)
	}
	if keepDecided {
		out.Decided = pad(decided.v)
	}
	return out
}

// lastNonZero is the index of s's last non-zero entry, -1 if none.
func lastNonZero(s []int64) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] != 0 {
			return i
		}
	}
	return -1
}

// ms converts a duration to float64 milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
