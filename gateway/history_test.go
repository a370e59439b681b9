package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"stormsim/gateway/logline"
	"stormsim/gateway/protocol"
	"stormsim/gateway/store"
	"stormsim/internal/pgtest"
	"stormsim/models"
)

// The history test's size. The suite runs the short default; the long run is
//
//	flock /tmp/stormsim-measure.lock go test ./gateway -run '^TestHistory$' -history.devices 600 -history.duration 5m -timeout 30m -v
var (
	historyDevices  = flag.Int("history.devices", 200, "TestHistory: devices claiming")
	historyDuration = flag.Duration("history.duration", 40*time.Second, "TestHistory: how long faults are injected")
	historyGateways = flag.Int("history.gateways", 3, "TestHistory: gateway processes, each behind its own database proxy")
	historySeed     = flag.Uint64("history.seed", 1, "TestHistory: seed of the fault schedule and of every device's choices")
)

const (
	historyConv      = "history"
	historyHandshake = 8 * time.Second // a client's handshake timeout: longer than a claim's 5 s store timeout
	historyPollEvery = 200 * time.Millisecond
	historyMaxOpen   = 4 // a device with this many open sessions claims no more until one closes
)

// historyRun is one run: the gateways, the devices and what they record.
type historyRun struct {
	t      *testing.T
	schema string
	s      *store.PG
	t0     time.Time
	pc     procConfig
	slots  []*historySlot
	http   *http.Client

	mu    sync.Mutex
	h     history
	procs []*historyProc
	devs  []*historyDevice

	readers sync.WaitGroup // every session's reader
	quiet   atomic.Bool    // no more faults and no more random claims
	head    atomic.Int64
	faulted []atomic.Bool
}

// historySlot is one gateway: a fixed id and address (moved only if
// another process takes its port), restarted in place, reaching PostgreSQL
// through its own proxy.
type historySlot struct {
	id    string
	addr  atomic.Pointer[string]
	proxy *tcpProxy
	cur   atomic.Pointer[historyProc]
}

// historyProc is one process of a slot.
type historyProc struct {
	gw       int
	p        *proc
	killed   bool
	killedAt time.Duration
	drain    *drainRecord
}

// historyDevice is one device's client state.
type historyDevice struct {
	i      int
	id     string
	rng    *rand.Rand
	claim  claimKey // the highest claim it has sent
	cursor atomic.Int64
	mu     sync.Mutex
	open   []*historySession
}

// historySession is a live session and its pending syncs.
type historySession struct {
	idx     int
	ws      *websocket.Conn
	mu      sync.Mutex
	pending []int64 // the after of each sync sent and not yet answered
}

// answered takes the cursor of the oldest sync not yet answered (-1 if
// none): the gateway answers a session's syncs in order.
func (sess *historySession) answered() int64 {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if len(sess.pending) == 0 {
		return -1
	}
	after := sess.pending[0]
	sess.pending = sess.pending[1:]
	return after
}

func (r *historyRun) since() time.Duration { return time.Since(r.t0) }

