package calibrate

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/coder/websocket"

	"stormsim/gateway/client"
	"stormsim/gateway/protocol"
	"stormsim/gateway/store"
	"stormsim/gateway/storm"
	"stormsim/models"
	"stormsim/policies"
)

// The lab's conversation and the events written around the crash, as in
// the seed: one join event per device plus one, five messages before the
// crash and ten that the clients miss while they are away.
const (
	labConversation = "lab"
	messagesBefore  = 5
	messagesMissed  = 10
)

// gatewayDBConns is each gateway's handshake pool: the cmd/gateway default.
const gatewayDBConns = 8

// labEnv is what every real run shares.
type labEnv struct {
	bin        string // gateway binary
	dbURL      string
	dir        string // output directory for logs
	maxClients int
	record     *os.File // real.ndjson
}

// RealRun is one real storm against real gateway processes. Times are
// milliseconds; the crash phase's origin is the SIGKILL of gw-a and the
// drain phase's the SIGTERM of gw-b.
type RealRun struct {
	Run         int    `json:"run"`          // 1-based
	Seed        uint64 `json:"seed"`         // the clients' draws
	LoadAverage string `json:"load_average"` // /proc/loadavg before the run: the machine's load shows in every latency

	BaselineRoutes int64         `json:"baseline_routes"` // clients' routes on gw-a before the kill
	Crash          storm.Summary `json:"crash"`           // client-side, attempts at the midpoint of sent and answered
	// Decisions is the crash phase's series counted where the simulator
	// counts them, at gw-b's admission decisions; the comparison with the
	// simulator uses it. Arrival is the client-side estimate of the same.
	Decisions Series  `json:"decisions"`
	Arrival   Arrival `json:"arrival"`
	// ReclaimMs is from the SIGKILL to gw-b's sweep_reclaimed log line for
	// gw-a.
	ReclaimMs       float64 `json:"reclaim_ms"`
	ReclaimedRoutes int64   `json:"reclaimed_routes"` // routes that sweep deleted (the witness's at least)
	// NoticeMs summarises each client's time from the SIGKILL until it saw
	// its connection end; StartDelaysMs is, per client, the time from the
	// SIGKILL until its first attempt was sent, less the policy's own
	// initial wait: the real detection delay, the client's own scheduling
	// included.
	NoticeMs      Quantiles `json:"notice_ms"`
	StartDelaysMs []float64 `json:"start_delays_ms"`
	// FirstArrivalMs is, per client whose first attempt's decision is
	// known, the time from the SIGKILL to gw-b deciding that attempt, less
	// the client's initial wait: its start delay plus the attempt's out
	// leg, measured as one (see firstArrivals).
	FirstArrivalMs []float64 `json:"first_arrival_ms"`
	// SharedEveryMs is how long the delay to gw-b was common to every
	// request in this run (fitSharedEvery).
	SharedEveryMs       float64 `json:"shared_every_ms"`
	Gateway429          int64   `json:"gateway_429"`           // gw-b's rejected{reason="429"} counter
	GatewayAdmitted     int64   `json:"gateway_admitted"`      // gw-b's admitted counter
	GatewayPeakAccepted int64   `json:"gateway_peak_accepted"` // gw-b's most admissions in any window-long interval, from its own decision times
	RoutesOnSurvivor    int64   `json:"routes_on_survivor"`    // clients' routes on gw-b after the storm
	Head                int64   `json:"head"`                  // the conversation's head

	Drain *DrainRun `json:"drain,omitempty"`

	// Handshakes are the crash phase's answered attempts; Claims gw-b's
	// admitted handshakes and RejectsMs its 429 decisions (ms from the
	// crash phase's start): the fit's input.
	Handshakes []Handshake `json:"handshakes"`
	Claims     []Claim     `json:"claims"`
	RejectsMs  []float64   `json:"rejects_ms"`
	// Stall is how long gw-b decided nothing after the kill (nil: no
	// decision or no first attempt seen).
	Stall *Stall `json:"stall,omitempty"`
	// Backlog is gw-b's decisions and busy time (nil: none seen).
	Backlog *Backlog `json:"decision_backlog,omitempty"`
}

