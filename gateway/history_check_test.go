package gateway_test

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"stormsim/gateway/protocol"
)

// The history test's records and the checks of the invariants over them
// (docs/design-background.md, "Invariants"; docs/gateway.md, "History").
// Everything here is pure: TestHistory fills a history, checkHistory judges
// it, and TestHistoryChecks feeds it small hand-made histories that break
// each invariant once.

// claimKey is a handshake's (install_epoch, attempt).
type claimKey struct{ epoch, attempt int64 }

// less orders claims as the floor does: epoch first, then attempt.
func (a claimKey) less(b claimKey) bool {
	return a.epoch < b.epoch || (a.epoch == b.epoch && a.attempt < b.attempt)
}

func (a claimKey) String() string { return fmt.Sprintf("(%d, %d)", a.epoch, a.attempt) }

// noFloor is the floor of a device that never claimed.
var noFloor = claimKey{-1, -1}

// hsRecord is one handshake as its client saw it. Times are since the
// history's start on the test's monotonic clock.
type hsRecord struct {
	dev, gw        int
	claim          claimKey
	sent, answered time.Duration
	sentWall       time.Time
	status         int    // HTTP status; 0 when none came
	failure        string // no status: refused, reset, timeout
	conn           string // 101: the hello's
	version        int64  // 101: the hello's route version
	cited          claimKey
	citedOK        bool // 409: the body cited a recorded claim
}

// answerLost reports whether the handshake may have been claimed without
// its client learning the outcome.
func (h *hsRecord) answerLost() bool { return h.status == 0 || h.status == 503 }

// sessRecord is one upgraded connection as its client saw it.
type sessRecord struct {
	hs       int // index of its handshake
	dev, gw  int
	conn     string
	claim    claimKey
	opened   time.Duration // hello read
	closed   time.Duration // close seen, or the client's own close begun; -1 while open
	code     int           // close code seen (-1: none, the connection just ended)
	goaway   bool          // a goaway frame came before the close
	byClient bool          // the client closed it
}

// pollRow is one device in a poll of routes and floors.
type pollRow struct {
	floor        claimKey
	floorVersion int64  // 0: no floor row
	conn         string // "" : no route
	gateway      string
	version      int64
}

// poll is one consistent snapshot (one statement) of every device's floor
// and route, taken between start and end.
type poll struct {
	start, end time.Duration
	rows       []pollRow // by device index
}

// faultRecord is one injected fault on one gateway slot, from its start to
// the moment the slot is back to normal (restarted, resumed, passing).
type faultRecord struct {
	gw         int
	kind       string
	start, end time.Duration
	detail     string
}

// procRecord is one gateway process: its slot, what its log says.
type procRecord struct {
	gw          int
	id          string
	incarnation string        // conn id prefix of its connections ("" if it had none)
	tokens      []float64     // ms since the process started, of every admission token taken (admitted, abandoned, wasted)
	lapses      []faultRecord // the lapses it noticed itself (end -1: never regained)
	killedAt    time.Duration
	killed      bool
	drain       *drainRecord
}

// drainRecord is one SIGTERM drain.
type drainRecord struct {
	signalled     time.Duration
	startWall     time.Time // the drain_start line's time
	exitCode      int
	routesAfter   int64 // routes under the gateway id right after the exit
	routesChecked bool
}

// history is everything one run recorded.
type history struct {
	gateways   []string // ids by slot
	handshakes []hsRecord
	sessions   []sessRecord
	polls      []poll
	faults     []faultRecord
	lapses     []faultRecord // the gateways' own, noticed lapses: a loaded machine stalls renewals too
	procs      []procRecord
	syncErrors []string // V5 breaks seen by the clients as they happened
	finalSync  struct {
		head           int64
		checked, short int
		shortSessions  []string // what the devices short of the head held, for the log
		shortConns     []string // their sessions' conns
	}
	end time.Duration
}