// TestHistory drives several gateway processes, each behind its own
// database proxy, with hundreds of devices that claim with random
// (install_epoch, attempt): newer claims, late old ones, duplicates,
// reinstalls and concurrent pairs on two gateways, while a seeded schedule
// kills, pauses (SIGSTOP), drains and restarts gateways and cuts, holds and
// delays their databases, cut-then-slow included. Every outcome a client
// sees is recorded, routes and floors are polled every 200 ms, and the
// history is held to V1 (sessions included), V2, V3, V4, V5 and V6
// (checkHistory, with the bounds stated in historyBoundsFor).
func TestHistory(t *testing.T) {
	r := newHistoryRun(t)
	load := loadAverage()
	started := time.Now()
	r.run()
	v, st := checkHistory(&r.h, historyBoundsFor(r.pc))
	faults := map[string]int{}
	for _, f := range r.h.faults {
		faults[f.kind]++
	}
	t.Logf("history: %d gateways, %d devices, %v of faults, seed %d, %v in all; load %s before, %s after",
		*historyGateways, *historyDevices, *historyDuration, *historySeed, time.Since(started).Round(time.Second), load, loadAverage())
	var lapsed time.Duration
	for _, l := range r.h.lapses {
		lapsed += max(0, l.end-l.start)
	}
	t.Logf("faults injected: %d %v; lapses the gateways noticed: %d, %v in all", len(r.h.faults), faults, len(r.h.lapses), lapsed.Round(time.Millisecond))
	t.Logf("claims checked: %d (101: %d, 409: %d, 429: %d); sessions %d; polls %d (%d floor, %d route observations, %d conns unknown); V3 checks %d (slowest reclaim %v); V4 windows %d; drains %d; final sync %d devices to head %d",
		st.claims, st.accepted, st.refused409, st.refused429, st.sessionChecks, len(r.h.polls), st.floorChecks, st.routeChecks,
		st.unknownConns, st.reclaimChecks, st.worstReclaim.Round(time.Millisecond), st.windowChecks, st.drainChecks,
		r.h.finalSync.checked, r.h.finalSync.head)
	t.Logf("worst unexcused time a session stayed open superseded or without its route: %v (bound %v)",
		st.worstUnexcused.Round(time.Millisecond), historyBoundsFor(r.pc).session)
	for i, s := range r.h.finalSync.shortSessions {
		t.Logf("short of the final head: %s", s)
		r.logConn(r.h.finalSync.shortConns[i])
	}
	t.Logf("violations: %d", len(v))
	for i, x := range v {
		if i == 40 {
			t.Errorf("... and %d more", len(v)-i)
			break
		}
		t.Errorf("%s: %s", x.inv, x.what)
		if x.conn != "" && i < 10 {
			r.logConn(x.conn)
		}
	}
}

// logConn prints every gateway log line that names conn.
func (r *historyRun) logConn(conn string) {
	for _, hp := range r.procs {
		for _, e := range hp.p.logs.events("") {
			if e[logline.KeyConn] == conn {
				r.t.Logf("  %s: %v", hp.p.id, e)
			}
		}
	}
}

// historyBoundsFor states the bounds the history is held to.
//
//   - V1 sessions: lease + 2 periods + 1 s outside the session's gateway's
//     faults. A replaced session is kicked at once; a swept one is restored
//     by the re-registration that follows its gateway's next renewal (a
//     period), and a renewal that comes late is noticed at its completion;
//     the second period and the second are the machine's.
//   - V3: lease + period (the design's bound) + 1 s for the 200 ms polls
//     and a loaded machine.
//   - V4: the gateways' bucket, exactly (the tokens are the gateway's own
//     clock readings).
//   - V6: a handshake sent 100 ms after drain_start is not admitted.
func historyBoundsFor(pc procConfig) historyBounds {
	period := models.LeasePeriod(pc.lease, pc.ping)
	rate, burst := historyBucket(*historyDevices)
	return historyBounds{lease: pc.lease, period: period, session: pc.lease + 2*period + time.Second,
		reclaim: pc.lease + period + time.Second, rate: rate, burst: burst, drainSlack: 100 * time.Millisecond}
}

// historyBucket is each gateway's admission bucket, in handshakes per
// second and handshakes: for every 200 devices (claiming about once every
// two seconds, over three gateways) 15/s and 10, which they meet now and
// then.
func historyBucket(devices int) (rate, burst float64) {
	return 15 * float64(devices) / 200, math.Ceil(10 * float64(devices) / 200)
}

func newHistoryRun(t *testing.T) *historyRun {
	n := *historyDevices
	s, schema := setup(t, n)
	ctx := context.Background()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = store.DeviceID(i)
	}
	if _, err := s.Join(ctx, historyConv, ids); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendEvents(ctx, historyConv, []string{"first"}); err != nil {
		t.Fatal(err)
	}
	r := &historyRun{t: t, schema: schema, s: s,
		pc:   procConfig{lease: 1500 * time.Millisecond, ping: 500 * time.Millisecond, idle: 3 * time.Second},
		http: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}},
	}
	r.head.Store(1)
	dbURL := pgtest.URL(t)
	u, _ := url.Parse(dbURL)
	r.faulted = make([]atomic.Bool, *historyGateways)
	for i := range *historyGateways {
		sl := &historySlot{id: "gw-h-" + string(rune('a'+i)), proxy: startProxy(t, u.Host)}
		addr := freeAddr(t)
		sl.addr.Store(&addr)
		r.slots = append(r.slots, sl)
		r.h.gateways = append(r.h.gateways, sl.id)
	}
	for i := range r.slots {
		if err := r.start(i); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		r.devs = append(r.devs, &historyDevice{i: i, id: ids[i], rng: rand.New(rand.NewPCG(*historySeed, uint64(i)+1)), claim: claimKey{0, 0}})
	}
	r.t0 = time.Now()
	return r
}

