// Package lab runs a scenario's storm for real: PostgreSQL, the gateway
// processes of the seed's lab (gw-a, gw-b, and gw-c for the drain) and the
// scenario's clients (the project's own client, making the simulator's
// exact draws), then reads what the clients and the gateways' logs saw into
// a measured.Run. It also judges each run by the seed lab's checks and by
// the machine's load while it ran.
package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/coder/websocket"

	"stormsim/calibrate/measured"
	"stormsim/gateway/client"
	"stormsim/gateway/logline"
	"stormsim/gateway/protocol"
	"stormsim/gateway/store"
	"stormsim/gateway/storm"
	"stormsim/internal/safetext"
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

// LogsDir is the directory, inside Lab.Dir, of the gateways' raw logs.
const LogsDir = "logs"

// Lab is what every real run shares.
type Lab struct {
	GatewayBin  string // the gateway binary
	DatabaseURL string // loopback PostgreSQL (see OpenDatabase)
	Dir         string // the gateways' raw logs go to Dir/logs/run-K
	MaxClients  int    // refuse larger storms
	// WaitQuiet is how long a run may wait, before it begins, for other
	// work to fall below DisturbedCores; 0: it begins at once.
	WaitQuiet time.Duration
	// Record, if set, receives real.ndjson: every client event and every
	// gateway lifecycle line.
	Record io.Writer
	// Progress, if set, receives one line per step.
	Progress func(format string, args ...any)
}

// labRun is one real run in progress: what its phases share.
type labRun struct {
	lab    *Lab
	plan   Plan
	res    *measured.Run
	db     *store.PG
	schema string
	logDir string

	procs     []*gatewayProc
	lifecycle []lifecycleLine
	storm     *storm.Storm
	witness   string
	phases    *rand.Rand // pauses that make the lease phases samples
	load      loadMeter
	gwA, gwB  *gatewayProc
	crashFrom time.Time // the crash storm's origin
}

// Run runs one real storm of plan p with the clients' draws from seed: gw-a
// and gw-b start, every client connects to gw-a, gw-a is SIGKILLed and the
// clients reconnect to gw-b; once gw-b has reclaimed gw-a's routes, gw-c
// starts and gw-b is drained (SIGTERM). Every process is killed and the
// schema dropped before it returns.
func (l *Lab) Run(ctx context.Context, p Plan, run int, seed uint64) (res *measured.Run, err error) {
	r := &labRun{lab: l, plan: p, res: &measured.Run{Run: run, Seed: seed}, schema: newSchemaName(),
		logDir: filepath.Join(l.Dir, LogsDir, "run-"+strconv.Itoa(run)), witness: store.DeviceID(p.Clients),
		phases: rand.New(rand.NewPCG(seed, uint64(run)))}
	defer func() {
		for _, g := range r.procs {
			g.kill()
		}
		if derr := r.close(); derr != nil && err == nil {
			err = derr
		}
	}()
	phases := []func(context.Context) error{r.measureQuiet, r.prepare, r.connect, r.crash, r.measureCrash, r.drain}
	if p.Deploy != nil {
		phases = []func(context.Context) error{r.measureQuiet, r.prepare, r.runDeploy}
	}
	for _, phase := range phases {
		if err := phase(ctx); err != nil {
			return nil, err
		}
	}
	return r.res, nil
}

func (r *labRun) progress(format string, args ...any) {
	if r.lab.Progress != nil {
		r.lab.Progress("run %d: "+format, append([]any{r.res.Run}, args...)...)
	}
}

// measureQuiet watches the machine before anything of the run starts, and
// waits for it to be quiet if the lab says so.
func (r *labRun) measureQuiet(ctx context.Context) error { return r.load.before(ctx, r.lab.WaitQuiet) }

// prepare creates the run's schema, the devices (the clients and the
// witness), the conversation's first events and its members.
func (r *labRun) prepare(ctx context.Context) error {
	if err := os.MkdirAll(r.logDir, 0o755); err != nil {
		return err
	}
	db, err := store.Open(ctx, r.lab.DatabaseURL, store.Options{Schema: r.schema, AppName: "stormsim-calibrate", MaxConns: 4})
	if err != nil {
		return fmt.Errorf("database: %s", safetext.OneLine(err.Error()))
	}
	r.db = db
	if err := db.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate: %s", safetext.OneLine(err.Error()))
	}
	if _, err := db.ProvisionDevices(ctx, r.plan.Clients+1); err != nil {
		return fmt.Errorf("provision devices: %w", err)
	}
	joins := make([]string, 0, r.plan.Clients+1+messagesBefore)
	for i := 0; i <= r.plan.Clients; i++ {
		joins = append(joins, "join "+store.DeviceID(i))
	}
	for i := 1; i <= messagesBefore; i++ {
		joins = append(joins, "message "+strconv.Itoa(i))
	}
	if _, err := db.AppendEvents(ctx, labConversation, joins); err != nil {
		return fmt.Errorf("write events: %w", err)
	}
	members := make([]string, r.plan.Clients+1)
	for i := range members {
		members[i] = store.DeviceID(i)
	}
	if _, err := db.Join(ctx, labConversation, members); err != nil {
		return fmt.Errorf("join conversation: %w", err)
	}
	return nil
}

