package sim

import (
	"container/heap"
	"math"
	"slices"
	"time"

	"stormsim/policies"
)

// referenceRun is a deliberately plain second engine: one priority queue of
// (time, push sequence) holding every pending attempt. The production engine
// must agree with it exactly.
func referenceRun(s *Scenario, b *policies.Backoff, seed uint64, trace func(time.Duration, uint32, bool)) Result {
	adm := s.Admission.New()
	q := &refQueue{}
	var seq uint64
	push := func(t time.Duration, c int, attempts int) {
		seq++
		heap.Push(q, refEvent{t: t, seq: seq, client: c, attempts: attempts})
	}
	for c := 0; c < s.Clients; c++ {
		push(s.Disconnect.At+policies.InitialWait(seed, uint64(c), s.InitialJitter), c, 0)
	}
	prev := make([]time.Duration, s.Clients)
	window := s.Metrics.Window
	var attempts, accepts, rejects []int64
	var connects []time.Duration
	var abandoned int64
	for q.Len() > 0 {
		ev := heap.Pop(q).(refEvent)
		w := int(ev.t / window)
		for len(attempts) <= w {
			attempts, accepts, rejects = append(attempts, 0), append(accepts, 0), append(rejects, 0)
		}
		attempts[w]++
		a := ev.attempts + 1
		admitted := adm.Admit(ev.t)
		trace(ev.t, uint32(ev.client), admitted)
		if admitted {
			accepts[w]++
			connects = append(connects, ev.t)
			continue
		}
		rejects[w]++
		wait, raw, giveUp := b.Next(a, prev[ev.client], s.Admission.RetryAfter,
			policies.Draw(seed, uint64(ev.client), uint64(a), policies.StreamBackoff))
		if giveUp {
			abandoned++
			continue
		}
		if policies.UsesPrevious(b.Policy) {
			prev[ev.client] = raw
		}
		push(ev.t+wait, ev.client, a)
	}
	r := Result{Policy: b.Spec.Label, Clients: s.Clients, Abandoned: abandoned, WindowMs: ms(window),
		Series: Series{Attempts: attempts, Accepts: accepts, Rejects: rejects}}
	if r.Series.Attempts == nil {
		r.Series = Series{Attempts: []int64{}, Accepts: []int64{}, Rejects: []int64{}}
	}
	for w := range attempts {
		r.Attempts += attempts[w]
		r.Accepted += accepts[w]
		r.Rejected += rejects[w]
		r.PeakAttemptsPerWindow = max(r.PeakAttemptsPerWindow, attempts[w])
		r.PeakAcceptsPerWindow = max(r.PeakAcceptsPerWindow, accepts[w])
		if r.FirstWindowAttempts == 0 {
			r.FirstWindowAttempts = attempts[w]
		}
	}
	slices.Sort(connects)
	if n := len(connects); n > 0 {
		at := func(q float64) float64 { // nearest rank, in floating point on purpose
			k := int(math.Ceil(float64(n)*q - 1e-9))
			return ms(connects[max(k, 1)-1])
		}
		r.ConnectMs = Quantiles{P50: at(0.50), P90: at(0.90), P99: at(0.99), Max: ms(connects[n-1])}
		r.ConvergenceMs = r.ConnectMs.Max
	}
	return r
}

type refEvent struct {
	t        time.Duration
	seq      uint64
	client   int
	attempts int
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