// start launches slot i's gateway and waits for it to listen. The machine
// is shared: if another process took the slot's port while the gateway was
// down, the slot moves to a free one (the devices read the address at every
// handshake).
func (r *historyRun) start(i int) error {
	sl := r.slots[i]
	pc := r.pc
	pc.dbURL = withHost(r.t, pgtest.URL(r.t), sl.proxy.addr())
	rate, burst := historyBucket(*historyDevices)
	for try := 0; ; try++ {
		addr := *sl.addr.Load()
		pc.extra = []string{"--listen", addr, "--admit-rate", strconv.FormatFloat(rate, 'g', -1, 64), "--admit-burst", strconv.Itoa(int(burst))}
		p := launchProc(r.t, r.schema, sl.id, pc)
		deadline := time.Now().Add(30 * time.Second)
		exited := false
		for !exited && len(p.logs.events(logline.Listening)) == 0 {
			select {
			case <-p.exited:
				exited = true
			default:
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s not listening after 30 s", sl.id)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if exited {
			p.logs.mu.Lock()
			inUse := strings.Contains(p.logs.buf.String(), "address already in use")
			p.logs.mu.Unlock()
			if inUse && try < 3 {
				next := freeAddr(r.t)
				sl.addr.Store(&next)
				continue
			}
			return fmt.Errorf("%s exited before listening on %s", sl.id, addr)
		}
		hp := &historyProc{gw: i, p: p}
		r.mu.Lock()
		r.procs = append(r.procs, hp)
		r.mu.Unlock()
		sl.cur.Store(hp)
		return nil
	}
}

// run is the whole history: devices, poller, appender, faults, then a
// quiet phase in which every device holds one session and syncs to head.
func (r *historyRun) run() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var bg sync.WaitGroup
	bg.Go(func() { r.pollLoop(ctx) })
	appendCtx, stopAppend := context.WithCancel(ctx)
	bg.Go(func() { r.appendLoop(appendCtx) })
	var devices sync.WaitGroup
	for _, d := range r.devs {
		devices.Go(func() { r.deviceLoop(ctx, d) })
	}

	r.faultSchedule(*historyDuration)
	r.quiet.Store(true)
	stopAppend()
	devices.Wait() // each device ends with one open session (if it could get one)
	settle := r.since() + historyBoundsFor(r.pc).session + 2*time.Second
	r.finalSync()
	for r.since() < settle {
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	bg.Wait()

	r.mu.Lock()
	r.h.end = r.since()
	r.mu.Unlock()
	for _, d := range r.devs {
		d.mu.Lock()
		for _, hs := range d.open {
			hs.ws.CloseNow()
		}
		d.mu.Unlock()
	}
	r.readers.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, hp := range r.procs {
		pr := hp.record(r.slots[hp.gw].id, r.t0, r.pc.lease)
		r.h.procs = append(r.h.procs, pr)
		r.h.lapses = append(r.h.lapses, pr.lapses...)
	}
}

// record reads a process's log into its procRecord: its admission tokens,
// its incarnation, and the lapses it noticed on its own (lease_lost, from
// the lease's local expiry, to lease_regained); t0 is the history's start.
func (hp *historyProc) record(id string, t0 time.Time, lease time.Duration) procRecord {
	pr := procRecord{gw: hp.gw, id: id, killed: hp.killed, killedAt: hp.killedAt, drain: hp.drain}
	var open *faultRecord
	for _, e := range hp.p.logs.events("") {
		switch e["msg"] {
		case logline.LeaseLost:
			since := time.Duration(e.num(logline.KeySinceRenewMs)) * time.Millisecond
			at := e.time().Sub(t0)
			open = &faultRecord{gw: hp.gw, kind: "lapse", start: at - since + lease, end: -1}
		case logline.LeaseRegained:
			if open != nil {
				open.end = e.time().Sub(t0)
				pr.lapses = append(pr.lapses, *open)
				open = nil
			}
		}
	}
	if open != nil { // the process ended lapsed: killed or drained meanwhile, or never regained
		switch {
		case hp.killed:
			open.end = hp.killedAt
		case hp.drain != nil:
			open.end = hp.drain.signalled
		}
		pr.lapses = append(pr.lapses, *open)
	}
	for _, msg := range []string{logline.Admitted, logline.Abandoned, logline.ClaimWasted} {
		for _, e := range hp.p.logs.events(msg) {
			pr.tokens = append(pr.tokens, e.num(logline.KeyTokenMs))
			if c, ok := e[logline.KeyConn].(string); ok && pr.incarnation == "" {
				pr.incarnation = incarnationOf(c)
			}
		}
	}
	slices.Sort(pr.tokens)
	return pr
}

// pollLoop snapshots every device's floor and route, one statement a poll.
func (r *historyRun) pollLoop(ctx context.Context) {
	index := map[string]int{}
	for i, d := range r.devs {
		index[d.id] = i
	}
	t := time.NewTicker(historyPollEvery)
	defer t.Stop()
	for {
		start := r.since()
		rows, err := r.s.Pool().Query(ctx, `SELECT f.device_id, f.max_version, f.max_epoch, f.max_attempt,
			coalesce(r.gateway_id, ''), coalesce(r.conn_id, ''), coalesce(r.route_version, 0)
			FROM route_floor f LEFT JOIN routes r USING (device_id)`)
		if err == nil {
			p := poll{start: start, rows: make([]pollRow, len(r.devs))}
			for i := range p.rows {
				p.rows[i].floor = noFloor
			}
			for rows.Next() {
				var dev string
				var row pollRow
				if rows.Scan(&dev, &row.floorVersion, &row.floor.epoch, &row.floor.attempt, &row.gateway, &row.conn, &row.version) == nil {
					if i, ok := index[dev]; ok {
						p.rows[i] = row
					}
				}
			}
			rows.Close()
			if rows.Err() == nil {
				p.end = r.since()
				r.mu.Lock()
				r.h.polls = append(r.h.polls, p)
				r.mu.Unlock()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// appendLoop adds an event to the conversation every 250 ms.
func (r *historyRun) appendLoop(ctx context.Context) {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if head, err := r.s.AppendEvents(ctx, historyConv, []string{"e"}); err == nil {
			r.head.Store(head)
		}
	}
}

// deviceLoop is one device: a random action every 0.5-4 s until the quiet
// phase, then one open session.
func (r *historyRun) deviceLoop(ctx context.Context, d *historyDevice) {
	sleep := func(lo, hi time.Duration) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(lo + time.Duration(d.rng.Int64N(int64(hi-lo)))):
			return true
		}
	}
	for !r.quiet.Load() {
		if !sleep(500*time.Millisecond, 4*time.Second) {
			return
		}
		d.mu.Lock()
		open := len(d.open)
		d.mu.Unlock()
		gw := d.rng.IntN(len(r.slots))
		switch k := d.rng.IntN(100); {
		case open >= historyMaxOpen || k < 10:
			r.closeOwn(d)
		case k < 50: // a newer attempt
			d.claim.attempt += 1 + d.rng.Int64N(3)
			r.claim(ctx, d, gw, d.claim)
		case k < 58: // a reinstall
			d.claim = claimKey{d.claim.epoch + 1, d.rng.Int64N(3)}
			r.claim(ctx, d, gw, d.claim)
		case k < 70: // a late old claim
			old := d.claim
			switch {
			case old.attempt > 0:
				old.attempt = d.rng.Int64N(old.attempt)
			case old.epoch > 0:
				old = claimKey{old.epoch - 1, d.rng.Int64N(10)}
			}
			r.claim(ctx, d, gw, old)
		case k < 80: // a duplicate, anywhere
			r.claim(ctx, d, gw, d.claim)
		case k < 90: // a concurrent pair on two gateways
			a, b := d.claim, d.claim
			a.attempt++
			b.attempt += 2
			d.claim = b
			var pair sync.WaitGroup
			pair.Go(func() { r.claim(ctx, d, gw, a) })
			pair.Go(func() { r.claim(ctx, d, (gw+1)%len(r.slots), b) })
			pair.Wait()
		}
	}
	// The quiet phase: hold one session, so that the final sync and the
	// checks at rest have every device to look at.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if r.held(d) > 0 {
			return
		}
		d.claim.attempt++
		r.claim(ctx, d, d.rng.IntN(len(r.slots)), d.claim)
		sleep(200*time.Millisecond, 600*time.Millisecond)
	}
}