// close drops the schema and closes the store; the storm's record is
// flushed and the lifecycle lines written first.
func (r *labRun) close() error {
	var err error
	if r.storm != nil {
		if cerr := r.storm.Close(); cerr != nil {
			err = fmt.Errorf("record: %w", cerr)
		}
		writeLifecycle(r.lab.Record, r.res.Run, r.storm.T0(), r.procs, r.lifecycle)
	}
	if r.db != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if derr := r.db.DropSchema(ctx); derr != nil && err == nil {
			err = fmt.Errorf("drop schema %s: %w", r.schema, derr)
		}
		r.db.Close()
	}
	return err
}

// startGateway starts gateway id with the run's lease, ping and idle and
// the given admission.
func (r *labRun) startGateway(ctx context.Context, id string, adm models.AdmissionSpec) (*gatewayProc, error) {
	p := r.plan
	g, err := startGateway(ctx, r.lab.GatewayBin, gatewaySpec{ID: id, Lease: p.Lease, Ping: p.Ping, Idle: p.Idle, Admission: adm,
		DrainGrace: p.DrainGrace, Abandoned: p.Abandoned, MaxQueue: p.MaxQueue, DBConns: gatewayDBConns, DBURL: r.lab.DatabaseURL, Schema: r.schema,
		DrainPace: p.DrainPace, Hint: p.ReconnectHint, LogPath: filepath.Join(r.logDir, id+".log")})
	if err == nil {
		r.procs = append(r.procs, g)
	}
	return g, err
}

func (r *labRun) mark(gateway, action string) {
	r.lifecycle = append(r.lifecycle, lifecycleLine{At: time.Now(), Gateway: gateway, Action: action})
}

// pause sleeps a uniform time in [0, ping): the lease model draws gw-a's
// renew phase and gw-b's sweep phase uniformly, so random pauses before
// gw-b starts and before the kill make the real phases samples of that,
// instead of the harness's own rhythm.
func (r *labRun) pause(ctx context.Context) error {
	return client.SystemClock.Sleep(ctx, time.Duration(r.phases.Int64N(int64(r.plan.Ping))))
}

// connect starts gw-a and gw-b, connects every client and the witness to
// gw-a, writes the messages the clients will miss and points the clients
// at gw-b.
func (r *labRun) connect(ctx context.Context) error {
	p := r.plan
	var err error
	if r.gwA, err = r.startGateway(ctx, GatewayFailed, unlimited(p.Admission)); err != nil {
		return err
	}
	if err := r.pause(ctx); err != nil {
		return err
	}
	if r.gwB, err = r.startGateway(ctx, GatewaySurvivor, p.Admission); err != nil {
		return err
	}
	reconnect, err := p.reconnects(r.res.Seed)
	if err != nil {
		return err
	}
	writeMarker(r.lab.Record, runMarker{Event: "run", Client: -1, Run: r.res.Run, Seed: r.res.Seed, Schema: r.schema})
	r.storm, err = storm.Start(ctx, storm.Config{
		Clients:     p.Clients,
		Gateways:    []string{r.gwA.url()},
		Client:      reconnect,
		StartSpread: time.Duration(p.Clients) * time.Millisecond,
		Window:      p.Window,
		Timeout:     time.Hour, // ctx carries the caller's timeout
		MaxClients:  r.lab.MaxClients,
		Record:      r.lab.Record,
	})
	if err != nil {
		return err
	}
	r.progress("%d clients connected to %s", p.Clients, GatewayFailed)
	if err := connectWitness(ctx, r.gwA.url(), r.witness); err != nil {
		return fmt.Errorf("witness device: %w", err)
	}
	if r.res.BaselineRoutes, err = r.clientRoutes(ctx, GatewayFailed); err != nil {
		return err
	}
	// The gateway does not push events, so messages written just before
	// the kill are missed exactly like messages written during the outage,
	// and no client can sync before they are committed.
	missed := make([]string, messagesMissed)
	for i := range missed {
		missed[i] = "message " + strconv.Itoa(messagesBefore+i+1)
	}
	if r.res.Head, err = r.db.AppendEvents(ctx, labConversation, missed); err != nil {
		return fmt.Errorf("write events: %w", err)
	}
	if err := r.storm.SetGateways([]string{r.gwB.url()}); err != nil {
		return err
	}
	return r.pause(ctx)
}

