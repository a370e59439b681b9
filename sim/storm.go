package sim

import (
	"slices"
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
	goaways    *goaways                 // the drain section's schedule; nil: the seed's drain
	goawayAt   []time.Duration          // with goaways, when each client's goaway leaves
	drainEnd   time.Duration            // with network.drain_first_out, when the drain's last session ends
	drainLoad  float64                  // and how hard it works the gateway (CapacitySpec.DrainLoad)
	prev       []time.Duration          // previous raw delay per client, for stateful policies
	backoffKey uint64                   // rng.StreamKey(seed, StreamBackoff)
	gone       *models.Distribution     // network.gone, with skip and a timeout; nil: a departure is noticed at the timeout
	goneKey    uint64                   // rng.StreamKey(seed, StreamGoneLeg)
	rec        recorder
	plain      bool          // no latency, pool, queue, timeout or deploy: handlePlain's storm
	fullOnly   bool          // b's wait is its full-jitter delay alone (policies.Backoff.NextFull)
	slots      *models.Slots // adm when it is slots, called without the interface

	deploy *deployment   // nil without a deploy
	stepAt time.Duration // the deploy's next step; never without one

	horizon  time.Duration   // nothing happens at or after it
	timeout  time.Duration   // the clients' handshake timeout; 0 = none
	sent     []time.Duration // when each client sent its pending attempt (timeouts with shared delays)
	skip     bool            // gateways drop handshakes whose client has gone
	maxQueue int             // shed beyond this many waiting; 0 = never
	end      *ending         // the outcome's tallies
	turn     turn            // the current attempt's turn at a gateway with a capacity

	// trace, when set, sees what became of every attempt; the tests use
	// it to compare engines client by client and to tally on their own.
	trace func(attemptTrace)
}

// attemptTrace is one attempt as the tests see it: when it reached a
// gateway (and which), what it got (skipped for a handshake admitted,
// then dropped at its claim's turn), when admission was decided and when
// the gateway was done with it.
type attemptTrace struct {
	arrival           time.Duration
	client            uint32
	gateway           int
	out               outcome
	decided, answered time.Duration
}

// ending tallies what a storm's outcome needs: lost work, queue waits,
// the handshakes the horizon found unsettled and the surviving gateways'
// work over the last tenth of the horizon.
type ending struct {
	lines                         []waitLine // per gateway, with a capacity
	waits                         waitHistogram
	timedOut, wasted, shed, skips int64
	waiting                       int64             // handshakes still waiting or in service at the horizon
	tail                          *models.TailTally // what the outcome rule reads
	cut                           bool              // the horizon stopped something
}