var citedFloor = regexp.MustCompile(`recorded \((\d+), (\d+)\)`)

// claim makes one handshake and records what the client saw; on 101 it
// runs the session until it closes.
func (r *historyRun) claim(ctx context.Context, d *historyDevice, gw int, c claimKey) {
	hctx, cancel := context.WithTimeout(ctx, historyHandshake)
	defer cancel()
	rec := hsRecord{dev: d.i, gw: gw, claim: c, sentWall: time.Now(), sent: r.since()}
	ws, resp, err := websocket.Dial(hctx, handshakeURL(*r.slots[gw].addr.Load(), c.epoch, c.attempt),
		&websocket.DialOptions{HTTPHeader: bearer(d.id), HTTPClient: r.http})
	rec.answered = r.since()
	switch {
	case err == nil:
		_, data, rerr := ws.Read(hctx)
		var hello protocol.Hello
		if rerr != nil || json.Unmarshal(data, &hello) != nil || hello.T != protocol.TypeHello {
			rec.failure = "hello lost"
			ws.CloseNow()
			break
		}
		rec.status, rec.conn, rec.version = 101, hello.Conn, hello.RouteVersion
	case resp != nil:
		rec.status = resp.StatusCode
		if rec.status == 409 {
			body, _ := io.ReadAll(resp.Body)
			if m := citedFloor.FindSubmatch(body); m != nil {
				rec.cited.epoch, _ = strconv.ParseInt(string(m[1]), 10, 64)
				rec.cited.attempt, _ = strconv.ParseInt(string(m[2]), 10, 64)
				rec.citedOK = true
			}
		}
	case errors.Is(err, context.DeadlineExceeded) || hctx.Err() != nil:
		rec.failure = "timeout"
	case strings.Contains(err.Error(), "connection refused"):
		rec.failure = "refused"
	default:
		rec.failure = "error"
	}
	r.mu.Lock()
	r.h.handshakes = append(r.h.handshakes, rec)
	hi := len(r.h.handshakes) - 1
	var sess *historySession
	if rec.status == 101 {
		r.h.sessions = append(r.h.sessions, sessRecord{hs: hi, dev: d.i, gw: gw, conn: rec.conn, claim: c,
			opened: rec.answered, closed: -1, code: -1})
		sess = &historySession{idx: len(r.h.sessions) - 1, ws: ws}
	}
	r.mu.Unlock()
	if sess == nil {
		return
	}
	d.mu.Lock()
	d.open = append(d.open, sess)
	d.mu.Unlock()
	r.readers.Go(func() { r.readSession(d, sess) })
	r.sync(sess, d.cursor.Load())
}