// reconnects is every client's template: the draws' seed, the lab's
// conversation and the backoff of each kind of round. The clients were
// connected long before the storm: their first connect does not give up
// at the storm's timeout (with a timeout shorter than the first wave's
// claims, the start would be a storm that never ends of its own).
func (p Plan) reconnects(seed uint64) (client.Config, error) {
	drop, err := policies.New(p.Policy)
	if err != nil {
		return client.Config{}, err
	}
	drain, err := policies.New(p.DrainPolicy)
	if err != nil {
		return client.Config{}, err
	}
	patient := p.Policy
	patient.Timeout = 0
	start, err := policies.New(patient)
	if err != nil {
		return client.Config{}, err
	}
	return client.Config{Seed: seed, Conversations: []string{labConversation}, Start: client.Reconnect{Backoff: start},
		Drop:  client.Reconnect{Backoff: drop, InitialJitter: p.Jitter},
		Drain: client.Reconnect{Backoff: drain, InitialJitter: p.Jitter}}, nil
}

// crash SIGKILLs gw-a and watches the clients storm gw-b until everyone is
// back, the machine's load measured meanwhile.
func (r *labRun) crash(ctx context.Context) error {
	own := []cpuClock{selfClock, r.gwA.cpuTicks, r.gwB.cpuTicks}
	r.load.stormStarts(own)
	var err error
	r.res.Crash, err = r.storm.ObserveUntil(ctx, "crash", func(context.Context) error {
		err := r.gwA.signal(syscall.SIGKILL)
		r.mark(GatewayFailed, "sigkill")
		return err
	}, r.plan.Horizon)
	r.load.stormSettled(own)
	r.res.Load = r.load.load
	if err != nil {
		return err
	}
	r.crashFrom = r.storm.T0().Add(durationOfMs(r.res.Crash.StartMs))
	if !r.res.Crash.AllReconnected {
		// Cut by the horizon: the clients stop here, as the simulated ones
		// do, and the storm's measurements follow from what came before.
		if err := r.storm.Close(); err != nil {
			return err
		}
		r.mark("clients", "stopped at the horizon")
		r.progress("crash storm cut at the horizon %v: %d attempts, %d of %d clients back", r.plan.Horizon,
			r.res.Crash.Attempts, r.res.Crash.Reconnected, r.plan.Clients)
		return nil
	}
	r.progress("crash storm settled: %d attempts, last client back after %.0f ms", r.res.Crash.Attempts, r.res.Crash.ConvergenceMs)
	return nil
}

// measureCrash reads the crash storm from the clients' events, gw-b's log
// and metrics, and the routes table.
func (r *labRun) measureCrash(ctx context.Context) error {
	res, p := r.res, r.plan
	events := r.storm.Events()
	if p.Horizon > 0 {
		events = storm.Before(events, r.crashFrom.Add(p.Horizon))
	}
	var notice, firstLate []float64
	res.Handshakes, notice, firstLate = crashHandshakes(events, r.crashFrom)
	res.FirstLatePointsMs = measured.PointsOf(firstLate)
	res.NoticeMs = measured.NearestRank(notice)
	if res.NoticePointsMs = measured.PointsOf(notice); len(res.NoticePointsMs) > 0 {
		res.FirstNoticeMs = res.NoticePointsMs[2] // the 2nd percentile
	}

	sweep, err := waitSweep(ctx, r.gwB, GatewayFailed, p.ReclaimHi+2*time.Second)
	if err != nil {
		return err
	}
	res.ReclaimMs = ms(sweep.Time.Sub(r.crashFrom))
	count, err := sweep.num(logline.KeyCount)
	if err != nil {
		return err
	}
	res.ReclaimedRoutes = int64(count)
	m, err := r.gwB.metrics(ctx)
	if err != nil {
		return err
	}
	res.Gateway429 = int64(m[`gateway_handshakes_rejected_total{reason="429"}`])
	res.GatewayAdmitted = int64(m["gateway_handshakes_admitted_total"])

	lines := r.gwB.log.all()
	admits, err := admitTimes(lines)
	if err != nil {
		return err
	}
	res.GatewayPeakAccepted = peakInWindow(admits, p.Window)
	dec, err := decisionsOf(lines, r.crashFrom, sentTimes(events))
	if err != nil {
		return err
	}
	markLate(dec.claims, events)
	res.GonePointsMs = measured.PointsOf(goneWays(dec.dropped, events, r.crashFrom, p.Policy.Timeout))
	horizonMs := ms(p.Horizon)
	res.Decisions, res.Claims, res.RejectsMs, res.AbandonedMs = dec.series(p.Window, horizonMs), dec.claims, dec.rejectsMs, dec.abandonedMs
	attachDecisions(res.Handshakes, dec)
	if p.Horizon > 0 {
		res.Outcome = outcomeOf(res.Crash, dec.claims, dec.abandonedMs, horizonMs, ms(p.Window))
		r.progress("outcome at the horizon: %s (%d useful and %d wasted claims, %d timeouts)", res.Outcome.Outcome,
			res.Outcome.Useful, res.Outcome.Wasted, res.Outcome.TimedOut)
	}
	res.RoutesOnSurvivor, err = r.clientRoutes(ctx, GatewaySurvivor)
	return err
}

