package models

import (
	"math"
	"slices"
	"time"

	"stormsim/internal/param"
)

// CapacitySpec is how fast a gateway gets through handshakes. Each gateway
// serves its handshakes one at a time in arrival order: admission is decided
// when a handshake's turn comes, an admitted one (route claim included)
// holds the gateway 1/admit_per_s seconds and a rejected one 1/reject_per_s,
// and the answer leaves when that ends. Under a storm this queue, not the
// network, is what makes handshakes slow; without the section a gateway
// answers at once.
//
// With decide: arrival the admission token is taken when the handshake
// arrives, as a gateway that checks its bucket before any database work
// does (cmd/gateway): an admitted handshake then waits its turn for the
// 1/admit_per_s of route-claim work, and a rejected one is answered
// 1/reject_per_s after arrival without waiting behind the claims, its
// 1/reject_per_s still pushing back the claims queued after it.
//
// DecidePerS, when set (with decide: arrival and no reject_per_s), puts a
// first stage before the decision: every handshake, admitted or not, waits
// its turn in arrival order for the gateway's CPU and takes 1/decide_per_s
// of it; admission is decided (the token taken) when that ends, a rejection
// answered then, and an admitted handshake then waits in the claim queue
// for its 1/admit_per_s. It stands for a survivor that decides at a
// sustained rate a backlog of requests it has received but not yet looked
// at, apart from the slower claim work (measured by stormsim calibrate).
//
// Abandoned says what a gateway does when a handshake's turn comes (its
// claim's turn, with decide: arrival) and its client has already given up
// (the policy's timeout passed): serve it anyway, a wasted claim that
// takes its token and its 1/admit_per_s, or skip it, which costs
// 1/reject_per_s. MaxQueue sheds load: a handshake that arrives while
// MaxQueue others wait for their turn is answered 503 with the admission's
// Retry-After at once, at no cost.
type CapacitySpec struct {
	AdmitPerS  float64 `yaml:"admit_per_s"`  // admitted handshakes a gateway completes per second
	RejectPerS float64 `yaml:"reject_per_s"` // rejections it answers per second; 0 = they cost nothing
	Decide     Decide  `yaml:"decide"`       // when admission is decided: DecideAtTurn (default) or DecideOnArrival
	DecidePerS float64 `yaml:"decide_per_s"` // handshakes a gateway decides per second, before the claim queue; 0 = decided on arrival
	// WastedPerS is the rate of route claims served, with abandoned:
	// serve, for a client that had gone before the claim's turn: no
	// upgrade, hello or session follows one, so a gateway may do them
	// faster than useful ones. 0 = admit_per_s.
	WastedPerS float64   `yaml:"wasted_per_s,omitempty"`
	Abandoned  Abandoned `yaml:"abandoned,omitempty"` // what to do with a handshake whose client has gone; "" = serve
	MaxQueue   int       `yaml:"max_queue,omitempty"` // handshakes that may wait for their turn; 0 = unbounded
	// GoawayPerS is how fast a draining gateway gets its goaways out: one
	// at a time, goaway i leaving at max(the time its pace asks, goaway
	// i-1's + 1/goaway_per_s) (GoawaysSent). A gateway telling a thousand
	// sessions at once writes their frames over a fraction of a second on
	// a small machine (measured by stormsim calibrate). 0 = at once.
	GoawayPerS float64 `yaml:"goaway_per_s,omitempty"`
	// DecisionShare, with a decision stage (DecidePerS), is what each
	// decision the gateway makes while a route claim is in service adds to
	// that claim: the claims and the decisions share the machine's cores,
	// so a claim beside a dense backlog of decisions takes longer. A useful
	// claim then takes 1/admit_per_s + DecisionShare x (the decisions in
	// (its start, its end]), where the decisions are those of the whole
	// storm, later arrivals' included. The simulator finds that storm by
	// fixed-point iteration over whole runs (sim.ShareResult). A wasted
	// claim takes the same, share included, unless wasted_per_s gives it
	// a measured rate of its own. 0 = none.
	DecisionShare time.Duration `yaml:"decision_share,omitempty"`
	// ClaimShare is the other way round: what each route claim the gateway
	// ends (useful or wasted) while a decision is in service adds to that
	// decision. On a machine whose cores are busy, the two stages slow each
	// other: a decision then takes 1/decide_per_s + ClaimShare x (the
	// claims ending in (its start, its end]). Those claims are all of
	// handshakes decided earlier, so no fixed point is needed for this
	// share itself; with a decision share too, the one fixed point covers
	// both. 0 = none.
	ClaimShare time.Duration `yaml:"claim_share,omitempty"`
}