// sync asks for the conversation's events after after.
func (r *historyRun) sync(sess *historySession, after int64) {
	sess.mu.Lock()
	sess.pending = append(sess.pending, after)
	sess.mu.Unlock()
	b, _ := json.Marshal(protocol.Sync{T: protocol.TypeSync, Conv: historyConv, After: after})
	wctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	sess.ws.Write(wctx, websocket.MessageText, b)
}

// readSession reads a session's frames until it closes, checks every sync
// answer (V5: what the device missed, contiguous from its cursor), and
// records the close.
func (r *historyRun) readSession(d *historyDevice, sess *historySession) {
	for {
		_, data, err := sess.ws.Read(context.Background())
		if err != nil {
			r.mu.Lock()
			s := &r.h.sessions[sess.idx]
			if !s.byClient {
				s.closed, s.code = r.since(), int(websocket.CloseStatus(err))
			}
			r.mu.Unlock()
			d.mu.Lock()
			d.open = slices.DeleteFunc(d.open, func(o *historySession) bool { return o == sess })
			d.mu.Unlock()
			return
		}
		var env struct{ T string }
		json.Unmarshal(data, &env)
		switch env.T {
		case protocol.TypeGoaway:
			r.mu.Lock()
			r.h.sessions[sess.idx].goaway = true
			r.mu.Unlock()
		case protocol.TypeError:
			var e protocol.Error
			json.Unmarshal(data, &e)
			after := sess.answered()
			if !strings.Contains(e.Message, "retry") {
				r.syncError(fmt.Sprintf("device %d: sync after %d answered %q", d.i, after, e.Message))
				continue
			}
			if after >= 0 {
				go func() { time.Sleep(200 * time.Millisecond); r.sync(sess, after) }()
			}
		case protocol.TypeEvents:
			var ev protocol.Events
			json.Unmarshal(data, &ev)
			after := sess.answered()
			if problem := syncProblem(after, ev); problem != "" {
				r.syncError(fmt.Sprintf("device %d: sync after %d: %s", d.i, after, problem))
				continue
			}
			last := after
			if n := len(ev.Events); n > 0 {
				last = ev.Events[n-1].Seq
			}
			for cur := d.cursor.Load(); last > cur && !d.cursor.CompareAndSwap(cur, last); cur = d.cursor.Load() {
			}
			if last < ev.Head {
				go r.sync(sess, last)
			}
		}
	}
}