// drain starts gw-c, drains gw-b to it (SIGTERM) and waits for gw-b's
// exit; nothing without the scenario's drain.
func (r *labRun) drain(ctx context.Context) error {
	p := r.plan
	if !p.WithDrain {
		return nil
	}
	if !r.res.Crash.AllReconnected {
		return fmt.Errorf("the crash storm did not end by the horizon %v: there is no drain to run after it (remove then_drain)", p.Horizon)
	}
	gwC, err := r.startGateway(ctx, GatewayDrainDest, p.DrainAdmission)
	if err != nil {
		return err
	}
	if err := r.storm.SetGateways([]string{gwC.url()}); err != nil {
		return err
	}
	d := &measured.Drain{}
	if p.Paced {
		d.Pace, d.Hint = p.DrainPace.String(), p.ReconnectHint.String()
	}
	d.Summary, err = r.storm.Observe(ctx, "drain", func(context.Context) error {
		err := r.gwB.signal(syscall.SIGTERM)
		r.mark(GatewaySurvivor, "sigterm")
		return err
	})
	if err != nil {
		return err
	}
	origin := r.storm.T0().Add(durationOfMs(d.Summary.StartMs))
	told := map[int]bool{}
	var closed []client.Event // the drained sessions' ends
	for _, ev := range r.storm.Events() {
		if ev.Time.Before(origin) {
			continue
		}
		switch {
		case ev.Kind == client.EventGoaway:
			d.GoawaysMs = append(d.GoawaysMs, ms(ev.Time.Sub(origin)))
			told[ev.Client] = true
		case ev.Kind == client.EventClosed && told[ev.Client]:
			d.ClosesMs = append(d.ClosesMs, ms(ev.Time.Sub(origin)))
			closed = append(closed, ev)
			delete(told, ev.Client)
		}
	}
	dec, err := decisionsOf(gwC.log.all(), origin, sentTimes(r.storm.Events()))
	if err != nil {
		return fmt.Errorf("gateway %s: %w", GatewayDrainDest, err)
	}
	series := dec.series(p.Window, 0)
	d.Decisions = &series
	d.BusyWaysMs = busyWays(closed, r.storm.Events(), dec.claims, origin)
	if d.ExitCode, err = r.gwB.wait(ctx, gatewayExitWait+p.DrainGrace); err != nil {
		return err
	}
	r.mark(GatewaySurvivor, "exited "+strconv.Itoa(d.ExitCode))
	done, _ := r.gwB.log.find(logline.DrainDone)
	if len(done) == 0 {
		return fmt.Errorf("gateway %s exited %d without a %s line: %s", GatewaySurvivor, d.ExitCode, logline.DrainDone, r.gwB.log.last())
	}
	goaway, err := done[0].num(logline.KeyGoaway)
	if err != nil {
		return err
	}
	leftover, err := done[0].num(logline.KeyLeftoverRoutes)
	if err != nil {
		return err
	}
	d.GoawaySent, d.LeftoverRoutes = int64(goaway), int64(leftover)
	if failed, err := done[0].num(logline.KeyFailedGoaways); err == nil {
		d.GoawayFailed = int64(failed)
	}
	if d.GoawayLegsMs, d.WritesMs, err = goawayLegs(r.gwB.log.all(), closed, origin); err != nil {
		return fmt.Errorf("gateway %s: %w", GatewaySurvivor, err)
	}
	if d.RoutesLeft, err = r.db.RouteCount(ctx, GatewaySurvivor); err != nil {
		return err
	}
	if d.RoutesOnDest, err = r.clientRoutes(ctx, GatewayDrainDest); err != nil {
		return err
	}
	r.res.Drain = d
	r.progress("drain settled: last client back after %.0f ms", d.Summary.ConvergenceMs)
	return nil
}

