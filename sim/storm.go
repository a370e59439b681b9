package sim

import (
	"time"

	"stormsim/models"
	"stormsim/policies"
	"stormsim/policies/rng"
)

// outcome is what a handshake got.
type outcome uint8

const (
	admitted    outcome = iota // 101: connected (if the answer is in time)
	rejected                   // 429: no admission token
	unavailable                // 503: the gateway is draining
	refused                    // connection refused: the gateway is dead
	shed                       // 503 at once: the gateway's queue is full
	skipped                    // dropped at its turn: its client had gone
)

// never stands for "no deadline": later than any time a run reaches.
const never = time.Duration(1<<63 - 1)

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
	draws      models.NetworkDraws      // net's delays for this run's seed
	rttInEvent bool                     // an attempt's rtt travels in its event (see firstArrival)
	work       bool                     // the network adds server or reject time to answers
	adm        models.Admission         // the surviving gateway, without a pool
	retryAfter time.Duration            // carried by a 429 (and by a 503)
	pool       *pool                    // nil without a pool
	queues     []*models.HandshakeQueue // per gateway (index as in decide); nil without a capacity
	draining   bool                     // the failure is a planned drain
	prev       []time.Duration          // previous raw delay per client, for stateful policies
	backoffKey uint64                   // rng.StreamKey(seed, StreamBackoff)
	rec        recorder

	horizon  time.Duration   // nothing happens at or after it
	timeout  time.Duration   // the clients' handshake timeout; 0 = none
	sent     []time.Duration // when each client sent its pending attempt (timeouts with shared delays)
	skip     bool            // gateways drop handshakes whose client has gone
	maxQueue int             // shed beyond this many waiting; 0 = never
	end      *ending         // the outcome's tallies
	turn     turn            // the current attempt's turn at a gateway with a capacity

	// trace, when set, sees every attempt's outcome; the tests use it to
	// compare engines client by client.
	trace func(t time.Duration, c uint32, admitted bool)
}

// ending tallies what a storm's outcome needs: lost work, queue waits and
// the surviving gateways' work over the last tenth of the horizon.
type ending struct {
	lines                         []waitLine // per gateway, with a capacity
	waits                         waitHistogram
	timedOut, wasted, shed, skips int64
	tailFrom                      time.Duration // start of the horizon's last tenth
	tailBusy                      time.Duration // service time within it, summed over gateways
	tailServed, tailUseful        int64         // handshakes whose turn started within it; those that connected
	cut                           bool          // the horizon stopped something
}