// Handshake is one answered attempt of a real storm.
type Handshake struct {
	Device        string  `json:"device"`
	DeviceAttempt int64   `json:"device_attempt"` // the counter sent as ?attempt=
	Attempt       int     `json:"attempt"`        // 1-based within the client's round
	Status        int     `json:"status"`         // 101, 429, 503, ...
	LatencyMs     float64 `json:"latency_ms"`     // sent to answered, client side
	// GatewayMs, for an admitted attempt the gateway logged, is its time
	// there from the admission decision to the "admitted" line: the wait
	// for and the work of the claim.
	GatewayMs *float64 `json:"gateway_ms,omitempty"`
	// OutMs, when gw-b's decision on the attempt is known, is the time
	// from its send to that decision (see attachOutLegs); the rest of the
	// latency, LatencyMs - OutMs, is the way back.
	OutMs *float64 `json:"out_ms,omitempty"`

	sent time.Time // when the client sent it
	// startMs, for a client's first attempt after the kill, is its start
	// delay (sent - SIGKILL - the client's initial wait); hasStart says so.
	startMs  float64
	hasStart bool
	// lagMs, for a retry, is how much later than the client planned it was
	// sent: sent - (the previous attempt's answer + the wait then chosen),
	// the client's own delay in waking up (its timer and its turn for a
	// CPU), which the model's out leg, starting when the wait ends, holds.
	lagMs float64
}

// Quantiles are nearest-rank quantiles in milliseconds.
type Quantiles = storm.Quantiles

// DrainRun is the drain of gw-b to gw-c.
type DrainRun struct {
	Summary        storm.Summary `json:"summary"`
	ExitCode       int           `json:"exit_code"`       // gw-b's
	GoawaySent     int64         `json:"goaway_sent"`     // from gw-b's drain_done line
	LeftoverRoutes int64         `json:"leftover_routes"` // released at the end of the drain (drain_done)
	RoutesLeft     int64         `json:"routes_left"`     // gw-b's routes in the database after it exited
	RoutesOnDest   int64         `json:"routes_on_dest"`  // clients' routes on gw-c
}