// historyBounds are the limits the checks hold the history to.
type historyBounds struct {
	lease, period time.Duration
	// session bounds V1 for sessions: how long, outside its gateway's
	// faults, a session may stay open while a newer claim owns its device
	// or while its device has no route.
	session time.Duration
	// reclaim bounds V3: a dead gateway's routes are gone this long after
	// its death (lease + period, plus the polls' and the machine's slack).
	reclaim     time.Duration
	rate, burst float64 // V4: each gateway's admission bucket
	drainSlack  time.Duration
}

// violation is one broken invariant; conn, if set, is the connection it
// is about, whose gateway log lines the test prints.
type violation struct{ inv, what, conn string }

// historyStats are the figures a run reports beside its verdict.
type historyStats struct {
	claims, accepted, refused409, refused429 int
	sessionChecks, routeChecks, floorChecks  int
	worstUnexcused, worstReclaim             time.Duration
	reclaimChecks, windowChecks, drainChecks int
	unknownConns                             int
}

// incarnationOf is the process part of a conn id, "c-<incarnation>-<n>".
func incarnationOf(conn string) string {
	if i := strings.LastIndexByte(conn, '-'); i > 0 {
		return conn[:i]
	}
	return conn
}

// excusedWithin is how much of [from, to] lies inside gw's faults and the
// lapses it noticed.
func (h *history) excusedWithin(gw int, from, to time.Duration) time.Duration {
	var spans [][2]time.Duration
	for _, f := range h.excuses() {
		if f.gw == gw && f.end > from && f.start < to {
			spans = append(spans, [2]time.Duration{max(f.start, from), min(f.end, to)})
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })
	var total, reach time.Duration
	reach = from
	for _, s := range spans {
		if s[1] <= reach {
			continue
		}
		total += s[1] - max(s[0], reach)
		reach = s[1]
	}
	return total
}

// excuses are the injected faults and the lapses the gateways noticed.
func (h *history) excuses() []faultRecord {
	out := slices.Clone(h.faults)
	for _, l := range h.lapses {
		if l.end >= 0 {
			out = append(out, l)
		}
	}
	return out
}

// faulted reports whether any fault or noticed lapse of gw overlaps [from, to].
func (h *history) faulted(gw int, from, to time.Duration) bool {
	for _, f := range h.excuses() {
		if f.gw == gw && f.end >= from && f.start <= to {
			return true
		}
	}
	return false
}

