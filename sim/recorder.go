package sim

import (
	"encoding/binary"
	"slices"
	"time"
)

// recorder accumulates per-window counts and connect times.
type recorder struct {
	window      time.Duration
	attempts    []int64
	accepts     []int64
	rejects     []int64
	abandoned   int64
	refused     int64
	unavailable int64
	gateways    []gatewaySeries // per pool gateway; empty without a pool

	// The window of the last call, so that most calls need no division.
	cur          int
	curLo, curHi time.Duration

	// Connect times arrive in non-decreasing order without network latency;
	// then they are kept as varint deltas (2-3 bytes a client instead of 8).
	// A decrease switches to a plain slice.
	deltas   []byte
	last     time.Duration
	connects []time.Duration
	count    int64
}

type gatewaySeries struct{ attempts, accepts, rejects []int64 }

func (r *recorder) init(window time.Duration, gateways, clients int) {
	r.window = window
	r.deltas = make([]byte, 0, 2*clients+16) // most gaps fit two varint bytes
	r.gateways = make([]gatewaySeries, gateways)
}

func (r *recorder) slot(t time.Duration) int {
	if t >= r.curLo && t < r.curHi {
		return r.cur
	}
	w := int(t / r.window)
	r.cur, r.curLo, r.curHi = w, time.Duration(w)*r.window, time.Duration(w+1)*r.window
	for w >= len(r.attempts) {
		r.attempts = append(r.attempts, 0)
		r.accepts = append(r.accepts, 0)
		r.rejects = append(r.rejects, 0)
	}
	return w
}

// attempt records an attempt at t answered with out by gateway gw, and
// returns its window.
func (r *recorder) attempt(t time.Duration, out outcome, gw int) int {
	w := r.slot(t)
	r.attempts[w]++
	if out != admitted {
		r.rejects[w]++
	}
	switch out {
	case refused:
		r.refused++
	case unavailable:
		r.unavailable++
	}
	if len(r.gateways) > 0 && gw > 0 {
		g := &r.gateways[gw]
		for w >= len(g.attempts) {
			g.attempts, g.accepts, g.rejects = append(g.attempts, 0), append(g.accepts, 0), append(g.rejects, 0)
		}
		g.attempts[w]++
		if out != admitted {
			g.rejects[w]++
		}
	}
	return w
}

// accept records that the attempt of window w was admitted by gateway gw.
func (r *recorder) accept(w, gw int) {
	r.accepts[w]++
	if len(r.gateways) > 0 {
		r.gateways[gw].accepts[w]++
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
	ranks := [4]int64{(n*50 + 99) / 100, (n*90 + 99) / 100, (n*99 + 99) / 100, n}
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

func (r *recorder) result(policy string, clients int) Result {
	res := Result{Policy: policy, Clients: clients, WindowMs: ms(r.window)}
	res.Abandoned, res.Refused, res.Unavailable = r.abandoned, r.refused, r.unavailable
	res.Series = trimmed(r.attempts, r.accepts, r.rejects)
	for w := range res.Series.Attempts {
		res.Attempts += r.attempts[w]
		res.Accepted += r.accepts[w]
		res.Rejected += r.rejects[w]
		res.PeakAttemptsPerWindow = max(res.PeakAttemptsPerWindow, r.attempts[w])
		res.PeakAcceptsPerWindow = max(res.PeakAcceptsPerWindow, r.accepts[w])
		if res.FirstWindowAttempts == 0 {
			res.FirstWindowAttempts = r.attempts[w]
		}
	}
	res.ConnectMs = r.quantiles()
	res.ConvergenceMs = res.ConnectMs.Max
	for g := 1; g < len(r.gateways); g++ {
		s := r.gateways[g]
		gr := GatewayResult{Gateway: g, Series: trimmed(s.attempts, s.accepts, s.rejects)}
		for w := range gr.Series.Attempts {
			gr.Attempts += s.attempts[w]
			gr.Accepted += s.accepts[w]
			gr.Rejected += s.rejects[w]
			gr.PeakAcceptsPerWindow = max(gr.PeakAcceptsPerWindow, s.accepts[w])
		}
		res.Gateways = append(res.Gateways, gr)
	}
	return res
}

// trimmed returns the series without trailing empty windows, padded to one
// length, never nil.
func trimmed(attempts, accepts, rejects []int64) Series {
	end := len(attempts)
	for end > 0 && attempts[end-1] == 0 {
		end--
	}
	pad := func(s []int64) []int64 {
		out := make([]int64, end)
		copy(out, s)
		return out
	}
	return Series{Attempts: pad(attempts), Accepts: pad(accepts), Rejects: pad(rejects)}
}

// ms converts a duration to float64 milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