// syncProblem is what is wrong with an answer to a sync after after, if
// anything (V5): every event after it up to head, in order, none missing.
func syncProblem(after int64, ev protocol.Events) string {
	switch {
	case after < 0:
		return "an answer nobody asked for"
	case ev.Head < after:
		return fmt.Sprintf("head %d below the cursor", ev.Head)
	case ev.Head > after && len(ev.Events) == 0:
		return fmt.Sprintf("no events though head is %d", ev.Head)
	}
	for i, e := range ev.Events {
		if e.Seq != after+1+int64(i) {
			return fmt.Sprintf("event %d of the answer has seq %d, want %d", i, e.Seq, after+1+int64(i))
		}
	}
	if n := len(ev.Events); n > 0 && ev.Events[n-1].Seq > ev.Head {
		return fmt.Sprintf("events past head %d", ev.Head)
	}
	return ""
}

func (r *historyRun) syncError(e string) {
	r.mu.Lock()
	r.h.syncErrors = append(r.h.syncErrors, e)
	r.mu.Unlock()
}

// held is how many of the device's open sessions its client is not
// closing: a session closeOwn closed leaves d.open only once its read
// ends, and one of those is no session for the quiet phase to hold (a
// device that took its last random action, a close, as the quiet phase
// began kept only it, and fell short of the final head).
func (r *historyRun) held(d *historyDevice) int {
	d.mu.Lock()
	open := slices.Clone(d.open)
	d.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, sess := range open {
		if !r.h.sessions[sess.idx].byClient {
			n++
		}
	}
	return n
}

// closeOwn closes the device's newest open session from the client side.
func (r *historyRun) closeOwn(d *historyDevice) {
	d.mu.Lock()
	var sess *historySession
	if n := len(d.open); n > 0 {
		sess = d.open[n-1]
	}
	d.mu.Unlock()
	if sess == nil {
		return
	}
	r.mu.Lock()
	s := &r.h.sessions[sess.idx]
	if s.closed < 0 {
		s.closed, s.byClient = r.since(), true
	}
	r.mu.Unlock()
	go sess.ws.Close(websocket.StatusNormalClosure, "bye")
}