// checkHistory holds h to the invariants and returns what broke.
func checkHistory(h *history, b historyBounds) ([]violation, historyStats) {
	var out []violation
	var st historyStats
	add := func(inv, format string, args ...any) {
		out = append(out, violation{inv, fmt.Sprintf(format, args...), ""})
	}
	claimOf := map[string]claimKey{} // conn -> its claim, from the hellos
	for _, hs := range h.handshakes {
		st.claims++
		switch hs.status {
		case 101:
			st.accepted++
			claimOf[hs.conn] = hs.claim
		case 409:
			st.refused409++
		case 429:
			st.refused429++
		}
	}

	// V1, routes: a route's version only grows, never past its floor's;
	// the floor only grows.
	for d := range h.deviceCount() {
		var lastVersion, lastFloorVersion int64
		last := noFloor
		for _, p := range h.polls {
			r := p.rows[d]
			if r.floorVersion == 0 {
				continue
			}
			st.floorChecks++
			if r.floorVersion < lastFloorVersion || r.floor.less(last) {
				add("V2", "device %d: floor went back from %v v%d to %v v%d at %v", d, last, lastFloorVersion, r.floor, r.floorVersion, p.start)
			}
			last, lastFloorVersion = r.floor, r.floorVersion
			if r.conn == "" {
				continue
			}
			st.routeChecks++
			if r.version < lastVersion || r.version > r.floorVersion {
				add("V1", "device %d: route version %d at %v after %d, floor v%d", d, r.version, p.start, lastVersion, r.floorVersion)
			}
			lastVersion = r.version
			// V2 in the state: the route belongs to the claim the floor records.
			if c, ok := claimOf[r.conn]; !ok {
				st.unknownConns++
			} else if c != r.floor {
				add("V2", "device %d: route %s of claim %v under floor %v at %v", d, r.conn, c, r.floor, p.start)
			}
		}
	}

	// V1, sessions: outside its gateway's faults, no session stays open
	// longer than b.session while a newer claim owns its device (the device
	// is then open twice) or while its device has no route.
	for _, s := range h.sessions {
		closed := s.closed
		if closed < 0 {
			closed = h.end
		}
		st.sessionChecks++
		runStart := time.Duration(-1) // end of the first poll of the current bad run
		flush := func(lastBadStart time.Duration, why string) {
			if runStart < 0 || lastBadStart <= runStart {
				return
			}
			unexcused := lastBadStart - runStart - h.excusedWithin(s.gw, runStart, lastBadStart)
			st.worstUnexcused = max(st.worstUnexcused, unexcused)
			if unexcused > b.session {
				add("V1", "device %d: session %s on %s (claim %v, open %v-%v) %s for %v outside its gateway's faults (bound %v)",
					s.dev, s.conn, h.gateways[s.gw], s.claim, s.opened, closed, why, unexcused.Round(time.Millisecond), b.session)
			}
		}
		var lastBad time.Duration
		why := ""
		for _, p := range h.polls {
			if p.start < s.opened || p.end > closed {
				continue
			}
			r := p.rows[s.dev]
			bad := ""
			switch {
			case s.claim.less(r.floor):
				bad = "superseded by " + r.floor.String()
			case r.conn != s.conn:
				bad = "without its route"
			}
			if bad == "" {
				flush(lastBad, why)
				runStart = -1
				continue
			}
			if runStart < 0 {
				runStart, why = p.end, bad
			}
			lastBad = p.start
		}
		flush(lastBad, why)
	}

	// A lapse a gateway noticed excuses what it does until it is regained:
	// one never regained while the process ran is a gateway that gave up.
	for _, l := range h.lapses {
		if l.end < 0 {
			add("V1", "%s lapsed at %v and never regained its lease while it ran", h.gateways[l.gw], l.start)
		}
	}

	// V1 at rest: after the last fault, once the sessions had b.session to
	// settle, every route belongs to an open session.
	if n := len(h.polls); n > 0 {
		last := h.polls[n-1]
		lastFault := time.Duration(0)
		for _, f := range h.excuses() {
			lastFault = max(lastFault, f.end)
		}
		if last.start > lastFault+b.session {
			open := map[string]bool{}
			for _, s := range h.sessions {
				if s.closed < 0 || s.closed > last.end {
					open[s.conn] = true
				}
			}
			seen := map[string]string{} // conn -> what its client saw
			for _, hs := range h.handshakes {
				if hs.conn != "" {
					seen[hs.conn] = "101"
				}
			}
			for _, s := range h.sessions {
				seen[s.conn] = fmt.Sprintf("session open %v-%v, code %d, by its client %v", s.opened, s.closed, s.code, s.byClient)
			}
			for d, r := range last.rows {
				if r.conn != "" && !open[r.conn] {
					what := seen[r.conn]
					if what == "" {
						what = "no hello for it"
					}
					out = append(out, violation{"V1", fmt.Sprintf("device %d: at rest its route %s on %s has no open session (%s)", d, r.conn, r.gateway, what), r.conn})
				}
			}
			for _, s := range h.sessions {
				if open[s.conn] && last.rows[s.dev].floor == s.claim && last.rows[s.dev].conn != s.conn {
					add("V1", "device %d: at rest its session %s on %s holds no route", s.dev, s.conn, h.gateways[s.gw])
				}
			}
		}
	}

	// V2, history: per device the accepted claims, in route version order,
	// strictly grow; every accepted claim is newer than every floor seen
	// before it was sent; every 409 cites a recorded claim at least as new.
	accepted := map[int][]hsRecord{}
	known := map[int]map[claimKey]bool{} // claims of each device that may have been recorded
	for _, hs := range h.handshakes {
		if known[hs.dev] == nil {
			known[hs.dev] = map[claimKey]bool{}
		}
		if hs.status == 101 || hs.answerLost() {
			known[hs.dev][hs.claim] = true
		}
		if hs.status == 101 {
			accepted[hs.dev] = append(accepted[hs.dev], hs)
		}
	}
	for _, p := range h.polls {
		for d, r := range p.rows {
			if r.floorVersion > 0 {
				if known[d] == nil {
					known[d] = map[claimKey]bool{}
				}
				known[d][r.floor] = true
			}
		}
	}
	for d, list := range accepted {
		slices.SortFunc(list, func(a, b hsRecord) int { return int(a.version - b.version) })
		for i := 1; i < len(list); i++ {
			if list[i].version == list[i-1].version || !list[i-1].claim.less(list[i].claim) {
				add("V2", "device %d: claim %v got v%d after claim %v got v%d", d, list[i].claim, list[i].version, list[i-1].claim, list[i-1].version)
			}
		}
	}
	for _, hs := range h.handshakes {
		switch hs.status {
		case 101:
			// Floors only grow: the last poll that ended before the send
			// holds the highest floor it could have met.
			if i := sort.Search(len(h.polls), func(i int) bool { return h.polls[i].end >= hs.sent }); i > 0 {
				if r := h.polls[i-1].rows[hs.dev]; r.floorVersion > 0 && !r.floor.less(hs.claim) {
					add("V2", "device %d: claim %v accepted (v%d) though the floor was %v before it was sent", hs.dev, hs.claim, hs.version, r.floor)
				}
			}
		case 409:
			switch {
			case !hs.citedOK:
				add("V2", "device %d: 409 for claim %v cites no recorded claim", hs.dev, hs.claim)
			case hs.cited.less(hs.claim):
				add("V2", "device %d: claim %v refused by an older recorded claim %v", hs.dev, hs.claim, hs.cited)
			case !known[hs.dev][hs.cited]:
				add("V2", "device %d: claim %v refused citing %v, which no handshake or poll shows", hs.dev, hs.claim, hs.cited)
			}
		}
	}

	// V3: a killed gateway's routes are gone within b.reclaim; so are a
	// paused one's, if another gateway was there to sweep them.
	for _, pr := range h.procs {
		if !pr.killed || pr.incarnation == "" {
			continue
		}
		st.reclaimChecks++
		gone := time.Duration(-1)
		for _, p := range h.polls {
			if p.start < pr.killedAt {
				continue
			}
			held := 0
			for _, r := range p.rows {
				if r.conn != "" && incarnationOf(r.conn) == pr.incarnation {
					held++
				}
			}
			if held == 0 {
				gone = p.end - pr.killedAt
				break
			}
			if p.start-pr.killedAt > b.reclaim {
				add("V3", "%s killed at %v still holds %d routes at %v (bound %v)", pr.id, pr.killedAt, held, p.start, b.reclaim)
				break
			}
		}
		st.worstReclaim = max(st.worstReclaim, gone)
	}
	for _, f := range h.faults {
		if f.kind != "pause" || f.end-f.start <= b.reclaim {
			continue
		}
		sweeper := false
		for gw := range h.gateways {
			if gw != f.gw && !h.faulted(gw, f.start-2*b.lease, f.start+b.reclaim) {
				sweeper = true
			}
		}
		if !sweeper {
			continue
		}
		st.reclaimChecks++
		for _, p := range h.polls {
			if p.start < f.start+b.reclaim || p.end > f.end {
				continue
			}
			for d, r := range p.rows {
				if r.gateway == h.gateways[f.gw] {
					add("V3", "%s paused %v-%v still holds device %d's route at %v (bound %v)", h.gateways[f.gw], f.start, f.end, d, p.start, b.reclaim)
					break
				}
			}
			break
		}
	}

	// V4: in every window of every process, tokens <= burst + rate * T;
	// and a 429 writes nothing (its claim never shows as a floor unless
	// another handshake may have recorded it).
	for _, pr := range h.procs {
		best := 0.0 // max over j <= i of rate*t_j - j
		for i, t := range pr.tokens {
			st.windowChecks++
			if v := b.rate*t/1000 - float64(i); i == 0 || v > best {
				best = v
			}
			if excess := float64(i+1) - b.rate*t/1000 + best - b.burst; excess > 1e-6 {
				add("V4", "%s (%s): %.0f admission tokens more than burst + rate*T in a window ending at %.0f ms", pr.id, pr.incarnation, excess, t)
				break
			}
		}
	}
	type devClaim struct {
		dev   int
		claim claimKey
	}
	mayHaveRecorded := map[devClaim]bool{}
	for _, o := range h.handshakes {
		if o.status == 101 || o.answerLost() {
			mayHaveRecorded[devClaim{o.dev, o.claim}] = true
		}
	}
	for _, hs := range h.handshakes {
		if hs.status != 429 || mayHaveRecorded[devClaim{hs.dev, hs.claim}] {
			continue
		}
		for _, p := range h.polls {
			if r := p.rows[hs.dev]; r.floorVersion > 0 && r.floor == hs.claim {
				add("V4", "device %d: claim %v answered 429 shows as the floor at %v", hs.dev, hs.claim, p.start)
				break
			}
		}
	}

	// V5: every sync the clients made got what they missed.
	for _, e := range h.syncErrors {
		add("V5", "%s", e)
	}
	if h.finalSync.short > 0 {
		add("V5", "%d of %d devices did not reach the final head %d", h.finalSync.short, h.finalSync.checked, h.finalSync.head)
	}

	// V6: a drain exits 0 owning no routes; its sessions get goaway and
	// 1001 (or were replaced or closed by their client meanwhile); it
	// admits nothing sent after it began.
	for _, pr := range h.procs {
		d := pr.drain
		if d == nil {
			continue
		}
		st.drainChecks++
		if d.exitCode != 0 {
			add("V6", "%s drained with exit code %d", pr.id, d.exitCode)
		}
		if !d.routesChecked || d.routesAfter != 0 {
			add("V6", "%s exited holding %d routes (checked %v)", pr.id, d.routesAfter, d.routesChecked)
		}
		if pr.incarnation == "" {
			continue
		}
		for _, s := range h.sessions {
			if incarnationOf(s.conn) != pr.incarnation || (s.closed >= 0 && s.closed < d.signalled) || s.byClient {
				continue
			}
			if !(s.code == 1001 && s.goaway) && s.code != 4001 {
				add("V6", "%s's drain closed device %d's session %s with %d (goaway %v), want goaway then 1001", pr.id, s.dev, s.conn, s.code, s.goaway)
			}
		}
		for _, hs := range h.handshakes {
			if hs.status == 101 && incarnationOf(hs.conn) == pr.incarnation && hs.sentWall.After(d.startWall.Add(b.drainSlack)) {
				add("V6", "%s admitted device %d (%s) %v after its drain began", pr.id, hs.dev, hs.conn, hs.sentWall.Sub(d.startWall))
			}
		}
	}
	return out, st
}

