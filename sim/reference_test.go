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
// It also tallies the core metrics on its own, naively, from the attempts it
// sees, as an oracle for the recorder (valid when no latency or capacity
// model moves the decision or the connect away from the arrival).
func referenceRun(s *Scenario, b *policies.Backoff, seed uint64, trace func(time.Duration, uint32, bool)) (full, naive Result) {
	st := newStorm(s, b, seed)
	window := s.Metrics.Window
	var attempts, accepts, rejects []int64
	var connects []time.Duration
	st.trace = func(t time.Duration, c uint32, ok bool) {
		trace(t, c, ok)
		w := int(t / window)
		for len(attempts) <= w {
			attempts, accepts, rejects = append(attempts, 0), append(accepts, 0), append(rejects, 0)
		}
		attempts[w]++
		if ok {
			accepts[w]++
			connects = append(connects, t)
		} else {
			rejects[w]++
		}
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
	full = st.result()

	naive = Result{Policy: b.Spec.Label, Clients: s.Clients, Abandoned: full.Abandoned, WindowMs: ms(window),
		Series: Series{Attempts: attempts, Accepts: accepts, Rejects: rejects}}
	if naive.Series.Attempts == nil {
		naive.Series = Series{Attempts: []int64{}, Accepts: []int64{}, Rejects: []int64{}}
	}
	for w := range attempts {
		naive.Attempts += attempts[w]
		naive.Accepted += accepts[w]
		naive.Rejected += rejects[w]
		naive.PeakAttemptsPerWindow = max(naive.PeakAttemptsPerWindow, attempts[w])
		naive.PeakAcceptsPerWindow = max(naive.PeakAcceptsPerWindow, accepts[w])
		if naive.FirstWindowAttempts == 0 {
			naive.FirstWindowAttempts = attempts[w]
		}
	}
	slices.Sort(connects)
	if n := len(connects); n > 0 {
		at := func(q float64) float64 { // nearest rank, in floating point on purpose
			k := int(math.Ceil(float64(n)*q - 1e-9))
			return ms(connects[max(k, 1)-1])
		}
		naive.ConnectMs = Quantiles{P50: at(0.50), P90: at(0.90), P99: at(0.99), Max: ms(connects[n-1])}
	}
	naive.ConvergenceMs = &naive.ConnectMs.Max
	return full, naive
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