// MaxDecisionShare bounds CapacitySpec.DecisionShare and
// CapacitySpec.ClaimShare.
const MaxDecisionShare = time.Second

// Shared reports whether either stage's work depends on the other's
// (DecisionShare or ClaimShare): the simulator must then find the storm
// by fixed point.
func (c *CapacitySpec) Shared() bool { return c.DecisionShare > 0 || c.ClaimShare > 0 }

// GoawaysSent turns the times a drain asks its goaways to leave
// (non-decreasing, in the drain's order) into the times they leave, in
// place: sent_i = max(asked_i, sent_(i-1) + 1/goaway_per_s), the step in
// whole nanoseconds; unchanged when GoawayPerS is 0.
func (c *CapacitySpec) GoawaysSent(asked []time.Duration) {
	step := serviceTime(c.GoawayPerS)
	if step == 0 {
		return
	}
	for i := 1; i < len(asked); i++ {
		asked[i] = max(asked[i], asked[i-1]+step)
	}
}

// DrainLoad is how hard a drain whose n sessions end over span works
// the gateway against its full goaway rate, in (0, 1]: its ends per
// second over goaway_per_s, (n-1) x (1/goaway_per_s, in whole
// nanoseconds as GoawaysSent steps) / span, at most 1. A drain that tells
// everyone at once ends its sessions at that rate (1); one paced over 5 s
// at a fraction of it. 1 when GoawayPerS is 0 (c may be nil), span is 0
// or n < 2. network.drain_first_out, measured at the full rate, is
// scaled by it.
func (c *CapacitySpec) DrainLoad(n int, span time.Duration) float64 {
	if c == nil || n < 2 || span <= 0 {
		return 1
	}
	step := serviceTime(c.GoawayPerS)
	if step == 0 {
		return 1
	}
	return min(1, float64(n-1)*float64(step)/float64(span))
}

// Abandoned is what a gateway does with a handshake whose client has gone
// by the time its turn comes (CapacitySpec.Abandoned).
type Abandoned string

const (
	// AbandonedServe does the work anyway: a wasted claim (the default).
	AbandonedServe Abandoned = "serve"
	// AbandonedSkip notices the client has gone and drops the handshake,
	// at the cost of a rejection (1/reject_per_s).
	AbandonedSkip Abandoned = "skip"
)

// MaxQueueLimit bounds CapacitySpec.MaxQueue: a queue is never longer
// than the clients, whose count fits 31 bits.
const MaxQueueLimit = 1 << 31

// Decide is when a gateway with a capacity decides admission
// (CapacitySpec.Decide).
type Decide string

// The moments of decision.
const (
	DecideAtTurn    Decide = "turn"    // when the handshake's turn comes
	DecideOnArrival Decide = "arrival" // when it arrives, before any claim work
)

// DecidesApart reports whether a gateway may decide a handshake's
// admission later than its arrival: at its turn, or after a decision
// stage (DecidePerS). A gateway's log counts its decisions, so a storm
// compared with one counts them too (sim.Series.Decided).
func (c *CapacitySpec) DecidesApart() bool {
	return c.Decide != DecideOnArrival || c.DecidePerS > 0
}