// clientRoutes counts gateway's routes, not counting the witness.
func (r *labRun) clientRoutes(ctx context.Context, gateway string) (int64, error) {
	n, err := r.db.RouteCountExcept(ctx, gateway, r.witness)
	if err != nil {
		return 0, fmt.Errorf("count routes of %s: %w", gateway, err)
	}
	return n, nil
}

// connectWitness connects one extra device to gw-a that never reconnects:
// its route outlives the storm, so gw-b's sweep always has something to
// delete and logs the reclaim time even when every client came back first.
// The connection lasts until ctx ends or the gateway dies.
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

// waitSweep waits for gw's sweep_reclaimed line about dead.
func waitSweep(ctx context.Context, gw *gatewayProc, dead string, within time.Duration) (logLine, error) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	for {
		lines, changed := gw.log.find(logline.SweepReclaimed)
		for _, l := range lines {
			d, err := l.str(logline.KeyDeadGateway)
			if err != nil {
				return logLine{}, err
			}
			if d == dead {
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

// unlimited is gw-a's rule: it only hosts the clients before the crash, so
// it admits everyone (with the scenario's Retry-After, unused).
func unlimited(a models.AdmissionSpec) models.AdmissionSpec {
	return models.AdmissionSpec{Kind: models.AdmissionUnlimited, RetryAfter: a.RetryAfter}
}

// goawayLegs is, for each drained session's end in closed, the time from
// the drained gateway's goaway_sent line for its device (logged as the
// goaway was written, when its hint was computed) to that end, ms: the
// goaway's way to the client (network.goaway); an end whose device has no
// such line is left out. writes are the goaway_sent lines themselves, ms
// from origin (the SIGTERM), in the log's order: how fast the gateway got
// its goaways out, apart from their way to the clients.
func goawayLegs(lines []logLine, closed []client.Event, origin time.Time) (legs, writes []float64, err error) {
	written := map[string]time.Time{}
	for _, l := range lines {
		if l.Msg != logline.GoawaySent {
			continue
		}
		device, err := l.str(logline.KeyDevice)
		if err != nil {
			return nil, nil, err
		}
		written[device] = l.Time
		writes = append(writes, ms(l.Time.Sub(origin)))
	}
	for _, ev := range closed {
		if at, ok := written[ev.Device]; ok {
			legs = append(legs, ms(ev.Time.Sub(at)))
		}
	}
	return legs, writes, nil
}

// busyWays is, for each drained session's end in closed whose client's
// next attempt was sent before the last of those ends (the drain still
// ending sessions), the time from that attempt's send to the fresh
// gateway's decision on it, ms: network.drain_first_out. claims are the
// fresh gateway's decisions (decisionsOf, ms from origin); an attempt it
// did not admit has no decision on the clock of its sends, and is left
// out.
func busyWays(closed, events []client.Event, claims []measured.Claim, origin time.Time) []float64 {
	if len(closed) == 0 {
		return nil
	}
	decided := make(map[attemptKey]float64, len(claims))
	for _, c := range claims {
		decided[attemptKey{c.Device, c.Attempt}] = c.DecidedMs
	}
	ended := map[int]time.Time{} // a drained client's session end, until its next attempt
	last := closed[0].Time
	for _, ev := range closed {
		ended[ev.Client] = ev.Time
		if ev.Time.After(last) {
			last = ev.Time
		}
	}
	var ways []float64
	for _, ev := range events {
		end, ok := ended[ev.Client]
		if ev.Kind != client.EventAttempt || !ok || ev.Sent.Before(end) {
			continue
		}
		delete(ended, ev.Client)
		if !ev.Sent.Before(last) {
			continue
		}
		if at, ok := decided[attemptKey{ev.Device, ev.DeviceAttempt}]; ok {
			ways = append(ways, at-ms(ev.Sent.Sub(origin)))
		}
	}
	return ways
}