// deviceCount is the number of devices the polls cover.
func (h *history) deviceCount() int {
	if len(h.polls) == 0 {
		return 0
	}
	return len(h.polls[0].rows)
}

// TestHistoryChecks: a small history that keeps every invariant passes,
// and each edit that breaks one is caught as that invariant's violation
// (an excused one is not).
func TestHistoryChecks(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	bounds := historyBounds{lease: ms(1500), period: ms(500), session: ms(3500), reclaim: ms(3000), rate: 10, burst: 5, drainSlack: ms(100)}
	wall := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	base := func() *history {
		h := &history{gateways: []string{"gw-a", "gw-b"}, end: ms(10_000)}
		for d, gw := range []int{0, 1} {
			conn := fmt.Sprintf("c-%d-1", gw)
			h.handshakes = append(h.handshakes, hsRecord{dev: d, gw: gw, claim: claimKey{0, 1}, sent: ms(100), answered: ms(200),
				sentWall: wall.Add(ms(100)), status: 101, conn: conn, version: 1})
			h.sessions = append(h.sessions, sessRecord{hs: d, dev: d, gw: gw, conn: conn, claim: claimKey{0, 1}, opened: ms(200), closed: -1, code: -1})
		}
		for at := 300; at < 10_000; at += 200 {
			h.polls = append(h.polls, poll{start: ms(at), end: ms(at + 20), rows: []pollRow{
				{floor: claimKey{0, 1}, floorVersion: 1, conn: "c-0-1", gateway: "gw-a", version: 1},
				{floor: claimKey{0, 1}, floorVersion: 1, conn: "c-1-1", gateway: "gw-b", version: 1},
			}})
		}
		h.procs = []procRecord{{gw: 0, id: "gw-a", incarnation: "c-0", tokens: []float64{150}}, {gw: 1, id: "gw-b", incarnation: "c-1", tokens: []float64{150}}}
		return h
	}
	// from edits device d's rows in every poll from at ms on.
	from := func(h *history, d, at int, edit func(*pollRow)) {
		for i := range h.polls {
			if h.polls[i].start >= ms(at) {
				edit(&h.polls[i].rows[d])
			}
		}
	}
	// newer adds device 0's claim (0, 5) on gw-b at at ms, accepted as v2.
	newer := func(h *history, at int) {
		h.handshakes = append(h.handshakes, hsRecord{dev: 0, gw: 1, claim: claimKey{0, 5}, sent: ms(at - 50), answered: ms(at),
			sentWall: wall.Add(ms(at - 50)), status: 101, conn: "c-1-2", version: 2})
		h.sessions = append(h.sessions, sessRecord{hs: len(h.handshakes) - 1, dev: 0, gw: 1, conn: "c-1-2", claim: claimKey{0, 5},
			opened: ms(at), closed: -1, code: -1})
		from(h, 0, at, func(r *pollRow) {
			*r = pollRow{floor: claimKey{0, 5}, floorVersion: 2, conn: "c-1-2", gateway: "gw-b", version: 2}
		})
	}
	cases := []struct {
		name string
		edit func(h *history)
		want string // the invariant broken; "" for none
	}{
		{"the history as it is", func(*history) {}, ""},
		{"a replaced session closed at once", func(h *history) { newer(h, 2000); h.sessions[0].closed, h.sessions[0].code = ms(2100), 4001 }, ""},
		{"a replaced session left open", func(h *history) { newer(h, 2000) }, "V1"},
		{"a replaced session open through its gateway's fault", func(h *history) {
			newer(h, 2000)
			h.faults = append(h.faults, faultRecord{gw: 0, kind: "cut", start: ms(1500), end: ms(9000)})
		}, ""},
		{"a session without its route", func(h *history) { from(h, 0, 3000, func(r *pollRow) { r.conn, r.gateway = "", "" }) }, "V1"},
		{"a session without its route while its gateway lapsed", func(h *history) {
			from(h, 0, 3000, func(r *pollRow) { r.conn, r.gateway = "", "" })
			from(h, 0, 8000, func(r *pollRow) { r.conn, r.gateway = "c-0-1", "gw-a" })
			h.lapses = append(h.lapses, faultRecord{gw: 0, kind: "lapse", start: ms(2500), end: ms(7000)})
		}, ""},
		{"a lapse never regained", func(h *history) {
			h.lapses = append(h.lapses, faultRecord{gw: 0, kind: "lapse", start: ms(2500), end: -1})
		}, "V1"},
		{"a route's version goes back", func(h *history) {
			from(h, 0, 2000, func(r *pollRow) { r.version, r.floorVersion = 3, 3 })
			from(h, 0, 4000, func(r *pollRow) { r.version = 2 })
		}, "V1"},
		{"a route nobody holds at rest", func(h *history) {
			h.sessions[1].closed, h.sessions[1].byClient = ms(1000), true
		}, "V1"},
		{"a floor goes back", func(h *history) { from(h, 1, 5000, func(r *pollRow) { r.floor = claimKey{0, 0} }) }, "V2"},
		{"a route under another claim's floor", func(h *history) { from(h, 1, 5000, func(r *pollRow) { r.floor = claimKey{0, 2} }) }, "V2"},
		{"a late old claim accepted", func(h *history) {
			newer(h, 2000)
			h.sessions[0].closed = ms(2100)
			h.handshakes = append(h.handshakes, hsRecord{dev: 0, gw: 0, claim: claimKey{0, 3}, sent: ms(3000), answered: ms(3100),
				sentWall: wall.Add(ms(3000)), status: 101, conn: "c-0-2", version: 3})
		}, "V2"},
		{"a 409 citing an older claim", func(h *history) {
			h.handshakes = append(h.handshakes, hsRecord{dev: 1, gw: 0, claim: claimKey{0, 2}, sent: ms(3000), answered: ms(3100),
				status: 409, cited: claimKey{0, 1}, citedOK: true})
		}, "V2"},
		{"a 409 citing nothing", func(h *history) {
			h.handshakes = append(h.handshakes, hsRecord{dev: 1, gw: 0, claim: claimKey{0, 1}, sent: ms(3000), answered: ms(3100), status: 409})
		}, "V2"},
		{"a 409 citing a claim nobody made", func(h *history) {
			h.handshakes = append(h.handshakes, hsRecord{dev: 1, gw: 0, claim: claimKey{0, 1}, sent: ms(3000), answered: ms(3100),
				status: 409, cited: claimKey{7, 7}, citedOK: true})
		}, "V2"},
		{"a 409 citing the recorded claim", func(h *history) {
			h.handshakes = append(h.handshakes, hsRecord{dev: 1, gw: 0, claim: claimKey{0, 1}, sent: ms(3000), answered: ms(3100),
				status: 409, cited: claimKey{0, 1}, citedOK: true})
		}, ""},
		{"a killed gateway's routes reclaimed in time", func(h *history) {
			h.procs[1].killed, h.procs[1].killedAt = true, ms(2000)
			h.sessions[1].closed = ms(2000)
			from(h, 1, 4500, func(r *pollRow) { r.conn, r.gateway = "", "" })
		}, ""},
		{"a killed gateway's routes kept past the bound", func(h *history) {
			h.procs[1].killed, h.procs[1].killedAt = true, ms(2000)
			h.sessions[1].closed = ms(2000)
			from(h, 1, 5500, func(r *pollRow) { r.conn, r.gateway = "", "" })
		}, "V3"},
		{"a long-paused gateway's routes kept", func(h *history) {
			h.faults = append(h.faults, faultRecord{gw: 1, kind: "pause", start: ms(4000), end: ms(9000)})
		}, "V3"},
		{"more tokens than the bucket holds", func(h *history) { h.procs[0].tokens = []float64{100, 101, 102, 103, 104, 105} }, "V4"},
		{"the bucket's own pace", func(h *history) { h.procs[0].tokens = []float64{100, 101, 102, 103, 104, 200, 300, 400} }, ""},
		{"a 429 that wrote its claim", func(h *history) {
			h.handshakes = append(h.handshakes, hsRecord{dev: 1, gw: 0, claim: claimKey{0, 4}, sent: ms(3000), answered: ms(3100), status: 429})
			from(h, 1, 3200, func(r *pollRow) { r.floor, r.floorVersion, r.conn, r.gateway = claimKey{0, 4}, 2, "", "" })
			h.sessions[1].closed, h.sessions[1].code = ms(3300), 4001
		}, "V4"},
		{"a sync that missed events", func(h *history) { h.syncErrors = append(h.syncErrors, "device 1: sync after 3: ...") }, "V5"},
		{"a device short of the final head", func(h *history) { h.finalSync.checked, h.finalSync.short = 2, 1 }, "V5"},
		{"a clean drain", func(h *history) { drained(h, 0, 4000, wall, 1001, true) }, ""},
		{"a drain that exits 1", func(h *history) { drained(h, 0, 4000, wall, 1001, true); h.procs[0].drain.exitCode = 1 }, "V6"},
		{"a drain that leaves routes", func(h *history) { drained(h, 0, 4000, wall, 1001, true); h.procs[0].drain.routesAfter = 1 }, "V6"},
		{"a drain without goaway", func(h *history) { drained(h, 0, 4000, wall, 1001, false) }, "V6"},
		{"a drain closing with 4003", func(h *history) { drained(h, 0, 4000, wall, 4003, false) }, "V6"},
		{"a drain admitting", func(h *history) {
			drained(h, 0, 4000, wall, 1001, true)
			h.handshakes = append(h.handshakes, hsRecord{dev: 1, gw: 0, claim: claimKey{0, 9}, sent: ms(4300), answered: ms(4400),
				sentWall: wall.Add(ms(4300)), status: 101, conn: "c-0-9", version: 2})
		}, "V6"},
	}
	// Edits that break a second invariant with the first.
	also := map[string]string{"a route under another claim's floor": "V1"} // its session is superseded too
	for _, c := range cases {
		h := base()
		c.edit(h)
		v, _ := checkHistory(h, bounds)
		var got []string
		for _, x := range v {
			got = append(got, x.inv)
		}
		switch {
		case c.want == "" && len(v) > 0:
			t.Errorf("%s: violations %v, want none", c.name, v)
		case c.want != "" && (!slices.Contains(got, c.want) || slices.ContainsFunc(got, func(s string) bool { return s != c.want && s != also[c.name] })):
			t.Errorf("%s: violations %v, want %s only", c.name, v, c.want)
		}
	}
}