func newStorm(s *Scenario, b *policies.Backoff, seed uint64) *storm {
	st := &storm{s: s, b: b, underTest: b, seed: seed, adm: s.Admission.New(), retryAfter: s.Admission.RetryAfter,
		backoffKey: rng.StreamKey(seed, rng.StreamBackoff), horizon: s.EffectiveHorizon()}
	if s.Failure != nil && s.Failure.Kind == models.FailureDrain {
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
		st.draws = s.Network.Draws(seed)
		st.rttInEvent = s.Network.RTTOnly() && s.Network.MaxRTT() <= 1<<32-1
		st.work = s.Network.HasWork()
	}
	st.timeout = st.b.Spec.Timeout
	if st.timeout > 0 && st.net != nil && !st.net.Independent() {
		// Shared delays depend on when an attempt was sent, so that time
		// is kept rather than drawn again.
		st.sent = make([]time.Duration, s.Clients)
	}
	if s.Gateways != nil {
		st.pool = newPool(s, seed)
	}
	if s.Capacity != nil {
		st.queues = make([]*models.HandshakeQueue, max(1, st.gatewayCount()))
		for g := range st.queues {
			st.queues[g] = models.NewHandshakeQueue(s.Capacity)
		}
		st.skip = s.Capacity.Abandoned == models.AbandonedSkip
		st.maxQueue = s.Capacity.MaxQueue
	}
	// The outcome's tallies are kept for every run that could need them:
	// one the safety horizon may cut needs them too, so only storms that
	// provably end early go without.
	st.end = &ending{tailFrom: st.horizon - st.horizon/10}
	if st.queues != nil {
		st.end.lines = make([]waitLine, len(st.queues))
	}
	st.rec.init(s.Metrics.Window, st.gatewayCount(), s.Clients, s.TracksOutcome())
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
	gap := st.b.MaxWait(st.retryAfter) + st.timeout
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

// firstSend is when client c sends its first attempt.
func (st *storm) firstSend(c uint32) time.Duration {
	return st.noticeAt(c) + policies.InitialWait(st.seed, uint64(c), st.s.InitialJitter)
}

// firstArrival is when client c's first attempt reaches a gateway, and the
// payload its event carries: when both legs are halves of an rtt drawn for
// the attempt alone, that rtt, so that it is drawn once for the attempt,
// not again on arrival.
func (st *storm) firstArrival(c uint32) (time.Duration, uint32) {
	return st.arrival(c, 1, st.firstSend(c), 0)
}

// aheadRTT is the rtt of the attempt after client c's attempt number
// attempts+1, when attempts travel with their rtt (rttInEvent). It is a
// pure function of its arguments, so it may be drawn ahead of time, on
// another goroutine, with the same result.
func (st *storm) aheadRTT(c, attempts uint32) uint32 {
	return uint32(st.draws.RTT(uint64(c), uint64(attempts)+2))
}

// arrival is when client c's attempt number a, sent at sent, reaches a
// gateway, and the payload of its event; ahead, when not 0, is the rtt of
// the attempt as drawn ahead of time (aheadRTT).
func (st *storm) arrival(c, a uint32, sent time.Duration, ahead uint32) (time.Duration, uint32) {
	switch {
	case st.rttInEvent && ahead != 0:
		return sent + time.Duration(ahead)/2, ahead
	case st.rttInEvent:
		rtt := st.draws.RTT(uint64(c), uint64(a))
		return sent + rtt/2, uint32(rtt)
	case st.net != nil:
		return sent + st.draws.Out(uint64(c), uint64(a), sent), 0
	}
	return sent, 0
}

// within reports whether an attempt arriving at t happens before the
// horizon; one that does not is not made.
func (st *storm) within(t time.Duration) bool {
	if t < st.horizon {
		return true
	}
	st.end.cut = true
	return false
}

// sameStart reports whether every first attempt arrives at one instant, in
// client order, so an engine may generate them instead of storing them.
func (st *storm) sameStart() bool {
	return st.s.InitialJitter == 0 && st.s.Detection == nil && st.net == nil && !(st.draining && st.s.Failure.Spread)
}

// turn is a gateway's work on the attempt being handled, for the
// outcome's tallies: its turn (or its claim's turn, with decide: arrival)
// and when the work ended. served is false when it had no turn (shed).
type turn struct {
	start, done time.Duration
	served      bool
	dropped     bool // admitted, then skipped at its claim's turn
}

// handle is client c's attempt number attempts+1 arriving at time t with
// its event's payload pay (and ahead, the next attempt's rtt if it was
// drawn ahead of time, else 0). It returns when the client's next attempt
// arrives and that event's payload, if there is a next attempt.
func (st *storm) handle(t time.Duration, c, attempts, pay, ahead uint32) (next time.Duration, nextPay uint32, again bool) {
	a := attempts + 1
	// With delays of its own an attempt's legs come from its rtt, carried
	// in its event, or are drawn again here: the out leg gives back its
	// send time, the back leg its answer's trip.
	var outLeg, backLeg time.Duration
	independent := st.net != nil && st.net.Independent()
	switch {
	case st.rttInEvent:
		rtt := time.Duration(pay)
		outLeg, backLeg = rtt/2, rtt-rtt/2
	case independent:
		outLeg, backLeg = st.draws.Trip(uint64(c), uint64(a))
	}
	// The draws every outcome but a connection needs are made before the
	// decision, whose loads they overlap.
	backoffBits := rng.DrawKeyed(st.backoffKey, uint64(c), uint64(a))
	var serverBits uint64
	if independent && st.work {
		serverBits = st.draws.ServerBits(uint64(c), uint64(a))
	}
	deadline := never
	if st.timeout > 0 {
		deadline = st.sentAt(t, c, a, outLeg) + st.timeout
	}
	out, gw, decided, answered := st.decide(t, c, a, deadline)
	if st.trace != nil {
		st.trace(t, c, out == admitted)
	}
	dropped := st.queues != nil && st.turn.dropped
	var back time.Duration
	switch {
	case st.net == nil || out == skipped || dropped:
	case independent:
		back = backLeg + st.draws.WorkTimeOf(serverBits, out == admitted)
	default:
		back = st.draws.Back(uint64(c), uint64(a), out == admitted, answered)
	}
	reply := answered + back
	late := reply > deadline || out == skipped || dropped // a skipped handshake is never answered
	useful := out == admitted && !late
	if st.queues != nil {
		st.tally(out, decided, useful)
	}
	if decided < st.horizon {
		w := st.rec.attempt(decided, out, gw)
		if out == admitted {
			st.rec.accept(w, gw)
		}
	}
	if out == admitted {
		if st.pool != nil {
			st.pool.conns[gw]++ // the balancer counts the connection from its admission
		}
		// The claim's work ends when its answer leaves: useful if the
		// client is still there, wasted if not.
		if answered < st.horizon && !dropped {
			if !useful {
				st.end.wasted++
			}
			if st.rec.tracked {
				st.rec.claimed(answered, gw, useful)
			}
		}
		if useful {
			if reply < st.horizon {
				st.rec.connected(reply)
			} else {
				st.end.cut = true
			}
			return 0, 0, false
		}
	}
	retryAfter, from := st.retryAfter, reply
	if out == refused {
		retryAfter = 0
	}
	if late {
		if deadline >= st.horizon {
			st.end.cut = true
			return 0, 0, false
		}
		st.end.timedOut++
		retryAfter, from = 0, deadline
	}
	var prev time.Duration
	if st.prev != nil {
		prev = st.prev[c]
	}
	wait, raw, giveUp := st.b.Next(int(a), prev, retryAfter, backoffBits)
	if giveUp {
		st.rec.abandoned++
		return 0, 0, false
	}
	if st.prev != nil {
		st.prev[c] = raw
	}
	send := from + wait
	if !st.within(send) {
		return 0, 0, false
	}
	next, nextPay = st.arrival(c, a+1, send, ahead)
	if !st.within(next) {
		return 0, 0, false
	}
	if st.sent != nil {
		st.sent[c] = send
	}
	return next, nextPay, true
}

// sentAt is when client c sent attempt a, which arrived at t after an out
// leg of outLeg when its delays are its own.
func (st *storm) sentAt(t time.Duration, c, a uint32, outLeg time.Duration) time.Duration {
	switch {
	case st.sent == nil:
		return t - outLeg // no latency, or one drawn again from the attempt
	case a == 1:
		return st.firstSend(c)
	}
	return st.sent[c]
}

// tally adds the work of an attempt that reached a gateway with a
// capacity to the outcome's tallies.
func (st *storm) tally(out outcome, decided time.Duration, useful bool) {
	e, tn := st.end, &st.turn
	switch {
	case decided >= st.horizon:
	case out == shed:
		e.shed++
	case out == skipped:
		e.skips++
	case tn.dropped:
		e.skips++
	}
	if !tn.served || tn.start >= st.horizon {
		return
	}
	if tn.start >= e.tailFrom {
		e.tailServed++
		if useful {
			e.tailUseful++
		}
	}
	if lo, hi := max(tn.start, e.tailFrom), min(tn.done, st.horizon); hi > lo {
		e.tailBusy += hi - lo
	}
}

// decide returns what an attempt arriving at t, whose client waits for its
// answer until deadline, gets: the outcome, from which gateway (0 without
// a pool), when admission was decided (or the attempt shed, skipped or
// refused) and when the answer left the gateway. Without a capacity model
// a gateway decides and answers on arrival; with one, see serve.
func (st *storm) decide(t time.Duration, c, a uint32, deadline time.Duration) (out outcome, g int, decided, answered time.Duration) {
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
	if st.queues != nil {
		out, decided, answered = st.serve(g, adm, t, deadline)
		return out, g, decided, answered
	}
	if adm.Admit(t) {
		return admitted, g, t, t
	}
	return rejected, g, t, t
}

// serve passes an attempt arriving at t through gateway g's queue, and
// records its turn in st.turn. The attempt first waits its turn (or,
// with decide: arrival, is decided at once and then waits its turn if
// admitted), a full queue sheds it, and with skip a turn that comes at or after the client's
// deadline drops it.
func (st *storm) serve(g int, adm models.Admission, t, deadline time.Duration) (out outcome, decided, answered time.Duration) {
	q, tn := st.queues[g], &st.turn
	*tn = turn{}
	line := st.line(g, t)
	if st.maxQueue > 0 && line.len() >= int64(st.maxQueue) {
		return shed, t, t
	}
	tn.served = true
	if q.DecidesOnArrival() {
		decided = q.Decision(t)
		tn.start = q.Start(decided)
		if !adm.Admit(decided) {
			tn.done = tn.start + q.RejectTime()
			return rejected, decided, q.Book(decided, false)
		}
		st.queued(line, t, tn.start)
		switch {
		case tn.start >= deadline && st.skip:
			tn.dropped = true
			tn.done = q.Skip(tn.start)
		case tn.start >= deadline:
			tn.done = q.Waste(tn.start) // Book's time, at the wasted claims' rate
		default:
			tn.done = q.Book(decided, true)
		}
		return admitted, decided, tn.done
	}
	tn.start = q.Start(t)
	st.queued(line, t, tn.start)
	if st.skip && tn.start >= deadline {
		tn.done = q.Skip(tn.start)
		return skipped, tn.start, tn.done
	}
	out = rejected
	if adm.Admit(tn.start) {
		out = admitted
	}
	if out == admitted && tn.start >= deadline {
		tn.done = q.Waste(tn.start)
	} else {
		tn.done = q.Finish(tn.start, out == admitted)
	}
	return out, tn.start, tn.done
}

// line returns gateway g's waiting line as it stands at t, having first
// taken its length at the end of every window before t.
func (st *storm) line(g int, t time.Duration) *waitLine {
	l := &st.end.lines[g]
	st.sampleLine(l, g, t)
	l.advance(t)
	return l
}

// sampleLine records gateway g's waiting handshakes at each window end
// before until (up to the horizon), while any are waiting. A sample at
// end W counts the handshakes that arrived by W and whose turn starts
// after W: every arrival up to W has been booked when it is taken.
func (st *storm) sampleLine(l *waitLine, g int, until time.Duration) {
	w := st.rec.width
	if l.width != w {
		l.width, l.next = w, (l.sampled/w+1)*w
	}
	for l.len() > 0 && l.next < until && l.next <= st.horizon {
		end := l.next
		if st.rec.reach(end - 1); st.rec.width != w {
			w = st.rec.width // the windows grew: the next end is further out
			l.width, l.next = w, (l.sampled/w+1)*w
			continue
		}
		l.advance(end)
		if n := l.len(); n > 0 && st.rec.tracked {
			st.rec.waiting(end, g, n)
		}
		l.sampled, l.next = end, end+w
	}
	if l.len() == 0 && until > l.next {
		l.sampled = (until - 1) / w * w
		l.next = l.sampled + w
	}
}

// queued books a handshake that arrived at t and whose turn starts at
// start into its gateway's line, and tallies its wait.
func (st *storm) queued(l *waitLine, t, start time.Duration) {
	if start > t {
		l.add(start)
	}
	if t < st.horizon {
		st.end.waits.add(start - t)
	}
}

// pool is the load balancer's view of the gateways: gateway 0 failed at
// t = 0 and is taken out of rotation at downAt.
type pool struct {
	spec   *models.PoolSpec
	by     balancing // spec.Balancer, resolved once: a string compare an attempt costs
	seed   uint64
	downAt time.Duration
	adms   []models.Admission // index 0 is the failed gateway's (unused)
	conns  []int64            // connections per gateway, for least_connections
	next   uint64             // round-robin counter
}

// balancing is a pool's balancer as the engine tests it.
type balancing uint8

const (
	randomly balancing = iota
	roundRobin
	leastConnections
)

func newPool(s *Scenario, seed uint64) *pool {
	p := &pool{spec: s.Gateways, seed: seed, downAt: s.Gateways.DownAt(seed)}
	switch s.Gateways.Balancer {
	case models.BalancerRoundRobin:
		p.by = roundRobin
	case models.BalancerLeastConnections:
		p.by = leastConnections
	}
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
	switch p.by {
	case roundRobin:
		g := lo + int(p.next%uint64(n))
		p.next++
		return g
	case leastConnections:
		best := lo
		for g := lo + 1; g < len(p.adms); g++ {
			if p.conns[g] < p.conns[best] {
				best = g
			}
		}
		return best
	}
	return lo + int(rng.UniformDuration(rng.Draw(p.seed, uint64(c), uint64(a), rng.StreamBalancer), time.Duration(n)))
}
