package plots

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"slices"
)

// stormSpec is a tiny storm for chart tests: clients all drop at t = 0 and
// a slot admission lets perSlot attempts in per slot.
type stormSpec struct {
	policy        string
	clients       int
	slotMs        float64
	perSlot       int
	baseMs, capMs float64
	jitter        bool // full jitter: uniform[0, ceiling) instead of ceiling
	initialMs     float64
	seed          uint64
}

type pending struct {
	t        float64
	seq      int
	client   int
	failures int
}

type queue []pending

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	if q[i].t != q[j].t {
		return q[i].t < q[j].t
	}
	return q[i].seq < q[j].seq
}
func (q queue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)   { *q = append(*q, x.(pending)) }
func (q *queue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// simulate is a deliberately plain storm model producing realistic chart
// input (it is not the simulator and is not tested against it).
func simulate(s stormSpec) PolicySeries {
	rng := rand.New(rand.NewPCG(s.seed, 7))
	q := &queue{}
	seq := 0
	for c := range s.clients {
		t := 0.0
		if s.initialMs > 0 {
			t = rng.Float64() * s.initialMs
		}
		heap.Push(q, pending{t: t, seq: seq, client: c})
		seq++
	}
	var attempts, accepts []float64
	var connect []float64
	slotUsed := map[int]int{}
	for q.Len() > 0 {
		e := heap.Pop(q).(pending)
		w := int(e.t / s.slotMs)
		for len(attempts) <= w {
			attempts = append(attempts, 0)
			accepts = append(accepts, 0)
		}
		attempts[w]++
		if slotUsed[w] < s.perSlot {
			slotUsed[w]++
			accepts[w]++
			connect = append(connect, e.t)
			continue
		}
		ceiling := math.Min(s.capMs, s.baseMs*math.Pow(2, float64(e.failures)))
		d := ceiling
		if s.jitter {
			d = rng.Float64() * ceiling
		}
		heap.Push(q, pending{t: e.t + d, seq: seq, client: e.client, failures: e.failures + 1})
		seq++
	}
	slices.Sort(connect)
	p99 := connect[int(math.Ceil(0.99*float64(len(connect))))-1]
	return PolicySeries{
		Policy:            s.policy,
		Clients:           s.clients,
		WindowMs:          s.slotMs,
		AttemptsPerWindow: attempts,
		AcceptsPerWindow:  accepts,
		ConnectP99Ms:      p99,
		ConvergenceMs:     connect[len(connect)-1],
	}
}

// seedModelRun is the article's headline model: 1000 clients, 5 per 10 ms,
// base 100 ms, cap 3.2 s, exponential without jitter against full jitter.
func seedModelRun() Run {
	exp := simulate(stormSpec{policy: "exponential", clients: 1000, slotMs: 10, perSlot: 5, baseMs: 100, capMs: 3200, seed: 1})
	full := simulate(stormSpec{policy: "full", clients: 1000, slotMs: 10, perSlot: 5, baseMs: 100, capMs: 3200, jitter: true, seed: 1})
	return Run{Name: "seed-backoff-model", Seed: 1, Policies: []PolicySeries{exp, full}, CapacityPerWindow: 5}
}

// outcomeRun is seedModelRun as a storm with an outcome: the full-jitter
// policy's accepts split between useful and wasted claims, and a queue
// that grows and drains.
func outcomeRun() Run {
	r := seedModelRun()
	r.ClaimCapacityPerWindow = 5
	for i := range r.Policies {
		p := &r.Policies[i]
		for w, a := range p.AcceptsPerWindow {
			useful := a
			if w%3 == 2 {
				useful = math.Floor(a / 2)
			}
			p.GoodputPerWindow = append(p.GoodputPerWindow, useful)
			p.WastedPerWindow = append(p.WastedPerWindow, a-useful)
			p.QueuePerWindow = append(p.QueuePerWindow, float64(w%7))
		}
	}
	return r
}

// labRun looks like the seed's lab: 60 devices, 250 ms windows, a token
// bucket allowing 20 per window, lease reclaim with stale routes and
// database load, over replications.
func labRun() Run {
	const reclaimMs = 1711
	r := Run{Name: "seed-lab", Seed: 1, CapacityPerWindow: 20, DBBudgetRowsPerS: 5000}
	r.Outage = &Interval{StartMs: 0, EndMs: reclaimMs, Label: "until lease reclaim"}
	rng := rand.New(rand.NewPCG(3, 4))
	r.Reclaim = &Reclaim{BoundMs: [2]float64{1000, 2000}}
	for range 200 {
		r.Reclaim.TimesMs = append(r.Reclaim.TimesMs, 1000+rng.Float64()*1000)
	}
	for i, spec := range []stormSpec{
		{policy: "full", jitter: true, baseMs: 100, capMs: 3200},
		{policy: "equal", jitter: true, baseMs: 400, capMs: 3200},
		{policy: "exponential", baseMs: 100, capMs: 3200},
	} {
		spec.clients, spec.slotMs, spec.perSlot, spec.initialMs, spec.seed = 60, 50, 4, 100, uint64(i+1)
		p := simulate(spec)
		p = rebucket(p, 5) // 250 ms windows
		stale := make([]float64, int(math.Ceil(reclaimMs/p.WindowMs)))
		connected := 0.0
		for w := range stale {
			if w < len(p.AcceptsPerWindow) {
				connected += p.AcceptsPerWindow[w]
			}
			stale[w] = float64(p.Clients) - connected
		}
		p.StaleRoutesPerWindow = stale
		for _, a := range p.AcceptsPerWindow {
			p.DBRowsPerS = append(p.DBRowsPerS, a*25/(p.WindowMs/1000)*30)
		}
		var att, conv []float64
		for k := range 10 {
			spec.seed = uint64(100 + 10*i + k)
			q := simulate(spec)
			var total float64
			for _, v := range q.AttemptsPerWindow {
				total += v
			}
			att = append(att, total)
			conv = append(conv, q.ConvergenceMs)
		}
		p.Replicated = &Replicated{Runs: 10, Attempts: MeanStd(att), ConvergenceMs: MeanStd(conv), SpreadKind: "mean ± 1 sd over 10 seeds"}
		r.Policies = append(r.Policies, p)
	}
	return r
}

// rebucket merges every k windows into one.
func rebucket(p PolicySeries, k int) PolicySeries {
	merge := func(v []float64) []float64 {
		out := make([]float64, (len(v)+k-1)/k)
		for i, x := range v {
			out[i/k] += x
		}
		return out
	}
	p.AttemptsPerWindow = merge(p.AttemptsPerWindow)
	p.AcceptsPerWindow = merge(p.AcceptsPerWindow)
	p.WindowMs *= float64(k)
	return p
}