// runLab runs one real storm of plan p with the clients' draws from seed:
// gw-a and gw-b start, every client connects to gw-a, gw-a is SIGKILLed and
// the clients reconnect to gw-b; once gw-b has reclaimed gw-a's routes, gw-c
// starts and gw-b is drained (SIGTERM). Every process is killed and the
// schema dropped before it returns.
func runLab(ctx context.Context, env labEnv, p plan, run int, seed uint64, progress func(string, ...any)) (res *RealRun, err error) {
	res = &RealRun{Run: run, Seed: seed, LoadAverage: loadAverage()}
	schema := newSchemaName()
	logDir := filepath.Join(env.dir, "logs", "run-"+strconv.Itoa(run))
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, err
	}
	db, err := store.Open(ctx, env.dbURL, store.Options{Schema: schema, AppName: "stormsim-calibrate", MaxConns: 4})
	if err != nil {
		return nil, fmt.Errorf("database: %w", oneLineErr(err))
	}
	defer func() {
		db.Close()
		if derr := dropSchema(env.dbURL, schema); derr != nil && err == nil {
			err = fmt.Errorf("drop schema %s: %w", schema, derr)
		}
	}()
	if err := db.Migrate(ctx); err != nil {
		return nil, fmt.Errorf("migrate: %w", oneLineErr(err))
	}
	witness := store.DeviceID(p.clients)
	if _, err := db.ProvisionDevices(ctx, p.clients+1); err != nil {
		return nil, fmt.Errorf("provision devices: %w", err)
	}
	joins := make([]string, 0, p.clients+1+messagesBefore)
	for i := 0; i <= p.clients; i++ {
		joins = append(joins, "join "+store.DeviceID(i))
	}
	for i := 1; i <= messagesBefore; i++ {
		joins = append(joins, "message "+strconv.Itoa(i))
	}
	if _, err := db.AppendEvents(ctx, labConversation, joins); err != nil {
		return nil, fmt.Errorf("write events: %w", err)
	}
	members := make([]string, p.clients+1)
	for i := range members {
		members[i] = store.DeviceID(i)
	}
	if _, err := db.Join(ctx, labConversation, members); err != nil {
		return nil, fmt.Errorf("join conversation: %w", err)
	}

	spec := func(id string, adm models.AdmissionSpec) gatewaySpec {
		return gatewaySpec{ID: id, Lease: p.lease, Ping: p.ping, Idle: p.idle, Admission: adm,
			DrainGrace: p.drainGrace, DBConns: gatewayDBConns, DBURL: env.dbURL, Schema: schema,
			LogPath: filepath.Join(logDir, id+".log")}
	}
	var procs []*gatewayProc
	defer func() {
		for _, g := range procs {
			g.kill()
		}
	}()
	start := func(id string, adm models.AdmissionSpec) (*gatewayProc, error) {
		g, err := startGateway(ctx, env.bin, spec(id, adm))
		if err == nil {
			procs = append(procs, g)
		}
		return g, err
	}
	gwA, err := start(gatewayFailed, unlimitedAdmission(p.admission))
	if err != nil {
		return nil, err
	}
	// The lease model draws gw-a's renew phase and gw-b's sweep phase
	// uniformly: random pauses before gw-b starts and before the kill make
	// the real phases samples of that, instead of the harness's own rhythm.
	phases := rand.New(rand.NewPCG(seed, uint64(run)))
	if err := client.SystemClock.Sleep(ctx, time.Duration(phases.Int64N(int64(p.ping)))); err != nil {
		return nil, err
	}
	gwB, err := start(gatewaySurvivor, p.admission)
	if err != nil {
		return nil, err
	}

	var lifecycle []lifecycleLine
	mark := func(gw, action string) {
		lifecycle = append(lifecycle, lifecycleLine{At: time.Now(), Gateway: gw, Action: action})
	}
	drop, err := policies.New(p.policy)
	if err != nil {
		return nil, err
	}
	drainBackoff, err := policies.New(p.drain)
	if err != nil {
		return nil, err
	}
	writeMarker(env.record, runMarker{Event: "run", Client: -1, Run: run, Seed: seed, Schema: schema})
	st, err := storm.Start(ctx, storm.Config{
		Clients:  p.clients,
		Gateways: []string{gwA.url()},
		Client: client.Config{Seed: seed, Conversations: []string{labConversation},
			Drop:  client.Reconnect{Backoff: drop, InitialJitter: p.jitter},
			Drain: client.Reconnect{Backoff: drainBackoff, InitialJitter: p.jitter}},
		StartSpread: time.Duration(p.clients) * time.Millisecond,
		Window:      p.window,
		Timeout:     time.Hour, // ctx carries the caller's --timeout
		MaxClients:  env.maxClients,
		Record:      env.record,
	})
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := st.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("record: %w", cerr)
		}
		writeLifecycle(env.record, run, st.T0(), procs, lifecycle)
	}()
	progress("run %d: %d clients connected to %s", run, p.clients, gatewayFailed)

	wctx, cancelWitness := context.WithCancel(ctx)
	defer cancelWitness()
	if err := connectWitness(wctx, gwA.url(), witness); err != nil {
		return nil, fmt.Errorf("witness device: %w", err)
	}
	if res.BaselineRoutes, err = clientRoutes(ctx, db, gatewayFailed, witness); err != nil {
		return nil, err
	}
	// The gateway does not push events, so messages written just before
	// the kill are missed exactly like messages written during the outage,
	// and no client can sync before they are committed.
	missed := make([]string, messagesMissed)
	for i := range missed {
		missed[i] = "message " + strconv.Itoa(messagesBefore+i+1)
	}
	if res.Head, err = db.AppendEvents(ctx, labConversation, missed); err != nil {
		return nil, fmt.Errorf("write events: %w", err)
	}
	if err := st.SetGateways([]string{gwB.url()}); err != nil {
		return nil, err
	}
	if err := client.SystemClock.Sleep(ctx, time.Duration(phases.Int64N(int64(p.ping)))); err != nil {
		return nil, err
	}
	var killedAt time.Time
	res.Crash, err = st.Observe(ctx, "crash", func(context.Context) error {
		var err error
		killedAt, err = gwA.signal(syscall.SIGKILL)
		mark(gatewayFailed, "sigkill")
		return err
	})
	if err != nil {
		return nil, err
	}
	progress("run %d: crash storm settled: %d attempts, last client back after %.0f ms", run, res.Crash.Attempts, res.Crash.ConvergenceMs)
	cancelWitness()
	crashEvents := st.Events()
	ct := crashTimes(crashEvents, killedAt)
	res.NoticeMs, res.StartDelaysMs = nearestRank(ct.notice), ct.start
	res.Handshakes = ct.handshakes
	crashFrom := st.T0().Add(time.Duration(res.Crash.StartMs * float64(time.Millisecond)))
	res.Arrival = arrivalSeries(crashEvents, crashFrom, time.Now(), p.window)

	sweep, err := waitSweep(ctx, gwB, gatewayFailed, p.reclaimHi+2*time.Second)
	if err != nil {
		return nil, err
	}
	res.ReclaimMs = ms(sweep.Time.Sub(killedAt))
	res.ReclaimedRoutes = int64(sweep.num("count"))
	m, err := gwB.metrics(ctx)
	if err != nil {
		return nil, err
	}
	res.Gateway429 = int64(m[`gateway_handshakes_rejected_total{reason="429"}`])
	res.GatewayAdmitted = int64(m["gateway_handshakes_admitted_total"])
	res.GatewayPeakAccepted = peakInWindow(admitTimes(gwB), p.window)
	var dec gatewayDecisions
	if res.Decisions, dec, err = decisionSeries(gwB.log.all(), crashFrom, p.window, sentTimes(crashEvents)); err != nil {
		return nil, err
	}
	res.Claims = dec.claims
	for _, r := range dec.rejects {
		res.RejectsMs = append(res.RejectsMs, ms(r.Sub(crashFrom)))
	}
	attachGatewayTimes(res.Handshakes, res.Claims)
	attachOutLegs(res.Handshakes, dec, crashFrom)
	res.FirstArrivalMs = firstArrivals(res.Handshakes)
	res.SharedEveryMs = ms(fitSharedEvery(res.Handshakes))
	if st, ok := measureStall(res.Handshakes, res.Claims, res.RejectsMs, crashFrom); ok {
		res.Stall = &st
	}
	if b, ok := measureBacklog(res.Handshakes, res.Claims, res.RejectsMs, crashFrom); ok {
		res.Backlog = &b
	}
	if res.RoutesOnSurvivor, err = clientRoutes(ctx, db, gatewaySurvivor, witness); err != nil {
		return nil, err
	}
	if !p.withDrain {
		return res, nil
	}

	gwC, err := start(gatewayDrainDest, p.drainAdmission)
	if err != nil {
		return nil, err
	}
	if err := st.SetGateways([]string{gwC.url()}); err != nil {
		return nil, err
	}
	d := &DrainRun{}
	d.Summary, err = st.Observe(ctx, "drain", func(context.Context) error {
		_, err := gwB.signal(syscall.SIGTERM)
		mark(gatewaySurvivor, "sigterm")
		return err
	})
	if err != nil {
		return nil, err
	}
	if d.ExitCode, err = gwB.wait(ctx, gatewayExitWait+p.drainGrace); err != nil {
		return nil, err
	}
	mark(gatewaySurvivor, "exited "+strconv.Itoa(d.ExitCode))
	if done, _ := gwB.log.find("drain_done"); len(done) > 0 {
		d.GoawaySent, d.LeftoverRoutes = int64(done[0].num("goaway")), int64(done[0].num("leftover_routes"))
	} else {
		return nil, fmt.Errorf("gateway %s exited %d without a drain_done line: %s", gatewaySurvivor, d.ExitCode, gwB.log.last())
	}
	if d.RoutesLeft, err = db.RouteCount(ctx, gatewaySurvivor); err != nil {
		return nil, err
	}
	if d.RoutesOnDest, err = clientRoutes(ctx, db, gatewayDrainDest, witness); err != nil {
		return nil, err
	}
	res.Drain = d
	progress("run %d: drain settled: last client back after %.0f ms", run, d.Summary.ConvergenceMs)
	return res, nil
}