// Validate checks the spec.
func (c *CapacitySpec) Validate() error {
	if !(c.AdmitPerS > 0) || c.AdmitPerS > 1e9 {
		return &param.Error{Key: "admit_per_s", Problem: "must be in (0, 1e9] handshakes per second", Got: c.AdmitPerS}
	}
	if c.RejectPerS < 0 || c.RejectPerS > 1e9 || math.IsNaN(c.RejectPerS) {
		return &param.Error{Key: "reject_per_s", Problem: "must be in [0, 1e9] (0: rejections cost nothing)", Got: c.RejectPerS}
	}
	if c.Decide != "" && c.Decide != DecideAtTurn && c.Decide != DecideOnArrival {
		return &param.Error{Key: "decide", Problem: `must be "turn" or "arrival"`, Got: c.Decide}
	}
	if c.DecidePerS < 0 || c.DecidePerS > 1e9 || math.IsNaN(c.DecidePerS) {
		return &param.Error{Key: "decide_per_s", Problem: "must be in [0, 1e9] handshakes per second (0: no decision stage)", Got: c.DecidePerS}
	}
	if c.DecidePerS > 0 && c.Decide != DecideOnArrival {
		return &param.Error{Key: "decide_per_s", Problem: `needs decide: arrival (the decision ends the first stage)`, Got: c.DecidePerS}
	}
	if c.DecidePerS > 0 && c.RejectPerS != 0 {
		return &param.Error{Key: "reject_per_s", Problem: "must be 0 with decide_per_s (a rejection costs its decision only)", Got: c.RejectPerS}
	}
	if c.WastedPerS < 0 || c.WastedPerS > 1e9 || math.IsNaN(c.WastedPerS) {
		return &param.Error{Key: "wasted_per_s", Problem: "must be in [0, 1e9] claims per second (0: as admit_per_s)", Got: c.WastedPerS}
	}
	switch c.Abandoned {
	case "", AbandonedServe, AbandonedSkip:
	default:
		return &param.Error{Key: "abandoned", Problem: `must be "serve" or "skip"`, Got: c.Abandoned}
	}
	if c.GoawayPerS < 0 || c.GoawayPerS > 1e9 || math.IsNaN(c.GoawayPerS) {
		return &param.Error{Key: "goaway_per_s", Problem: "must be in [0, 1e9] goaways per second (0: at once)", Got: c.GoawayPerS}
	}
	if c.DecisionShare < 0 || c.DecisionShare > MaxDecisionShare {
		return &param.Error{Key: "decision_share", Problem: "must be in [0, 1s] per decision (0: none)", Got: c.DecisionShare}
	}
	if c.DecisionShare > 0 && c.DecidePerS == 0 {
		return &param.Error{Key: "decision_share", Problem: "needs decide_per_s (the decisions it shares the gateway with)", Got: c.DecisionShare}
	}
	if c.ClaimShare < 0 || c.ClaimShare > MaxDecisionShare {
		return &param.Error{Key: "claim_share", Problem: "must be in [0, 1s] per claim (0: none)", Got: c.ClaimShare}
	}
	if c.ClaimShare > 0 && c.DecidePerS == 0 {
		return &param.Error{Key: "claim_share", Problem: "needs decide_per_s (the decisions the claims slow)", Got: c.ClaimShare}
	}
	if c.MaxQueue < 0 || c.MaxQueue > MaxQueueLimit {
		return &param.Error{Key: "max_queue", Problem: "must be in [0, 2^31] handshakes (0: unbounded)", Got: c.MaxQueue}
	}
	return nil
}

// serviceTime is 1/rate in whole nanoseconds (0 for a rate of 0).
func serviceTime(perS float64) time.Duration {
	if perS == 0 {
		return 0
	}
	return time.Duration(math.Round(float64(time.Second) / perS))
}

// HandshakeQueue is one gateway's first-in, first-out handshake server.
type HandshakeQueue struct {
	admit, reject time.Duration // service times
	waste         time.Duration // service time of a claim for a client that has gone (CapacitySpec.WastedPerS)
	free          time.Duration // when the gateway finishes its current work
	decide        time.Duration // first-stage time per handshake (CapacitySpec.DecidePerS); 0 = none
	decideFree    time.Duration // when the first stage finishes its current handshake
	onArrival     bool          // admission decided on arrival (CapacitySpec.Decide)

	// With a decision share: the share, this run's decision times (in
	// order) and the previous run's, which the claims are charged against.
	share          time.Duration
	decided, prior []time.Duration
	wasteShared    bool // a wasted claim is a useful one's work, share included (no wasted_per_s)

	// With a claim share: the share, this run's claim ends (in order) and
	// the previous run's, which the decisions are charged against.
	claimShare            time.Duration
	claimed, priorClaimed []time.Duration
}

// NewHandshakeQueue returns an idle queue for capacity c.
func NewHandshakeQueue(c *CapacitySpec) *HandshakeQueue {
	q := &HandshakeQueue{admit: serviceTime(c.AdmitPerS), reject: serviceTime(c.RejectPerS), onArrival: c.Decide == DecideOnArrival,
		decide: serviceTime(c.DecidePerS), share: c.DecisionShare, claimShare: c.ClaimShare}
	q.waste = q.admit
	if c.WastedPerS > 0 {
		q.waste = serviceTime(c.WastedPerS)
	}
	q.wasteShared = c.WastedPerS == 0 && q.share > 0
	return q
}

