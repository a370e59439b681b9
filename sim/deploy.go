package sim

import (
	"cmp"
	"slices"
	"time"

	"stormsim/internal/quantile"
	"stormsim/policies/rng"
)

// A rolling deploy is a storm whose failures the model schedules itself:
// each batch of gateways is drained (its clients told to leave by the
// drain's pace), exits, restarts and comes back into the balancer's
// rotation, and the next batch is drained when the previous one is done.
// When a batch's drain begins, everything about it is known (who is on
// its gateways, when the last goaway goes), so its steps and the next
// batch's start are scheduled then. The engines run a step before any
// attempt at the same instant, and push the first attempts of the clients
// it drains in client order.

// offline marks a client with no connection in deployment.on.
const offline = 0xffff

// deployment is a rolling deploy in progress.
type deployment struct {
	spec    *DeploySpec
	goaways *goaways
	order   []int // gateways in the order they are drained
	next    int   // place in order of the next batch's first gateway
	steps   []step
	seq     uint64

	on        []uint16        // the gateway each client is connected to, or offline
	drained   []uint8         // goaways each client got, at most 255
	leftAt    []time.Duration // when each client got its last goaway
	offline   float64         // client-seconds from a goaway to the next connect, summed
	online    int64           // clients connected now
	told      int64           // goaways sent
	perWindow windowSeries    // goaways per window (the recorder's windows)
	drains    []DeployDrain
	first     time.Duration // the first drain's start
	back      time.Duration // the last gateway's return to rotation
	cut       bool          // the horizon stopped the deploy before its end
}

// step is one scheduled action of the deploy: at, then push order, decide
// which of two at one instant comes first.
type step struct {
	at   time.Duration
	seq  uint64
	kind stepKind
	g    int
}

type stepKind uint8

const (
	stepDrain stepKind = iota // the next batch drains
	stepOut                   // the balancer takes gateway g out of rotation
	stepExit                  // gateway g's process exits: its connections are gone
	stepBack                  // gateway g has restarted: a fresh admission
	stepIn                    // the balancer takes gateway g back into rotation
)

func newDeployment(st *storm) *deployment {
	s, count := st.s, st.s.Gateways.Count
	d := &deployment{spec: s.Deploy, on: make([]uint16, s.Clients), drained: make([]uint8, s.Clients),
		leftAt: make([]time.Duration, s.Clients), first: s.Disconnect.At, online: int64(s.Clients)}
	rate, burst := s.deployReservation()
	d.goaways = newGoaways(s, s.Deploy.Grace, drainDestination{rate: rate, burst: burst}, st.seed)
	d.order = make([]int, count)
	for i := range d.order {
		d.order[i] = i
	}
	switch s.Deploy.Order {
	case DeployReverse:
		slices.Reverse(d.order)
	case DeployRandom:
		for i := count - 1; i > 0; i-- { // Fisher-Yates, a draw per place
			j := int(rng.UniformDuration(rng.Draw(st.seed, uint64(i), 0, rng.StreamDeployOrder), time.Duration(i+1)))
			d.order[i], d.order[j] = d.order[j], d.order[i]
		}
	}
	p := st.pool
	for c := range d.on {
		g := c % count
		d.on[c] = uint16(g)
		p.conns[g]++
	}
	d.schedule(d.first, stepDrain, 0)
	return d
}

func (d *deployment) schedule(at time.Duration, kind stepKind, g int) {
	d.seq++
	s := step{at: at, seq: d.seq, kind: kind, g: g}
	i, _ := slices.BinarySearchFunc(d.steps, s, func(a, b step) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.seq, b.seq))
	})
	d.steps = slices.Insert(d.steps, i, s)
}

// nextStep sets st.stepAt to the deploy's next step, never when there is
// none or it would come at or after the horizon.
func (st *storm) nextStep() {
	d := st.deploy
	st.stepAt = never
	if len(d.steps) == 0 {
		return
	}
	if at := d.steps[0].at; st.within(at) {
		st.stepAt = at
	} else {
		d.cut = true
	}
}

// step runs the deploy's next step, pushing the first attempts of the
// clients a drain tells to leave.
func (st *storm) step(push func(t time.Duration, c, attempts, pay uint32)) {
	d, p := st.deploy, st.pool
	s := d.steps[0]
	d.steps = d.steps[1:]
	switch s.kind {
	case stepDrain:
		st.drainBatch(s.at, push)
	case stepOut:
		p.setRotation(s.g, false)
	case stepExit:
		p.state[s.g] = gatewayDown
		p.conns[s.g] = 0
	case stepBack:
		p.state[s.g] = gatewayUp
		p.adms[s.g] = p.admission.New()
	case stepIn:
		p.setRotation(s.g, true)
		d.back = max(d.back, s.at)
	}
	st.nextStep()
}

