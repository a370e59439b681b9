package sim

import (
	"time"

	"stormsim/models"
	"stormsim/policies"
)

// outcome is what a handshake got.
type outcome uint8

const (
	admitted    outcome = iota // 101: connected
	rejected                   // 429: no admission token
	unavailable                // 503: the gateway is draining
	refused                    // connection refused: the gateway is dead
)

// storm is the model of one storm: when each client notices the failure,
// which gateway an attempt reaches, what it answers, when the client tries
// again and what each outcome costs. It knows nothing of event order: the
// engines decide the order of attempts and call it, so two engines that
// agree on order agree on everything.
type storm struct {
	s          *Scenario
	b          *policies.Backoff // the backoff clients use
	underTest  *policies.Backoff // the listed policy (b, unless drain_policy replaces it)
	seed       uint64
	net        *models.NetworkSpec      // nil without latency
	adm        models.Admission         // the surviving gateway, without a pool
	retryAfter time.Duration            // carried by a 429 (and by a 503)
	pool       *pool                    // nil without a pool
	queues     []*models.HandshakeQueue // per gateway (index as in decide); nil without a capacity
	draining   bool                     // the failure is a planned drain
	prev       []time.Duration          // previous raw delay per client, for stateful policies
	backoffKey uint64                   // policies.StreamKey(seed, StreamBackoff)
	rec        recorder

	// trace, when set, sees every attempt's outcome; the tests use it to
	// compare engines client by client.
	trace func(t time.Duration, c uint32, admitted bool)
}

func newStorm(s *Scenario, b *policies.Backoff, seed uint64) *storm {
	st := &storm{s: s, b: b, underTest: b, seed: seed, adm: s.Admission.New(), retryAfter: s.Admission.RetryAfter,
		backoffKey: policies.StreamKey(seed, policies.StreamBackoff)}
	if s.Failure != nil && s.Failure.Kind == "drain" {
		st.draining = true
		if s.DrainPolicy != nil {
			st.b, _ = policies.New(*s.DrainPolicy) // validated by Resolve
		}
	}
	if policies.UsesPrevious(st.b.Policy) {
		st.prev = make([]time.Duration, s.Clients)
	}
	if s.Network != nil && !s.Network.IsZero() {
		st.net = s.Network
	}
	if s.Gateways != nil {
		st.pool = newPool(s, seed)
	}
	if s.Capacity != nil {
		st.queues = make([]*models.HandshakeQueue, max(1, st.gatewayCount()))
		for g := range st.queues {
			st.queues[g] = models.NewHandshakeQueue(s.Capacity, s.Capacity.StallEnd(seed, g))
		}
	}
	st.rec.init(s.Metrics.Window, st.gatewayCount(), s.Clients)
	return st
}

func (st *storm) gatewayCount() int {
	if st.pool == nil {
		return 0
	}
	return len(st.pool.adms)
}

// maxGap bounds the time from one attempt's arrival to the next one's.
func (st *storm) maxGap() time.Duration {
	gap := st.b.MaxWait(st.retryAfter)
	if st.net != nil {
		gap += 2 * st.net.MaxRoundTrip()
	}
	return gap
}

// noticeAt is when client c learns that its connection is gone.
func (st *storm) noticeAt(c uint32) time.Duration {
	t := st.s.Disconnect.At
	switch {
	case st.draining:
		t += st.s.Failure.GoawayAt(st.seed, uint64(c))
	case st.s.Detection != nil:
		t += st.s.Detection.NoticeDelay(st.seed, uint64(c))
	}
	return t
}

// firstArrival is when client c's first attempt reaches a gateway.
func (st *storm) firstArrival(c uint32) time.Duration {
	t := st.noticeAt(c) + policies.InitialWait(st.seed, uint64(c), st.s.InitialJitter)
	if st.net != nil {
		t += st.net.Out(st.seed, uint64(c), 1, t)
	}
	return t
}

// sameStart reports whether every first attempt arrives at one instant, in
// client order, so an engine may generate them instead of storing them.
func (st *storm) sameStart() bool {
	return st.s.InitialJitter == 0 && st.s.Detection == nil && st.net == nil && !(st.draining && st.s.Failure.Spread)
}