// unlimitedAdmission is gw-a's rule: it only hosts the clients before the
// crash, so it admits everyone (with the scenario's Retry-After, unused).
func unlimitedAdmission(a models.AdmissionSpec) models.AdmissionSpec {
	return models.AdmissionSpec{Kind: "unlimited", RetryAfter: a.RetryAfter}
}

// connectWitness connects one extra device to gw-a that never reconnects:
// its route outlives the storm, so gw-b's sweep always has something to
// delete and logs the reclaim time even when every client came back first.
func connectWitness(ctx context.Context, gateway, device string) error {
	u := gateway + protocol.Path + "?" + protocol.QueryAttempt + "=1"
	h := http.Header{}
	h.Set(protocol.HeaderAuthorization, "Bearer "+device+":"+store.DeviceToken(device))
	dctx, cancel := context.WithTimeout(ctx, client.DefaultHandshakeTimeout)
	defer cancel()
	conn, resp, err := websocket.Dial(dctx, u, &websocket.DialOptions{HTTPHeader: h, HTTPClient: client.DefaultHTTPClient})
	if err != nil {
		if resp != nil {
			return fmt.Errorf("%s: status %d: %w", device, resp.StatusCode, err)
		}
		return err
	}
	if _, _, err := conn.Read(dctx); err != nil { // the hello
		conn.CloseNow()
		return err
	}
	rctx := conn.CloseRead(ctx) // answers pings until the gateway dies
	go func() { <-rctx.Done(); conn.CloseNow() }()
	return nil
}