func newStorm(s *Scenario, b *policies.Backoff, seed uint64) *storm {
	st := &storm{s: s, b: b, underTest: b, seed: seed, adm: s.Admission.New(), retryAfter: s.Admission.RetryAfter,
		backoffKey: rng.StreamKey(seed, rng.StreamBackoff), horizon: s.EffectiveHorizon()}
	if s.Draining() {
		st.draining = true
		if s.DrainPolicy != nil {
			st.b, _ = policies.New(*s.DrainPolicy) // validated by Resolve
		}
		if s.Drain != nil || (s.Capacity != nil && s.Capacity.GoawayPerS > 0 && !s.Failure.Spread) {
			st.goaways = newGoaways(s, s.Failure.Grace, s.drainDestinations()[0], seed)
			st.goawayAt = st.goaways.sent(s.Clients)
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
	if st.draining && st.net != nil && st.net.DrainFirstOut != nil {
		first, last := st.sessionEnds()
		st.drainEnd, st.drainLoad = last, s.Capacity.DrainLoad(s.Clients, last-first)
	}
	if st.timeout > 0 && st.net != nil && !st.net.Independent() {
		// Shared delays depend on when an attempt was sent, so that time
		// is kept rather than drawn again.
		st.sent = make([]time.Duration, s.Clients)
	}
	if s.Gateways != nil {
		st.pool = newPool(s, seed)
	}
	st.stepAt = never
	if s.Deploy != nil {
		if s.DrainPolicy != nil {
			st.b, _ = policies.New(*s.DrainPolicy) // every round begins with a goaway
		}
		st.pool.deploying()
	}
	if s.Capacity != nil {
		st.queues = make([]*models.HandshakeQueue, max(1, st.gatewayCount()))
		for g := range st.queues {
			st.queues[g] = models.NewHandshakeQueue(s.Capacity)
		}
		st.skip = s.Capacity.Abandoned == models.AbandonedSkip
		st.maxQueue = s.Capacity.MaxQueue
		if st.skip && st.timeout > 0 && s.Network != nil && s.Network.GoneLeg != nil {
			st.gone, st.goneKey = s.Network.GoneLeg, rng.StreamKey(seed, rng.StreamGoneLeg)
		}
	}
	// The outcome's tallies are kept for every run that could need them:
	// one the safety horizon may cut needs them too, so only storms that
	// provably end early go without.
	survivors := len(st.queues)
	if st.pool != nil {
		survivors = len(st.pool.adms) - 1
	}
	st.end = &ending{tail: models.NewTailTally(st.horizon, survivors)}
	if st.queues != nil {
		st.end.lines = make([]waitLine, len(st.queues))
	}
	st.rec.init(s.Metrics.Window, st.gatewayCount(), s.Clients, s.TracksOutcome(), s.Capacity != nil && s.Capacity.DecidesApart())
	st.plain = st.net == nil && st.pool == nil && st.queues == nil && st.timeout == 0 && s.Deploy == nil
	st.fullOnly = st.b.FullJitterOnly(st.retryAfter) && st.prev == nil
	st.slots, _ = st.adm.(*models.Slots)
	if s.Deploy != nil {
		st.rec.allGateways = true
		st.deploy = newDeployment(st)
		st.rec.track(&st.deploy.perWindow) // halved with the others when the windows grow
		st.nextStep()
	}
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

// noticeAt is when client c learns that its connection is gone. In a
// paced drain client c is connection c of the drain's order.
func (st *storm) noticeAt(c uint32) time.Duration {
	t := st.s.Disconnect.At
	switch {
	case st.goaways != nil:
		t += st.goawayAt[c]
	case st.draining:
		t += st.s.Failure.GoawayAt(st.seed, uint64(c))
	case st.s.Detection != nil:
		t += st.s.Detection.NoticeDelay(st.seed, uint64(c))
	}
	return t
}

// firstSend is when client c sends its first attempt.
func (st *storm) firstSend(c uint32) time.Duration {
	if g := st.goaways; g != nil {
		t := st.goawayAt[c]
		return st.s.Disconnect.At + t + g.firstWait(uint64(c), 1, int(c), st.s.Clients, t)
	}
	return st.noticeAt(c) + policies.InitialWait(st.seed, uint64(c), st.s.InitialJitter)
}

// firstArrival is when client c's first attempt reaches a gateway, and the
// payload its event carries: when both legs are halves of an rtt drawn for
// the attempt alone, that rtt, so that it is drawn once for the attempt,
// not again on arrival.
func (st *storm) firstArrival(c uint32) (time.Duration, uint32) {
	send := st.firstSend(c)
	if st.draining {
		return st.drainArrival(c, 0, send, st.drainEnd, st.drainLoad)
	}
	return st.arrival(c, 1, send, 0)
}

// sessionEnds is when a drain's first and last sessions end: its first
// and last goaways' times, or with goaways spread over the grace the
// earliest and latest clients' draws.
func (st *storm) sessionEnds() (first, last time.Duration) {
	at := st.s.Disconnect.At
	if st.goaways != nil {
		return at + st.goawayAt[0], at + st.goawayAt[st.s.Clients-1]
	}
	first = st.s.Failure.GoawayAt(st.seed, 0)
	last = first
	for c := 1; c < st.s.Clients; c++ {
		g := st.s.Failure.GoawayAt(st.seed, uint64(c))
		first, last = min(first, g), max(last, g)
	}
	return at + first, at + last
}

// drainArrival is arrival for client c's first attempt after a goaway,
// sent at send, in the drain numbered drain whose last session ends at
// lastEnd, working the gateway at load (CapacitySpec.DrainLoad): with
// network.drain_first_out its way depends on whether the drain was done.
func (st *storm) drainArrival(c uint32, drain uint64, send, lastEnd time.Duration, load float64) (time.Duration, uint32) {
	if st.net == nil || st.net.DrainFirstOut == nil {
		return st.arrival(c, 1, send, 0)
	}
	return send + st.draws.DrainOut(uint64(c), drain, send, send < lastEnd, load), 0
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
	return st.s.InitialJitter == 0 && st.s.Detection == nil && st.net == nil && !(st.draining && st.s.Failure.Spread) && st.goaways == nil
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
	if st.plain {
		next, again = st.handlePlain(t, c, attempts)
		return next, 0, again
	}
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
	deadline, gone := never, never
	if st.timeout > 0 {
		deadline = st.sentAt(t, c, a, outLeg) + st.timeout
		gone = deadline
		if st.gone != nil {
			gone += st.gone.Sample(rng.DrawKeyed(st.goneKey, uint64(c), uint64(a)))
		}
	}
	out, gw, decided, answered := st.decide(t, c, a, deadline, gone)
	dropped := st.queues != nil && st.turn.dropped
	if st.trace != nil {
		settled := out
		if dropped {
			settled = skipped
		}
		st.trace(attemptTrace{arrival: t, client: c, gateway: gw, out: settled, decided: decided, answered: answered})
	}
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
		st.tally(out, gw, answered, useful)
	}
	// An attempt counts at its arrival; what it got, once the gateway is
	// done with it (its answer left), in the window of its decision: one
	// the horizon finds still waiting or in service has got nothing yet.
	settled := answered < st.horizon
	if !settled {
		st.end.waiting++
	}
	st.rec.attempt(t, decided, settled, out, gw, dropped)
	if st.rec.decisions && (out == admitted || out == rejected) && decided < st.horizon {
		st.rec.decision(decided)
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
				if st.deploy != nil {
					st.deployConnected(c, gw, reply)
				}
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

// handlePlain is handle for a plain storm (st.plain), which every sweep
// and solve is made of: the one gateway decides and answers on arrival,
// no answer travels and no handshake times out, so what handle does for
// the models drops out and the storm pays only for what it uses. The
// engine tests hold the two to the same results, attempt by attempt.
func (st *storm) handlePlain(t time.Duration, c, attempts uint32) (next time.Duration, again bool) {
	a := attempts + 1
	backoffBits := rng.DrawKeyed(st.backoffKey, uint64(c), uint64(a))
	var ok bool
	if st.slots != nil {
		ok = st.slots.Admit(t)
	} else {
		ok = st.adm.Admit(t)
	}
	out := rejected
	if ok {
		out = admitted
	}
	if st.trace != nil {
		st.trace(attemptTrace{arrival: t, client: c, out: out, decided: t, answered: t})
	}
	switch {
	case t >= st.horizon: // unsettled: it has got nothing yet
		st.end.waiting++
		st.rec.attempt(t, t, false, out, 0, false)
		if ok {
			st.end.cut = true
			return 0, false
		}
	case ok:
		st.rec.plainAttempt(t, true)
		if st.rec.tracked {
			st.rec.claimed(t, 0, true)
		}
		st.rec.connected(t)
		return 0, false
	default:
		st.rec.plainAttempt(t, false)
	}
	if st.fullOnly {
		next = t + st.b.NextFull(int(a), backoffBits)
		return next, st.within(next)
	}
	var prev time.Duration
	if st.prev != nil {
		prev = st.prev[c]
	}
	wait, raw, giveUp := st.b.Next(int(a), prev, st.retryAfter, backoffBits)
	if giveUp {
		st.rec.abandoned++
		return 0, false
	}
	if st.prev != nil {
		st.prev[c] = raw
	}
	next = t + wait
	return next, st.within(next)
}

// sentAt is when client c sent attempt a, which arrived at t after an out
// leg of outLeg when its delays are its own.
func (st *storm) sentAt(t time.Duration, c, a uint32, outLeg time.Duration) time.Duration {
	switch {
	case st.sent == nil:
		return t - outLeg // no latency, or one drawn again from the attempt
	case a == 1 && st.deploy == nil:
		return st.firstSend(c)
	}
	return st.sent[c]
}

// tally adds the work of an attempt that reached gateway g, one with a
// capacity, and was done with at answered, to the outcome's tallies: the
// shed and skipped among those settled before the horizon, the gateway's
// time on it and, for a route claim, its end.
func (st *storm) tally(out outcome, g int, answered time.Duration, useful bool) {
	e, tn := st.end, &st.turn
	if answered < st.horizon {
		switch {
		case out == shed:
			e.shed++
		case out == skipped || tn.dropped:
			e.skips++
		}
	}
	if !tn.served {
		return
	}
	e.tail.Work(g, tn.start, tn.done)
	if out == admitted && !tn.dropped {
		e.tail.Claim(answered, useful)
	}
}

// decide returns what an attempt arriving at t, whose client waits for its
// answer until deadline and whose gateway knows it has gone from gone on
// (network.gone), gets: the outcome, from which gateway (0 without
// a pool), when admission was decided (or the attempt shed, skipped or
// refused) and when the answer left the gateway. Without a capacity model
// a gateway decides and answers on arrival; with one, see serve.
func (st *storm) decide(t time.Duration, c, a uint32, deadline, gone time.Duration) (out outcome, g int, decided, answered time.Duration) {
	adm := st.adm
	st.turn = turn{} // an attempt refused before any queue has no turn: none of the last one's
	if p := st.pool; p != nil {
		if st.deploy != nil {
			g = p.pickRotation(c, a, st.deploy.drained[c])
		} else {
			g = p.pick(t, c, a)
		}
		switch {
		case p.state != nil:
			switch {
			case g < 0: // nothing in rotation: the balancer has nowhere to send it
				return refused, g, t, t
			case p.state[g] == gatewayDraining:
				return unavailable, g, t, t
			case p.state[g] == gatewayDown:
				return refused, g, t, t
			}
		case g == 0 && st.draining:
			return unavailable, 0, t, t
		case g == 0:
			return refused, 0, t, t
		}
		adm = p.adms[g]
	}
	if st.queues != nil {
		out, decided, answered = st.serve(g, adm, t, deadline, gone)
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
// admitted), a full queue sheds it, and with skip a turn that comes once
// the gateway knows the client has gone (gone: its deadline, or later
// with network.gone) drops it; a turn before that but after the deadline
// is a wasted claim.
func (st *storm) serve(g int, adm models.Admission, t, deadline, gone time.Duration) (out outcome, decided, answered time.Duration) {
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
		case tn.start >= gone && st.skip:
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
	if st.skip && tn.start >= gone {
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
// before until, while any are waiting; the window the horizon falls in
// ends at the horizon. A sample at end W counts the handshakes that
// arrived by W and whose turn starts after W: every arrival up to W has
// been booked when it is taken. At the horizon, where no turn starts, it
// counts those whose turn had not started before it.
func (st *storm) sampleLine(l *waitLine, g int, until time.Duration) {
	w := st.rec.width
	if l.width != w {
		l.width, l.next = w, (l.sampled/w+1)*w
	}
	for l.len() > 0 && l.next < until && l.next-w < st.horizon {
		end := min(l.next, st.horizon)
		if st.rec.reach(end - 1); st.rec.width != w {
			w = st.rec.width // the windows grew: the next end is further out
			l.width, l.next = w, (l.sampled/w+1)*w
			continue
		}
		if end == st.horizon {
			l.advance(end - 1)
		} else {
			l.advance(end)
		}
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
// start into its gateway's line, and tallies its wait: up to its turn,
// or up to the horizon for one still waiting there.
func (st *storm) queued(l *waitLine, t, start time.Duration) {
	if start > t {
		l.add(start)
	}
	st.end.waits.add(min(start, st.horizon) - t)
}

// pool is the load balancer's view of the gateways: gateway 0 failed at
// t = 0 and is taken out of rotation at downAt.
type pool struct {
	spec      *models.PoolSpec
	by        balancing // spec.Balancer, resolved once: a string compare an attempt costs
	seed      uint64
	downAt    time.Duration
	admission models.AdmissionSpec // each gateway's
	adms      []models.Admission   // index 0 is the failed gateway's (unused, but in a deploy)
	conns     []int64              // connections per gateway, for least_connections
	next      uint64               // round-robin counter

	// In a deploy every gateway serves, in turn drains and restarts: its
	// state, and the gateways in the balancer's rotation in index order.
	// state is nil without a deploy.
	state    []gatewayState
	rotation []int
}

// gatewayState is a deploy's gateway: serving, draining (503 to what
// reaches it) or down (its process gone, the connection refused).
type gatewayState uint8

const (
	gatewayUp gatewayState = iota
	gatewayDraining
	gatewayDown
)

// deploying turns the pool into a deploy's: every gateway up and in
// rotation, gateway 0 included.
func (p *pool) deploying() {
	p.state = make([]gatewayState, len(p.adms))
	p.rotation = make([]int, len(p.adms))
	for g := range p.adms {
		p.adms[g] = p.admission.New()
		p.conns[g] = 0
		p.rotation[g] = g
	}
}

// setRotation puts gateway g in the balancer's rotation or takes it out.
func (p *pool) setRotation(g int, in bool) {
	i, found := slices.BinarySearch(p.rotation, g)
	switch {
	case in && !found:
		p.rotation = slices.Insert(p.rotation, i, g)
	case !in && found:
		p.rotation = slices.Delete(p.rotation, i, i+1)
	}
}

// probeAfter is when the balancer's first health probe strictly after t
// runs (probes every health_check from the phase DownAt draws), t itself
// without a health check: when it notices a change at t.
func (p *pool) probeAfter(t time.Duration) time.Duration {
	every := p.spec.HealthCheck
	if every == 0 {
		return t
	}
	phase := p.downAt // the first probe after 0, in (0, every]
	if t < phase {
		return phase
	}
	return phase + ((t-phase)/every+1)*every
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
	p.admission = spec
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

// pickRotation is pick in a deploy: among the gateways in rotation, -1
// when there is none. round (the client's goaways so far) keys a random
// balancer's draw with the attempt, so each round draws afresh.
func (p *pool) pickRotation(c, a uint32, round uint8) int {
	n := len(p.rotation)
	if n == 0 {
		return -1
	}
	switch p.by {
	case roundRobin:
		g := p.rotation[p.next%uint64(n)]
		p.next++
		return g
	case leastConnections:
		best := p.rotation[0]
		for _, g := range p.rotation[1:] {
			if p.conns[g] < p.conns[best] {
				best = g
			}
		}
		return best
	}
	return p.rotation[models.RandomPick(p.seed, uint64(c), uint64(a), uint64(round), n)]
}
