package sim

import (
	"encoding/binary"
	"slices"
	"time"
)

// recorder accumulates per-window counts and connect times.
type recorder struct {
	window    time.Duration
	attempts  []int64
	accepts   []int64
	rejects   []int64
	abandoned int64

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

func (r *recorder) init(window time.Duration) { r.window = window }

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

func (r *recorder) reject(t time.Duration) {
	w := r.slot(t)
	r.attempts[w]++
	r.rejects[w]++
}

// accept records an admitted attempt at t, connected at t too (no latency).
func (r *recorder) accept(t time.Duration) {
	w := r.slot(t)
	r.attempts[w]++
	r.accepts[w]++
	r.connected(t)
}

func (r *recorder) connected(t time.Duration) {
	r.count++
	if r.connects == nil && t >= r.last {
		r.deltas = binary.AppendUvarint(r.deltas, uint64(t-r.last))
		r.last = t
		return
	}
	if r.connects == nil {
		r.connects = make([]time.Duration, 0, r.count)
		r.eachDelta(func(_ int64, d time.Duration) { r.connects = append(r.connects, d) })
		r.deltas = nil
	}
	r.connects = append(r.connects, t)
}

// eachDelta calls f with the rank (from 1) and time of every connect kept
// as deltas, in order.
func (r *recorder) eachDelta(f func(rank int64, t time.Duration)) {
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
	if r.connects != nil {
		slices.Sort(r.connects)
		for i, k := range ranks {
			at[i] = r.connects[k-1]
		}
	} else {
		r.eachDelta(func(rank int64, t time.Duration) {
			for i, k := range ranks {
				if k == rank {
					at[i] = t
				}
			}
		})
	}
	return Quantiles{P50: ms(at[0]), P90: ms(at[1]), P99: ms(at[2]), Max: ms(at[3])}
}

func (r *recorder) result(policy string, clients int, window time.Duration) Result {
	res := Result{Policy: policy, Clients: clients, Abandoned: r.abandoned, WindowMs: ms(window)}
	end := len(r.attempts)
	for end > 0 && r.attempts[end-1] == 0 {
		end--
	}
	res.Series = Series{Attempts: r.attempts[:end:end], Accepts: r.accepts[:end:end], Rejects: r.rejects[:end:end]}
	for w := 0; w < end; w++ {
		res.Attempts += r.attempts[w]
		res.Accepted += r.accepts[w]
		res.Rejected += r.rejects[w]
		res.PeakAttemptsPerWindow = max(res.PeakAttemptsPerWindow, r.attempts[w])
		res.PeakAcceptsPerWindow = max(res.PeakAcceptsPerWindow, r.accepts[w])
		if res.FirstWindowAttempts == 0 {
			res.FirstWindowAttempts = r.attempts[w]
		}
	}
	if res.Series.Attempts == nil {
		res.Series = Series{Attempts: []int64{}, Accepts: []int64{}, Rejects: []int64{}}
	}
	res.ConnectMs = r.quantiles()
	res.ConvergenceMs = res.ConnectMs.Max
	return res
}

// ms converts a duration to float64 milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