// finalSync makes every device with an open session sync from its cursor,
// and counts those that do not reach the conversation's head (V5). A
// device syncs on the session of its newest claim; if that session closes
// before the answer (a superseded one the gateway had yet to kick, a
// lapse), it syncs again on another it still holds. A device left with
// none is counted short.
func (r *historyRun) finalSync() {
	head := r.head.Load()
	r.h.finalSync.head = head
	synced := map[*historyDevice]*historySession{}
	var waiting []*historyDevice
	for _, d := range r.devs {
		if sess := r.newestOpen(d); sess != nil {
			waiting = append(waiting, d)
			synced[d] = sess
			r.sync(sess, d.cursor.Load())
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		behind := 0
		for _, d := range waiting {
			if d.cursor.Load() >= head {
				continue
			}
			behind++
			d.mu.Lock()
			gone := !slices.Contains(d.open, synced[d])
			d.mu.Unlock()
			if sess := r.newestOpen(d); gone && sess != nil {
				synced[d] = sess
				r.sync(sess, d.cursor.Load())
			}
		}
		if behind == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.h.finalSync.checked = len(waiting)
	for _, d := range waiting {
		if d.cursor.Load() < head {
			r.h.finalSync.short++
			sess := synced[d]
			sess.mu.Lock()
			pending := slices.Clone(sess.pending)
			sess.mu.Unlock()
			d.mu.Lock()
			held := len(d.open)
			d.mu.Unlock()
			s := r.h.sessions[sess.idx]
			r.h.finalSync.shortSessions = append(r.h.finalSync.shortSessions, fmt.Sprintf(
				"device %d at cursor %d, %d sessions open: synced on %s on %s (claim %v, open %v-%v, code %d, by its client %v), syncs unanswered %v",
				d.i, d.cursor.Load(), held, s.conn, r.h.gateways[s.gw], s.claim, s.opened, s.closed, s.code, s.byClient, pending))
			r.h.finalSync.shortConns = append(r.h.finalSync.shortConns, s.conn)
		}
	}
}

// newestOpen is the device's open session of its newest claim (nil if it
// holds none): the one the gateways keep once they have kicked the others.
func (r *historyRun) newestOpen(d *historyDevice) *historySession {
	d.mu.Lock()
	open := slices.Clone(d.open)
	d.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	var best *historySession
	for _, sess := range open {
		if best == nil || r.h.sessions[best.idx].claim.less(r.h.sessions[sess.idx].claim) {
			best = sess
		}
	}
	return best
}

// faultSchedule injects faults for d: every 0.4-1.6 s, on a gateway not
// already in a fault, while at least one other gateway is free of them. A
// gateway gets no fault for the session bound and 1.5 s after its last
// ended, so that how it recovers is seen after every fault, not hidden by
// the next.
func (r *historyRun) faultSchedule(d time.Duration) {
	cooldown := historyBoundsFor(r.pc).session + 1500*time.Millisecond
	cooling := make([]atomic.Bool, len(r.slots))
	rng := rand.New(rand.NewPCG(*historySeed, 0x4157))
	kinds := []struct {
		name   string
		weight int
	}{{"kill", 2}, {"pause", 2}, {"drain", 2}, {"cut", 2}, {"hold", 2}, {"delay", 1}, {"cut, then slow", 6}, {"hold for a lease", 3}}
	total := 0
	for _, k := range kinds {
		total += k.weight
	}
	var running sync.WaitGroup
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		time.Sleep(400*time.Millisecond + time.Duration(rng.IntN(1200))*time.Millisecond)
		busy := 0
		var free []int
		for i := range r.slots {
			switch {
			case r.faulted[i].Load():
				busy++
			case !cooling[i].Load():
				free = append(free, i)
			}
		}
		if busy >= len(r.slots)-1 || len(free) == 0 {
			continue
		}
		gw := free[rng.IntN(len(free))]
		pick := rng.IntN(total)
		kind := ""
		for _, k := range kinds {
			if pick < k.weight {
				kind = k.name
				break
			}
			pick -= k.weight
		}
		// The fault's own draws, taken here so that the schedule depends
		// on the seed alone.
		a, b, c := rng.Float64(), rng.Float64(), rng.Float64()
		r.faulted[gw].Store(true)
		cooling[gw].Store(true)
		running.Go(func() {
			r.inject(gw, kind, a, b, c)
			r.faulted[gw].Store(false)
			time.Sleep(cooldown)
			cooling[gw].Store(false)
		})
	}
	running.Wait()
}

// between maps u in [0, 1) to [lo, hi).
func between(u float64, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(u*float64(hi-lo))
}

// inject runs one fault on slot gw and records it.
func (r *historyRun) inject(gw int, kind string, a, b, c float64) {
	sl := r.slots[gw]
	hp := sl.cur.Load()
	f := faultRecord{gw: gw, kind: kind, start: r.since()}
	switch kind {
	case "kill":
		hp.p.cmd.Process.Signal(syscall.SIGKILL)
		at := r.since()
		<-hp.p.exited
		r.mu.Lock()
		hp.killed, hp.killedAt = true, at
		r.mu.Unlock()
		time.Sleep(between(a, 300*time.Millisecond, 1200*time.Millisecond))
		r.restart(gw)
	case "pause":
		hp.p.cmd.Process.Signal(syscall.SIGSTOP)
		d := between(a, 400*time.Millisecond, 3500*time.Millisecond)
		time.Sleep(d)
		hp.p.cmd.Process.Signal(syscall.SIGCONT)
		f.detail = d.Round(time.Millisecond).String()
	case "drain":
		dr := &drainRecord{signalled: r.since()}
		hp.p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-hp.p.exited:
			dr.exitCode = hp.p.state.ExitCode()
		case <-time.After(30 * time.Second):
			r.t.Errorf("%s did not exit within 30 s of SIGTERM", sl.id)
			hp.p.cmd.Process.Kill()
			<-hp.p.exited
			dr.exitCode = -1
		}
		if n, err := r.s.RouteCount(context.Background(), sl.id); err == nil {
			dr.routesAfter, dr.routesChecked = n, true
		}
		if e := hp.p.logs.events(logline.DrainStart); len(e) > 0 {
			dr.startWall = e[0].time()
		}
		r.mu.Lock()
		hp.drain = dr
		r.mu.Unlock()
		time.Sleep(between(a, 300*time.Millisecond, 1000*time.Millisecond))
		r.restart(gw)
	case "cut":
		d := between(a, 300*time.Millisecond, 2500*time.Millisecond)
		sl.proxy.setCut(true)
		time.Sleep(d)
		sl.proxy.setCut(false)
		f.detail = d.Round(time.Millisecond).String()
	case "hold":
		d := between(a, 300*time.Millisecond, 2500*time.Millisecond)
		sl.proxy.setHold(true)
		time.Sleep(d)
		sl.proxy.setHold(false)
		f.detail = d.Round(time.Millisecond).String()
	case "hold for a lease":
		// The renewal held since the period after the last one times out
		// half a lease later; the next is sent at once, before the lease
		// lapses on the gateway's clock, and the hold's end (a lease and
		// a little after it began) lets it run after it lapsed in the
		// database.
		d := between(a, r.pc.lease*28/30, r.pc.lease)
		sl.proxy.setHold(true)
		time.Sleep(d)
		sl.proxy.setHold(false)
		f.detail = d.Round(time.Millisecond).String()
	case "delay":
		per, d := between(a, 30*time.Millisecond, 150*time.Millisecond), between(b, time.Second, 4*time.Second)
		sl.proxy.setDelay(per)
		time.Sleep(d)
		sl.proxy.setDelay(0)
		f.detail = fmt.Sprintf("%v a chunk for %v", per.Round(time.Millisecond), d.Round(time.Millisecond))
	case "cut, then slow":
		// The lapse a gateway does not see on its own clock: the first
		// renewal after the cut is sent before the local lapse and runs in
		// the database after it.
		// A cut of two thirds of a lease (give or take 5 %) ends between
		// the second and the third tick after the last renewal, and at
		// 70-110 ms a chunk the renewal through a new connection (six
		// chunks) runs a third of a lease later and still completes
		// within the renewal's timeout of half a lease.
		cut := between(a, r.pc.lease*19/30, r.pc.lease*21/30)
		per, d := between(b, 70*time.Millisecond, 110*time.Millisecond), between(c, 2*time.Second, 4*time.Second)
		sl.proxy.setCut(true)
		time.Sleep(cut)
		sl.proxy.setDelay(per)
		time.Sleep(d)
		sl.proxy.setDelay(0)
		f.detail = fmt.Sprintf("cut %v, then %v a chunk for %v", cut.Round(time.Millisecond), per.Round(time.Millisecond), d.Round(time.Millisecond))
	}
	f.end = r.since()
	r.mu.Lock()
	r.h.faults = append(r.h.faults, f)
	r.mu.Unlock()
}

// restart starts slot gw again; a gateway that cannot start fails the test.
func (r *historyRun) restart(gw int) {
	if err := r.start(gw); err != nil {
		r.t.Errorf("restart: %v", err)
	}
}

// loadAverage is /proc/loadavg's three figures, or "?".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := bytes.Fields(b)
	if len(f) < 3 {
		return "?"
	}
	return string(bytes.Join(f[:3], []byte(" ")))
}