// drainBatch starts the drain of the next batch at t: each gateway's
// connections, in client order, get their goaways at the pace's times
// and reconnect; the gateways' exits, restarts and returns, and the next
// batch, are scheduled.
func (st *storm) drainBatch(t time.Duration, push func(t time.Duration, c, attempts, pay uint32)) {
	d, p, spec := st.deploy, st.pool, st.s.Deploy
	batch := d.order[d.next:min(len(d.order), d.next+spec.Batch)]
	d.next += len(batch)
	ready := t
	var clients []uint32
	for _, g := range batch {
		p.state[g] = gatewayDraining
		clients = clients[:0]
		for c, on := range d.on {
			if int(on) == g {
				clients = append(clients, uint32(c))
			}
		}
		n := len(clients)
		last := time.Duration(0)
		sent := d.goaways.sent(n)
		load := 1.0
		if n > 0 {
			load = st.s.Capacity.DrainLoad(n, sent[n-1]-sent[0])
		}
		for i, c := range clients {
			at := sent[i]
			last = at
			d.on[c] = offline
			d.online--
			d.told++
			if t+at < st.horizon {
				d.perWindow.add(st.rec.index(t+at), 1)
			}
			d.drained[c] = min(254, d.drained[c]) + 1
			d.leftAt[c] = t + at
			send := t + at + d.goaways.firstWait(uint64(c), uint64(d.drained[c]), i, n, at)
			if !st.within(send) {
				continue
			}
			if st.sent != nil {
				st.sent[c] = send
			}
			if arrive, pay := st.drainArrival(c, uint64(len(d.drains)), send, t+sent[n-1], load); st.within(arrive) {
				push(arrive, c, 0, pay)
			}
		}
		exit := t + last
		back := exit + spec.Startup
		in := p.probeAfter(back)
		d.schedule(p.probeAfter(t), stepOut, g)
		d.schedule(exit, stepExit, g)
		d.schedule(back, stepBack, g)
		d.schedule(in, stepIn, g)
		dr := DeployDrain{Gateway: g, StartMs: ms(t), LastGoawayMs: ms(exit), ExitMs: ms(exit), BackMs: ms(in), Connections: int64(n)}
		if d.goaways.cut(n) {
			for i := n - 1; i >= 0 && d.goaways.pace.GoawayAt(i, n) > d.goaways.grace; i-- {
				dr.CutGoaways++
			}
		}
		d.drains = append(d.drains, dr)
		if spec.WaitsReady() {
			ready = max(ready, in)
		} else {
			ready = max(ready, exit)
		}
	}
	if d.next < len(d.order) {
		d.schedule(ready+spec.Pause, stepDrain, 0)
	}
}

// deployConnected records that client c connected to gateway g at t.
func (st *storm) deployConnected(c uint32, g int, t time.Duration) {
	d := st.deploy
	d.on[c] = uint16(g)
	d.online++
	if d.drained[c] > 0 {
		d.offline += (t - d.leftAt[c]).Seconds()
	}
}

// DeployResult is a rolling deploy: how long it took, and what it cost
// the clients. Per-gateway handshakes, rejections and peaks are in the
// result's gateways, the database load in its database.
type DeployResult struct {
	Gateways int `json:"gateways"`
	Batch    int `json:"batch"`
	// DurationMs is from the first drain's start to the later of the last
	// gateway's return to rotation and the last reconnect.
	DurationMs float64       `json:"duration_ms"`
	Drains     []DeployDrain `json:"drains"`
	// Reconnects are the goaways per client, over every client (0 for one
	// never drained): nearest-rank p50 and p99, and the max.
	Reconnects          CountQuantiles `json:"reconnects"`
	Goaways             int64          `json:"goaways"`                // goaways sent, over every drain: the rounds of reconnects
	DrainedMoreThanOnce int64          `json:"drained_more_than_once"` // clients told to leave twice or more
	// ClientSecondsOffline is the time from each goaway to the client's
	// next connect, summed over clients and drains, in seconds; rounds
	// that never connected (NotBack) are not in it.
	ClientSecondsOffline float64 `json:"client_seconds_offline"`
	NotBack              int64   `json:"not_back"` // clients not connected at the end: gave up, or the horizon came first
	Cut                  bool    `json:"cut"`      // the horizon came before the deploy's last step
}

// DeployDrain is one gateway's drain within a deploy; times are ms since
// t = 0.
type DeployDrain struct {
	Gateway      int     `json:"gateway"`
	StartMs      float64 `json:"start_ms"`
	LastGoawayMs float64 `json:"last_goaway_ms"`
	ExitMs       float64 `json:"exit_ms"` // the last connection gone: the process exits
	BackMs       float64 `json:"back_ms"` // restarted and back in the balancer's rotation
	Connections  int64   `json:"connections"`
	CutGoaways   int64   `json:"cut_goaways,omitempty"` // told at the grace instead of at their pace's time
}

// CountQuantiles are nearest-rank quantiles of a count per client.
type CountQuantiles struct {
	P50 int64 `json:"p50"`
	P99 int64 `json:"p99"`
	Max int64 `json:"max"`
}

func (st *storm) deployResult(res *Result) *DeployResult {
	d, s := st.deploy, st.s
	res.Series.Goaways = make([]int64, len(res.Series.Attempts))
	copy(res.Series.Goaways, d.perWindow.v)
	out := &DeployResult{Gateways: s.Gateways.Count, Batch: s.Deploy.Batch, Drains: d.drains, Goaways: d.told,
		ClientSecondsOffline: d.offline, Cut: d.cut}
	var hist [256]int64
	for c, n := range d.drained {
		hist[n]++
		if n > 1 {
			out.DrainedMoreThanOnce++
		}
		if d.on[c] == offline {
			out.NotBack++
		}
	}
	n := int64(len(d.drained))
	at := func(rank int64) int64 {
		for k, seen := 0, int64(0); k < len(hist); k++ {
			if seen += hist[k]; seen >= rank {
				return int64(k)
			}
		}
		return 0
	}
	out.Reconnects = CountQuantiles{P50: at(quantile.RankPercent(n, 50)), P99: at(quantile.RankPercent(n, 99)), Max: at(n)}
	end := ms(d.back)
	if last, ok := res.Convergence(); ok {
		end = max(end, last)
	}
	out.DurationMs = end - ms(d.first)
	return out
}