// handle is client c's attempt number attempts+1 arriving at time t. It
// returns when the client's next attempt arrives, if there is one.
func (st *storm) handle(t time.Duration, c, attempts uint32) (next time.Duration, again bool) {
	a := attempts + 1
	out, gw, decided, answered := st.decide(t, c, a)
	if st.trace != nil {
		st.trace(t, c, out == admitted)
	}
	w := st.rec.attempt(decided, out, gw)
	var back time.Duration
	if st.net != nil {
		back = st.net.Back(st.seed, uint64(c), uint64(a), out == admitted, answered)
	}
	if out == admitted {
		st.rec.accept(w, gw)
		st.rec.connected(answered + back)
		return 0, false
	}
	retryAfter := st.retryAfter
	if out == refused {
		retryAfter = 0
	}
	var prev time.Duration
	if st.prev != nil {
		prev = st.prev[c]
	}
	wait, raw, giveUp := st.b.Next(int(a), prev, retryAfter, policies.DrawKeyed(st.backoffKey, uint64(c), uint64(a)))
	if giveUp {
		st.rec.abandoned++
		return 0, false
	}
	if st.prev != nil {
		st.prev[c] = raw
	}
	next = answered + back + wait
	if st.net != nil {
		next += st.net.Out(st.seed, uint64(c), uint64(a+1), next)
	}
	return next, true
}

// decide returns what an attempt arriving at t gets, from which gateway (0
// without a pool), when that was decided and when the answer left. Without a
// capacity model a gateway decides and answers on arrival; with one, the
// attempt first waits its turn in the gateway's queue (or, with decide:
// arrival, is decided at once and then waits its turn if admitted), and
// nothing is decided before the gateway's stall ends.
func (st *storm) decide(t time.Duration, c, a uint32) (out outcome, g int, decided, answered time.Duration) {
	adm := st.adm
	if st.pool != nil {
		g = st.pool.pick(t, c, a)
		switch {
		case g == 0 && st.draining:
			return unavailable, 0, t, t
		case g == 0:
			return refused, 0, t, t
		}
		adm = st.pool.adms[g]
	}
	decided, answered = t, t
	var q *models.HandshakeQueue
	if st.queues != nil {
		q = st.queues[g]
		if q.DecidesOnArrival() {
			decided = q.Decision(t)
		} else {
			decided = q.Start(t)
		}
	}
	out = rejected
	if adm.Admit(decided) {
		out = admitted
		if st.pool != nil {
			st.pool.conns[g]++
		}
	}
	switch {
	case q == nil:
	case q.DecidesOnArrival():
		answered = q.Book(decided, out == admitted)
	default:
		answered = q.Finish(decided, out == admitted)
	}
	return out, g, decided, answered
}

// pool is the load balancer's view of the gateways: gateway 0 failed at
// t = 0 and is taken out of rotation at downAt.
type pool struct {
	spec   *models.PoolSpec
	seed   uint64
	downAt time.Duration
	adms   []models.Admission // index 0 is the failed gateway's (unused)
	conns  []int64            // connections per gateway, for least_connections
	next   uint64             // round-robin counter
}

func newPool(s *Scenario, seed uint64) *pool {
	p := &pool{spec: s.Gateways, seed: seed, downAt: s.Gateways.DownAt(seed)}
	spec := s.Admission
	if s.Gateways.Admission != nil {
		spec = *s.Gateways.Admission
	}
	p.adms = make([]models.Admission, s.Gateways.Count)
	p.conns = make([]int64, s.Gateways.Count)
	for g := 1; g < s.Gateways.Count; g++ {
		p.adms[g] = spec.New()
		p.conns[g] = int64(s.Gateways.Connections)
	}
	return p
}

// pick chooses the gateway for client c's attempt a arriving at t. The
// failed gateway has no connections left, so least_connections favours it
// until the health check takes it out, as a real balancer would.
func (p *pool) pick(t time.Duration, c, a uint32) int {
	lo := 0
	if t >= p.downAt {
		lo = 1
	}
	n := len(p.adms) - lo
	switch p.spec.Balancer {
	case models.BalancerRoundRobin:
		g := lo + int(p.next%uint64(n))
		p.next++
		return g
	case models.BalancerLeastConnections:
		best := lo
		for g := lo + 1; g < len(p.adms); g++ {
			if p.conns[g] < p.conns[best] {
				best = g
			}
		}
		return best
	}
	return lo + int(policies.UniformDuration(policies.Draw(p.seed, uint64(c), uint64(a), policies.StreamBalancer), time.Duration(n)))
}