// DecidesOnArrival reports whether admission is decided when a handshake
// arrives (then use Decision and Book) rather than at its turn (Start and
// Finish).
func (q *HandshakeQueue) DecidesOnArrival() bool { return q.onArrival }

// Decision is when a handshake arriving at arrival is decided on arrival:
// at once; with a decision stage (CapacitySpec.DecidePerS), when its turn
// there ends, which books that turn. Calls must come in arrival order;
// decisions are then in order.
func (q *HandshakeQueue) Decision(arrival time.Duration) time.Duration {
	if q.decide > 0 {
		// The claims that can end inside this decision are those of the
		// handshakes decided before it, all booked by now: one booked
		// later starts after its own decision, after this one's end.
		q.decideFree = charged(max(arrival, q.decideFree), q.decide, q.claimShare, q.claimed)
		if q.share > 0 || q.claimShare > 0 {
			q.decided = append(q.decided, q.decideFree)
		}
		return q.decideFree
	}
	return arrival
}

// Book serves a handshake decided on arrival and returns when its answer
// leaves: an admitted one after its turn and its claim work, a rejected
// one after its own service time from arrival, that time still taken from
// the gateway (the claims behind it wait for it). With a decision stage,
// arrival is the Decision time. Calls must come in arrival order.
func (q *HandshakeQueue) Book(arrival time.Duration, admitted bool) time.Duration {
	if admitted {
		q.free = q.claimEnd(max(arrival, q.free))
		q.recordClaim()
		return q.free
	}
	q.free = max(arrival, q.free) + q.reject
	return arrival + q.reject
}

// claimEnd is when a useful claim that starts at start ends: after
// 1/admit_per_s and its share of every decision of the previous run in
// (start, end] (charged).
func (q *HandshakeQueue) claimEnd(start time.Duration) time.Duration {
	return charged(start, q.admit, q.share, q.prior)
}

// charged is when work that starts at start ends: after its own time and
// share for every one of the other stage's events (ascending) in (start,
// end]. The end is the least fixed point of that equation, walked to event
// by event: each one inside moves the end by the share, which may bring
// the next inside. One stage's works never overlap, so a run walks each
// event at most once.
func charged(start, own, share time.Duration, events []time.Duration) time.Duration {
	end := start + own
	if share == 0 {
		return end
	}
	i, _ := slices.BinarySearch(events, start+1) // the first event after start
	for ; i < len(events) && events[i] <= end; i++ {
		end += share
	}
	return end
}

// recordClaim records the claim that has just ended (at q.free), with a
// claim share.
func (q *HandshakeQueue) recordClaim() {
	if q.claimShare > 0 {
		q.claimed = append(q.claimed, q.free)
	}
}

// Decisions are the times of this run's decisions, in order (recorded with
// a decision or a claim share only).
func (q *HandshakeQueue) Decisions() []time.Duration { return q.decided }

// ChargeAgainst sets the decisions the claims of this run are charged
// against: the previous run's Decisions, in order.
func (q *HandshakeQueue) ChargeAgainst(prior []time.Duration) { q.prior = prior }

// Start is when a handshake arriving at arrival gets its turn. Calls must
// come in arrival order; turns then never go backwards in time.
func (q *HandshakeQueue) Start(arrival time.Duration) time.Duration { return max(arrival, q.free) }

// Skip books a handshake dropped at its turn, which started at start
// (CapacitySpec.Abandoned skip): it takes the gateway 1/reject_per_s. It
// returns when the gateway is done with it.
func (q *HandshakeQueue) Skip(start time.Duration) time.Duration {
	q.free = start + q.reject
	return q.free
}

// Waste books the claim of an admitted handshake whose turn started at
// start after its client had gone (CapacitySpec.Abandoned serve): it takes
// the gateway 1/wasted_per_s, or a useful claim's time and share without it. It
// returns when the claim is done.
func (q *HandshakeQueue) Waste(start time.Duration) time.Duration {
	if q.wasteShared {
		q.free = q.claimEnd(start)
	} else {
		q.free = start + q.waste
	}
	q.recordClaim()
	return q.free
}

// RejectTime is the time a rejection (or a skipped handshake) takes the
// gateway, 1/reject_per_s.
func (q *HandshakeQueue) RejectTime() time.Duration { return q.reject }

// Finish books the handshake that started at start and returns when its
// answer leaves the gateway.
func (q *HandshakeQueue) Finish(start time.Duration, admitted bool) time.Duration {
	q.free = start + q.reject
	if admitted {
		q.free = start + q.admit
	}
	return q.free
}
