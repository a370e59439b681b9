package sim

import (
	"container/heap"
	"math"
	"slices"
	"time"

	"stormsim/policies"
)

// referenceRun is a deliberately plain second engine: one priority queue of
// (time, push sequence) holding every pending attempt, driving the same
// storm model. The production engine must agree with it exactly.
//
// It always takes the general path through storm.handle, so the engine
// tests hold handlePlain to it.
//
// It also tallies what became of every attempt on its own, naively, from
// the attempts it sees (naiveTally), as an oracle for the recorder.
func referenceRun(s *Scenario, b *policies.Backoff, seed uint64, trace func(attemptTrace)) (full Result, naive naiveTally) {
	st := newStorm(s, b, seed)
	st.plain = false // the general handle: the engine's plain one is held to it
	naive.window, naive.horizon = s.Metrics.Window, s.EffectiveHorizon()
	st.trace = func(a attemptTrace) {
		trace(a)
		naive.add(a)
	}
	q := &refQueue{}
	var seq uint64
	push := func(t time.Duration, c, attempts, pay uint32) {
		seq++
		heap.Push(q, refEvent{t: t, seq: seq, client: c, attempts: attempts, pay: pay})
	}
	if st.deploy == nil {
		for c := 0; c < s.Clients; c++ {
			if t, pay := st.firstArrival(uint32(c)); st.within(t) {
				push(t, uint32(c), 0, pay)
			}
		}
	}
	for q.Len() > 0 || st.stepAt != never {
		// A deploy's step goes before any attempt at its instant.
		if st.stepAt != never && (q.Len() == 0 || st.stepAt <= (*q)[0].t) {
			st.step(push)
			continue
		}
		ev := heap.Pop(q).(refEvent)
		if next, pay, again := st.handle(ev.t, ev.client, ev.attempts, ev.pay, 0); again {
			push(next, ev.client, ev.attempts+1, pay)
		}
	}
	return st.result(), naive
}

// naiveTally counts attempts as the documents define them, one attempt at
// a time: every one that reached a gateway, in the window of its arrival;
// what it got once the gateway was done with it before the horizon, in
// the window of its decision; and the others as waiting.
type naiveTally struct {
	window, horizon                          time.Duration
	attempts, accepts, rejects               []int64 // per window, unmerged
	accepted, rejected, refused, unavailable int64
	shed, skipped, waiting                   int64
	admittedAt                               []time.Duration // decisions of admitted attempts
}

func (n *naiveTally) add(a attemptTrace) {
	grow := func(s []int64, w int) []int64 {
		for len(s) <= w {
			s = append(s, 0)
		}
		return s
	}
	w := int(a.arrival / n.window)
	n.attempts = grow(n.attempts, w)
	n.attempts[w]++
	if a.answered >= n.horizon {
		n.waiting++
		return
	}
	d := int(a.decided / n.window)
	switch a.out {
	case shed:
		n.shed++
	case skipped:
		n.skipped++
	case admitted:
		n.accepted++
		n.accepts = grow(n.accepts, d)
		n.accepts[d]++
		n.admittedAt = append(n.admittedAt, a.decided)
	default:
		n.rejected++
		n.rejects = grow(n.rejects, d)
		n.rejects[d]++
		if a.out == refused {
			n.refused++
		}
		if a.out == unavailable {
			n.unavailable++
		}
	}
}

// result is the naive tally as a core result of a storm without latency
// or a capacity, where an admitted attempt connects its client at once:
// its series run to the horizon when a client neither connected nor gave
// up (abandoned, which the tally cannot see, is given).
func (n *naiveTally) result(policy string, clients int, abandoned int64) Result {
	r := Result{Policy: policy, Clients: clients, Abandoned: abandoned, WindowMs: ms(n.window),
		Accepted: n.accepted, Rejected: n.rejected}
	windows := max(len(n.attempts), len(n.accepts), len(n.rejects))
	if n.accepted+abandoned < int64(clients) {
		windows = int((n.horizon-1)/n.window) + 1
	}
	pad := func(s []int64) []int64 { return append(slices.Clone(s), make([]int64, windows-len(s))...) }
	r.Series = Series{Attempts: pad(n.attempts), Accepts: pad(n.accepts), Rejects: pad(n.rejects)}
	for w := range r.Series.Attempts {
		r.Attempts += r.Series.Attempts[w]
		r.PeakAttemptsPerWindow = max(r.PeakAttemptsPerWindow, r.Series.Attempts[w])
		r.PeakAcceptsPerWindow = max(r.PeakAcceptsPerWindow, r.Series.Accepts[w])
		if r.FirstWindowAttempts == 0 {
			r.FirstWindowAttempts = r.Series.Attempts[w]
		}
	}
	connects := slices.Sorted(slices.Values(n.admittedAt))
	if k := len(connects); k > 0 {
		at := func(q float64) float64 { // nearest rank, in floating point on purpose
			i := int(math.Ceil(float64(k)*q - 1e-9))
			return ms(connects[max(i, 1)-1])
		}
		r.ConnectMs = Quantiles{P50: at(0.50), P90: at(0.90), P99: at(0.99), Max: ms(connects[k-1])}
	}
	r.ConvergenceMs = &r.ConnectMs.Max
	return r
}

type refEvent struct {
	t        time.Duration
	seq      uint64
	client   uint32
	attempts uint32
	pay      uint32
}

type refQueue []refEvent

func (q refQueue) Len() int { return len(q) }
func (q refQueue) Less(i, j int) bool {
	if q[i].t != q[j].t {
		return q[i].t < q[j].t
	}
	return q[i].seq < q[j].seq
}
func (q refQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *refQueue) Push(x any)   { *q = append(*q, x.(refEvent)) }
func (q *refQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}