// clientRoutes counts gateway's routes, not counting the witness.
func clientRoutes(ctx context.Context, db *store.PG, gateway, witness string) (int64, error) {
	var n int64
	err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM routes WHERE gateway_id = $1 AND device_id <> $2`, gateway, witness).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count routes of %s: %w", gateway, err)
	}
	return n, nil
}

// waitSweep waits for gw's sweep_reclaimed line about dead.
func waitSweep(ctx context.Context, gw *gatewayProc, dead string, within time.Duration) (logLine, error) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	for {
		lines, changed := gw.log.find("sweep_reclaimed")
		for _, l := range lines {
			if l.Fields["dead_gateway"] == dead {
				return l, nil
			}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return logLine{}, fmt.Errorf("gateway %s did not reclaim %s's routes within %v", gw.spec.ID, dead, within)
			}
			return logLine{}, ctx.Err()
		}
	}
}

// admitTimes are gw's admission decision times (its "admitted" lines'
// token_ms, on its own monotonic clock), sorted.
func admitTimes(gw *gatewayProc) []time.Duration {
	lines, _ := gw.log.find("admitted")
	out := make([]time.Duration, 0, len(lines))
	for _, l := range lines {
		out = append(out, time.Duration(l.num("token_ms")*float64(time.Millisecond)))
	}
	slices.Sort(out)
	return out
}

// peakInWindow is the most times (sorted) inside any half-open interval
// [t, t+window): the token bucket's bound holds for every such interval,
// not only for windows aligned to the storm's origin.
func peakInWindow(times []time.Duration, window time.Duration) int64 {
	best, lo := 0, 0
	for hi := range times {
		for times[hi]-times[lo] >= window {
			lo++
		}
		best = max(best, hi-lo+1)
	}
	return int64(best)
}

// phaseTimes are the crash phase's delays and latencies, in ms.
type phaseTimes struct {
	notice     []float64 // per client: connection end - SIGKILL
	start      []float64 // per client: first attempt sent - SIGKILL - its initial wait
	handshakes []Handshake
}

// crashTimes extracts the phaseTimes of the drop rounds begun after
// killedAt.
func crashTimes(events []client.Event, killedAt time.Time) phaseTimes {
	var t phaseTimes
	noticed := map[int]bool{}
	wait := map[int]time.Duration{} // initial wait of the client's drop round
	started := map[int]bool{}
	planned := map[int]time.Time{} // when the client's next attempt was due
	for _, ev := range events {
		if ev.Time.Before(killedAt) {
			continue
		}
		// A closed event belongs to the round whose connection ended (the
		// start round); everything after it to the drop round.
		if ev.Kind != client.EventClosed && ev.RoundKind != client.RoundDrop {
			continue
		}
		switch ev.Kind {
		case client.EventClosed:
			if !noticed[ev.Client] {
				noticed[ev.Client] = true
				t.notice = append(t.notice, ms(ev.Time.Sub(killedAt)))
			}
		case client.EventRound:
			if _, ok := wait[ev.Client]; !ok {
				wait[ev.Client] = ev.Wait
			}
		case client.EventAttempt:
			h := Handshake{Device: ev.Device, DeviceAttempt: ev.DeviceAttempt, Attempt: ev.Attempt,
				Status: ev.Status, LatencyMs: ms(ev.Answered.Sub(ev.Sent)), sent: ev.Sent}
			if due, ok := planned[ev.Client]; ok && ev.Attempt > 1 {
				h.lagMs = max(ms(ev.Sent.Sub(due)), 0)
			}
			planned[ev.Client] = ev.Answered.Add(ev.Wait)
			if w, ok := wait[ev.Client]; ok && !started[ev.Client] {
				started[ev.Client] = true
				h.startMs, h.hasStart = ms(ev.Sent.Sub(killedAt)-w), true
				t.start = append(t.start, h.startMs)
			}
			if ev.Status != 0 {
				t.handshakes = append(t.handshakes, h)
			}
		}
	}
	return t
}

// firstArrivals lists, for each first attempt with a known start delay and
// out leg (attachOutLegs has run), its start delay plus its out leg. On a
// loaded machine a client's detection and its first request's way to the
// decision are slow together, for every client at once; measured as one
// delay, their sum keeps that, where two independent draws would spread
// the first wave out.
func firstArrivals(hs []Handshake) []float64 {
	var out []float64
	for _, h := range hs {
		if h.hasStart && h.OutMs != nil {
			out = append(out, h.startMs+*h.OutMs)
		}
	}
	return out
}

// sentTimes maps every attempt in events to when it was sent.
func sentTimes(events []client.Event) map[attemptKey]time.Time {
	out := map[attemptKey]time.Time{}
	for _, ev := range events {
		if ev.Kind == client.EventAttempt {
			out[attemptKey{ev.Device, ev.DeviceAttempt}] = ev.Sent
		}
	}
	return out
}

// attachGatewayTimes sets each admitted handshake's GatewayMs from the
// gateway's claim of the same device and attempt.
func attachGatewayTimes(hs []Handshake, claims []Claim) {
	at := make(map[attemptKey]float64, len(claims))
	for _, c := range claims {
		at[attemptKey{c.Device, c.Attempt}] = c.DoneMs - c.DecidedMs
	}
	for i := range hs {
		if v, ok := at[attemptKey{hs[i].Device, hs[i].DeviceAttempt}]; ok && hs[i].Status == http.StatusSwitchingProtocols {
			hs[i].GatewayMs = &v
		}
	}
}

// attachOutLegs sets each handshake's OutMs from gw-b's decision on it
// (origin is the decisions' origin). An admitted one's decision is its
// claim's, on the clock decisionsOf aligned; a 429's is its rejected line,
// on the same wall clock as the send. The line names the device but not the
// attempt, so a device's 429 answers are matched to its 429 lines in time
// order (a client has one attempt in flight), and only when there are as
// many of each.
func attachOutLegs(hs []Handshake, d gatewayDecisions, origin time.Time) {
	decided := make(map[attemptKey]float64, len(d.claims))
	for _, c := range d.claims {
		decided[attemptKey{c.Device, c.Attempt}] = c.DecidedMs
	}
	lines := map[string][]time.Time{}
	for i, t := range d.rejects {
		lines[d.rejectDevices[i]] = append(lines[d.rejectDevices[i]], t)
	}
	answers := map[string][]int{} // indices into hs
	for i := range hs {
		h := &hs[i]
		switch h.Status {
		case http.StatusSwitchingProtocols:
			if at, ok := decided[attemptKey{h.Device, h.DeviceAttempt}]; ok {
				v := at - ms(h.sent.Sub(origin))
				h.OutMs = &v
			}
		case protocol.StatusTooManyRequests:
			answers[h.Device] = append(answers[h.Device], i)
		}
	}
	for device, idx := range answers {
		at := slices.SortedFunc(slices.Values(lines[device]), time.Time.Compare)
		if len(at) != len(idx) {
			continue
		}
		slices.SortFunc(idx, func(a, b int) int { return hs[a].sent.Compare(hs[b].sent) })
		for k, i := range idx {
			v := ms(at[k].Sub(hs[i].sent))
			hs[i].OutMs = &v
		}
	}
}

// ms converts d to float milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