// drained makes gw-a's process drain at at ms: its session closes with
// code (and goaway, if said) 50 ms later and its route goes with it.
func drained(h *history, gw, at int, wall time.Time, code int, goaway bool) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	h.procs[gw].drain = &drainRecord{signalled: ms(at), startWall: wall.Add(ms(at + 10)), routesChecked: true}
	h.faults = append(h.faults, faultRecord{gw: gw, kind: "drain", start: ms(at), end: ms(at + 500)})
	s := &h.sessions[gw]
	s.closed, s.code, s.goaway = ms(at+50), code, goaway
	for i := range h.polls {
		if h.polls[i].start >= ms(at+50) {
			h.polls[i].rows[s.dev].conn, h.polls[i].rows[s.dev].gateway = "", ""
		}
	}
}

// TestSyncProblem: an answer to a sync is every event after the cursor up
// to head, in order; anything else is named.
func TestSyncProblem(t *testing.T) {
	evs := func(seqs ...int64) []protocol.Event {
		var out []protocol.Event
		for _, s := range seqs {
			out = append(out, protocol.Event{Seq: s})
		}
		return out
	}
	cases := []struct {
		name  string
		after int64
		ev    protocol.Events
		ok    bool
	}{
		{"all it missed", 3, protocol.Events{Events: evs(4, 5, 6), Head: 6}, true},
		{"a first page", 3, protocol.Events{Events: evs(4, 5), Head: 9}, true},
		{"nothing missed", 6, protocol.Events{Head: 6}, true},
		{"nothing though head moved", 3, protocol.Events{Head: 6}, false},
		{"the first one missing", 3, protocol.Events{Events: evs(5, 6), Head: 6}, false},
		{"a gap", 3, protocol.Events{Events: evs(4, 6), Head: 6}, false},
		{"past head", 3, protocol.Events{Events: evs(4, 5), Head: 4}, false},
		{"head below the cursor", 7, protocol.Events{Head: 6}, false},
		{"not asked for", -1, protocol.Events{Head: 6}, false},
	}
	for _, c := range cases {
		if got := syncProblem(c.after, c.ev); (got == "") != c.ok {
			t.Errorf("%s: syncProblem = %q, want ok %v", c.name, got, c.ok)
		}
	}
}
