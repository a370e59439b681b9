package lab

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"stormsim/calibrate/measured"
	"stormsim/gateway/client"
	"stormsim/gateway/logline"
)

var origin = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func at(ms float64) time.Time { return origin.Add(time.Duration(ms * float64(time.Millisecond))) }

// TestDecisionSeries: the gateway's clock started 1000 ms before origin
// (token_ms 1000 = origin). Admissions at token_ms 1010 and 1300 (logged
// 0.2 ms and 40 ms later) fall in windows 0 and 1 of 250 ms; rejections
// logged at 100 and 260 ms in windows 0 and 1; a line before origin is not
// counted.
func TestDecisionSeries(t *testing.T) {
	adm := func(tokenMs, logDelayMs float64) logLine {
		return logLine{Msg: logline.Admitted, Time: at(tokenMs - 1000 + logDelayMs),
			Fields: map[string]any{logline.KeyTokenMs: tokenMs, logline.KeyDevice: "d", logline.KeyAttempt: 1.0}}
	}
	rej := func(ms float64) logLine {
		return logLine{Msg: logline.Rejected, Time: at(ms), Fields: map[string]any{logline.KeyStatus: 429.0, logline.KeyDevice: "d"}}
	}
	lines := []logLine{adm(1010, 0.2), adm(1300, 40), rej(100), rej(260), rej(-5), {Msg: "closed", Time: at(10)}}
	d, err := decisionsOf(lines, origin, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := d.series(250*time.Millisecond, 0)
	want := measured.Series{Attempts: []int64{2, 2}, Accepts: []int64{1, 1}, Rejects: []int64{1, 1},
		PeakAttemptsPerWindow: 2, PeakAcceptsPerWindow: 1, FirstWindowAttempts: 2, ClockSkewMs: 39.8}
	if s.ClockSkewMs < 39.79 || s.ClockSkewMs > 39.81 {
		t.Errorf("clock skew %v, want 39.8", s.ClockSkewMs)
	}
	s.ClockSkewMs = want.ClockSkewMs
	if !reflect.DeepEqual(s, want) {
		t.Errorf("series = %+v\nwant     %+v", s, want)
	}
	if _, err := decisionsOf([]logLine{rej(1)}, origin, nil); err == nil || !strings.Contains(err.Error(), "no admitted") {
		t.Errorf("err = %v, want no admitted lines", err)
	}
}

// TestDecisionsNeedTheContractsKeys: a line the contract says carries a
// key but does not is an error naming the key, not a decision at 0.
func TestDecisionsNeedTheContractsKeys(t *testing.T) {
	cases := []struct {
		name string
		line logLine
		key  string
	}{
		{"admitted without token_ms", logLine{Msg: logline.Admitted, Fields: map[string]any{logline.KeyDevice: "d", logline.KeyAttempt: 1.0}}, logline.KeyTokenMs},
		{"admitted without attempt", logLine{Msg: logline.Admitted, Fields: map[string]any{logline.KeyDevice: "d", logline.KeyTokenMs: 1.0}}, logline.KeyAttempt},
		{"rejected without status", logLine{Msg: logline.Rejected, Fields: map[string]any{logline.KeyDevice: "d"}}, logline.KeyStatus},
		{"429 without device", logLine{Msg: logline.Rejected, Fields: map[string]any{logline.KeyStatus: 429.0}}, logline.KeyDevice},
	}
	for _, c := range cases {
		if _, err := decisionsOf([]logLine{c.line}, origin, nil); err == nil || !strings.Contains(err.Error(), `"`+c.key+`"`) {
			t.Errorf("%s: err = %v, want one naming %q", c.name, err, c.key)
		}
	}
}

// TestDecisionsPlacedBySends: the gateway's clock started 1000 ms before
// origin; admissions at token_ms 1010 and 1240 log 300 and 280 ms later
// (a loaded gateway). By the log lines alone they would lie at 290 and
// 520 ms (windows 1 and 2); the clients sent them at 9.5 and 200 ms, so the
// clock started no earlier than 9.5 - 1010 = -1000.5 ms, which places them
// at 9.5 and 239.5 ms (window 0), 280.5 ms earlier.
func TestDecisionsPlacedBySends(t *testing.T) {
	adm := func(device string, tokenMs, logDelayMs float64) logLine {
		return logLine{Msg: logline.Admitted, Time: at(tokenMs - 1000 + logDelayMs),
			Fields: map[string]any{logline.KeyTokenMs: tokenMs, logline.KeyDevice: device, logline.KeyAttempt: 2.0}}
	}
	lines := []logLine{adm("u-000-d1", 1010, 300), adm("u-001-d1", 1240, 280)}
	sent := map[attemptKey]time.Time{{"u-000-d1", 2}: at(9.5), {"u-001-d1", 2}: at(200), {"u-001-d1", 1}: at(500)}
	d, err := decisionsOf(lines, origin, sent)
	if err != nil {
		t.Fatal(err)
	}
	s := d.series(250*time.Millisecond, 0)
	if !reflect.DeepEqual(s.Accepts, []int64{2}) || math.Abs(s.ClockSlackMs-280.5) > 1e-6 {
		t.Errorf("accepts %v, slack %v ms; want [2], 280.5", s.Accepts, s.ClockSlackMs)
	}
	want := []measured.Claim{{Device: "u-000-d1", Attempt: 2, DecidedMs: 9.5, DoneMs: 310}, {Device: "u-001-d1", Attempt: 2, DecidedMs: 239.5, DoneMs: 520}}
	for i, c := range d.claims {
		if c.Device != want[i].Device || c.Attempt != want[i].Attempt || math.Abs(c.DecidedMs-want[i].DecidedMs) > 1e-6 || math.Abs(c.DoneMs-want[i].DoneMs) > 1e-6 {
			t.Errorf("claim %d = %+v, want %+v", i, c, want[i])
		}
	}
	if d, _ := decisionsOf(lines, origin, nil); !reflect.DeepEqual(d.series(250*time.Millisecond, 0).Accepts, []int64{0, 1, 1}) {
		t.Errorf("without sends: accepts %v, want [0 1 1]", d.series(250*time.Millisecond, 0).Accepts)
	}
}

func TestPeakInWindow(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	cases := []struct {
		name  string
		times []time.Duration
		want  int64
	}{
		{"none", nil, 0},
		{"straddling an aligned boundary", ms(200, 240, 260, 300, 460), 4},
		{"half-open: t+window is outside", ms(0, 250), 1},
		{"burst", ms(5, 5, 5, 5), 4},
	}
	for _, c := range cases {
		if got := peakInWindow(c.times, 250*time.Millisecond); got != c.want {
			t.Errorf("%s: peak = %d, want %d", c.name, got, c.want)
		}
	}
}

// TestCrashHandshakes: the closed event belongs to the start round but
// counts as the notice (12 ms); sends are in ms from the origin; the
// retry, due at the 429's answer plus the 200 ms wait then chosen (247
// ms), was sent 3 ms late, and the first attempt, due at the notice plus
// the 30 ms wait drawn then (42 ms), 3 ms late too; a second drop round's
// first attempt, due at its start plus its wait (310 ms), 10 ms late,
// not against the previous answer; the start round's attempt is not the
// storm's.
func TestCrashHandshakes(t *testing.T) {
	events := []client.Event{
		{Kind: client.EventAttempt, Client: 0, RoundKind: client.RoundStart, Time: at(-500), Sent: at(-510), Answered: at(-500), Status: 101, Attempt: 1},
		{Kind: client.EventClosed, Client: 0, RoundKind: client.RoundStart, Time: at(12)},
		{Kind: client.EventRound, Client: 0, RoundKind: client.RoundDrop, Time: at(12), Wait: 30 * time.Millisecond},
		{Kind: client.EventAttempt, Client: 0, RoundKind: client.RoundDrop, Time: at(47), Sent: at(45), Answered: at(47), Status: 429, Attempt: 1, Wait: 200 * time.Millisecond},
		{Kind: client.EventAttempt, Client: 0, RoundKind: client.RoundDrop, Time: at(260), Sent: at(250), Answered: at(260), Status: 101, Attempt: 2},
		{Kind: client.EventRound, Client: 0, RoundKind: client.RoundDrop, Time: at(300), Wait: 10 * time.Millisecond},
		{Kind: client.EventAttempt, Client: 0, RoundKind: client.RoundDrop, Time: at(330), Sent: at(320), Answered: at(330), Status: 101, Attempt: 1},
	}
	hs, notice, late := crashHandshakes(events, origin)
	want := []measured.Handshake{{Attempt: 1, Status: 429, SentMs: 45, LatencyMs: 2}, {Attempt: 2, Status: 101, SentMs: 250, LatencyMs: 10, LagMs: 3},
		{Attempt: 1, Status: 101, SentMs: 320, LatencyMs: 10}}
	if !reflect.DeepEqual(hs, want) || !reflect.DeepEqual(notice, []float64{12}) || !reflect.DeepEqual(late, []float64{3, 10}) {
		t.Errorf("crashHandshakes = %+v, %v, %v\nwant             %+v, [12], [3 10]", hs, notice, late, want)
	}
}

// TestAttachDecisions: an admitted handshake's out leg is its claim's
// decision less its send (100 - 40 = 60 ms) and its time at the gateway
// the claim's (180 - 100 = 80 ms); a device's 429s pair with its rejected
// lines in time order whatever the order of the handshakes (30 - 10 = 20
// and 150 - 110 = 40 ms); a device with fewer lines than 429s, a 503 and
// an admission without a claim get none.
func TestAttachDecisions(t *testing.T) {
	d := gatewayDecisions{claims: []measured.Claim{{Device: "d1", Attempt: 3, DecidedMs: 100, DoneMs: 180}},
		rejectsMs: []float64{150, 30, 70}, rejectDevices: []string{"d2", "d2", "d3"}}
	hs := []measured.Handshake{
		{Device: "d1", DeviceAttempt: 3, Status: 101, SentMs: 40},
		{Device: "d2", DeviceAttempt: 2, Status: 429, SentMs: 110},
		{Device: "d2", DeviceAttempt: 1, Status: 429, SentMs: 10},
		{Device: "d3", DeviceAttempt: 1, Status: 429, SentMs: 20},
		{Device: "d3", DeviceAttempt: 2, Status: 429, SentMs: 60},
		{Device: "d4", DeviceAttempt: 1, Status: 503, SentMs: 5},
		{Device: "d5", DeviceAttempt: 1, Status: 101, SentMs: 5},
	}
	attachDecisions(hs, d)
	want := []float64{60, 40, 20, -1, -1, -1, -1} // -1: none
	for i, h := range hs {
		got := -1.0
		if h.OutMs != nil {
			got = *h.OutMs
		}
		if math.Abs(got-want[i]) > 1e-9 {
			t.Errorf("handshake %d (%s attempt %d): out %v ms, want %v", i, h.Device, h.DeviceAttempt, got, want[i])
		}
	}
	if g := hs[0].GatewayMs; g == nil || *g != 80 {
		t.Errorf("time at the gateway %v, want 80 ms", g)
	}
}

// TestGoawayLegsOfTheDrain: goaways written (goaway_sent lines) to
// devices a at 10 ms and b at 12.5 ms; their sessions end at 70 ms (b)
// and 40 ms (a), in that order, and c's, whose goaway has no line, at
// 80 ms: legs 57.5 and 30 ms, in the ends' order, c left out. From a
// SIGTERM at 4 ms the writes are at 6 and 8.5 ms. A goaway line without
// its device is an error.
func TestGoawayLegsOfTheDrain(t *testing.T) {
	sent := func(ms float64, device string) logLine {
		return logLine{Msg: logline.GoawaySent, Time: at(ms), Fields: map[string]any{logline.KeyDevice: device}}
	}
	end := func(ms float64, device string) client.Event {
		return client.Event{Kind: client.EventClosed, Time: at(ms), Device: device}
	}
	lines := []logLine{sent(10, "a"), {Msg: logline.Admitted, Time: at(11)}, sent(12.5, "b")}
	got, writes, err := goawayLegs(lines, []client.Event{end(70, "b"), end(40, "a"), end(80, "c")}, at(4))
	if err != nil || !reflect.DeepEqual(got, []float64{57.5, 30}) || !reflect.DeepEqual(writes, []float64{6, 8.5}) {
		t.Errorf("legs %v, writes %v (%v), want [57.5 30] and [6 8.5]", got, writes, err)
	}
	if _, _, err := goawayLegs([]logLine{{Msg: logline.GoawaySent, Time: at(1), Fields: map[string]any{}}}, nil, at(0)); err == nil || !strings.Contains(err.Error(), logline.KeyDevice) {
		t.Errorf("a goaway line without a device: %v, want an error naming %q", err, logline.KeyDevice)
	}
}

// TestDeployGoawayLegs: a deploy drains gw-0 (at a), which writes the
// goaways of x at 10 ms and y at 11 ms, then gw-1 (at b), which writes
// x's again at 500 ms, x having come back to b. The sessions end on a at
// 40 ms (x) and 61 ms (y), and on b at 530 ms (x): legs 30 and 50 ms for
// gw-0, 30 ms for gw-1. x's end on b is not gw-0's (520 ms), a close with
// no goaway before it (z's, a crash) is no drained session, and an end
// before the deploy's start (5 ms) is not counted.
func TestDeployGoawayLegs(t *testing.T) {
	sent := func(ms float64, device string) logLine {
		return logLine{Msg: logline.GoawaySent, Time: at(ms), Fields: map[string]any{logline.KeyDevice: device}}
	}
	proc := func(id, addr string, lines ...logLine) *gatewayProc {
		return &gatewayProc{spec: gatewaySpec{ID: id}, addr: addr, log: &logBook{lines: lines}}
	}
	ev := func(kind client.EventKind, ms float64, c int, device, addr string) client.Event {
		return client.Event{Kind: kind, Time: at(ms), Client: c, Device: device, Gateway: "ws://" + addr}
	}
	procs := []*gatewayProc{proc("gw-0", "a", sent(10, "x"), sent(11, "y")), proc("gw-1", "b", sent(500, "x"))}
	events := []client.Event{
		ev(client.EventGoaway, 4, 1, "y", "a"), ev(client.EventClosed, 5, 1, "y", "a"), // before the start
		ev(client.EventGoaway, 20, 0, "x", "a"), ev(client.EventGoaway, 21, 1, "y", "a"),
		ev(client.EventClosed, 40, 0, "x", "a"), ev(client.EventClosed, 45, 2, "z", "a"), ev(client.EventClosed, 61, 1, "y", "a"),
		ev(client.EventGoaway, 520, 0, "x", "b"), ev(client.EventClosed, 530, 0, "x", "b"),
	}
	got, err := deployGoawayLegs(procs, events, at(8))
	if err != nil || !reflect.DeepEqual(got, []float64{30, 50, 30}) {
		t.Errorf("legs %v (%v), want [30 50 30]", got, err)
	}
}

// TestBusyWaysOfTheDrain: drained sessions end at 40 ms (x), 50 ms (y)
// and 90 ms (z, the last end), the drain's origin at 4 ms. x sends its
// next attempt (its counter 7) at 44 ms, decided at 100 ms from the
// origin: a way of 100 - 40 = 60 ms. y sends at 60 ms but was not admitted
// (no claim): left out. z sends at 95 ms, after the last end: not busy.
// An attempt of x before its end (counter 6) is not its first after it,
// and w was never drained.
func TestBusyWaysOfTheDrain(t *testing.T) {
	end := func(ms float64, c int, device string) client.Event {
		return client.Event{Kind: client.EventClosed, Time: at(ms), Client: c, Device: device}
	}
	attempt := func(ms float64, c int, device string, counter int64) client.Event {
		return client.Event{Kind: client.EventAttempt, Time: at(ms + 5), Sent: at(ms), Client: c, Device: device, DeviceAttempt: counter}
	}
	closed := []client.Event{end(40, 0, "x"), end(50, 1, "y"), end(90, 2, "z")}
	events := []client.Event{attempt(10, 0, "x", 6), closed[0], attempt(44, 0, "x", 7), attempt(30, 3, "w", 1), closed[1],
		attempt(60, 1, "y", 2), closed[2], attempt(95, 2, "z", 4), attempt(120, 0, "x", 8)}
	claims := []measured.Claim{{Device: "x", Attempt: 6, DecidedMs: 9}, {Device: "x", Attempt: 7, DecidedMs: 100},
		{Device: "z", Attempt: 4, DecidedMs: 95}, {Device: "w", Attempt: 1, DecidedMs: 30}}
	if got := busyWays(closed, events, claims, at(4)); !reflect.DeepEqual(got, []float64{60}) {
		t.Errorf("busy ways %v, want [60]", got)
	}
	if got := busyWays(nil, events, claims, at(4)); got != nil {
		t.Errorf("no drained session: %v, want none", got)
	}
}

// TestGoneWays: with the origin at 4 ms, two clients' attempts sent at
// 10 and 20 ms with a timeout of 100 ms have their deadlines at 110 and
// 120 ms. The gateway dropped a's handshake at 121 ms (11 ms after its
// deadline) and b's at 114 ms (6 ms before: the two clocks read a little
// apart, counted as 0); c's, whose send the events lack, is left out.
// Without a timeout nothing is measured.
func TestGoneWays(t *testing.T) {
	sent := func(ms float64, device string, attempt int64) client.Event {
		return client.Event{Kind: client.EventAttempt, Sent: at(ms), Time: at(ms + 100), Device: device, DeviceAttempt: attempt}
	}
	events := []client.Event{sent(10, "a", 2), sent(20, "b", 3), sent(30, "b", 4)}
	dropped := []droppedHandshake{{attemptKey{"a", 2}, 121 - 4}, {attemptKey{"b", 3}, 114 - 4}, {attemptKey{"c", 2}, 200}}
	if got := goneWays(dropped, events, at(4), 100*time.Millisecond); !reflect.DeepEqual(got, []float64{11, 0}) {
		t.Errorf("ways %v, want [11 0]", got)
	}
	if got := goneWays(dropped, events, at(4), 0); got != nil {
		t.Errorf("without a timeout: %v, want none", got)
	}
}

// TestDecisionsKeepTheDrops: an abandoned line written at 50 ms (the
// origin at 10) is a decision at its token and a drop at 40 ms.
func TestDecisionsKeepTheDrops(t *testing.T) {
	line := logLine{Msg: logline.Abandoned, Time: at(50), Fields: map[string]any{logline.KeyDevice: "a", logline.KeyAttempt: 2.0, logline.KeyTokenMs: 25.0}}
	d, err := decisionsOf([]logLine{line}, at(10), nil)
	if err != nil || !reflect.DeepEqual(d.dropped, []droppedHandshake{{attemptKey{"a", 2}, 40}}) || len(d.abandonedMs) != 1 {
		t.Errorf("drops %+v, decisions %v (%v), want a at 40 ms and one decision", d.dropped, d.abandonedMs, err)
	}
}
