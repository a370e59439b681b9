package store_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"stormsim/gateway/store"
	"stormsim/internal/pgtest"
)

func TestParseKick(t *testing.T) {
	cases := []struct {
		payload string
		want    store.Kick
		ok      bool
	}{
		{"gw-a|c-1|u-000-d1|7", store.Kick{"gw-a", "c-1", "u-000-d1", 7}, true},
		{"gw-a|c-1|odd|device|12", store.Kick{"gw-a", "c-1", "odd|device", 12}, true},
		{"gw-a|c-1|u-000-d1", store.Kick{}, false},
		{"gw-a|c-1||", store.Kick{}, false},
		{"gw-a|c-1|d|x", store.Kick{}, false},
		{"", store.Kick{}, false},
	}
	for _, c := range cases {
		got, err := store.ParseKick(c.payload)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseKick(%q) = %+v, %v; want %+v ok=%v", c.payload, got, err, c.want, c.ok)
		}
		if c.ok && got.Payload() != c.payload {
			t.Errorf("round trip %q -> %q", c.payload, got.Payload())
		}
	}
}

func TestMigrateIsIdempotentAndConcurrent(t *testing.T) {
	schema := pgtest.Schema(t)
	s := pgtest.Open(t, schema, "migrate")
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if err := s.Migrate(ctxT(t)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

func TestDevicesAndAuthenticate(t *testing.T) {
	s := pgtest.Open(t, pgtest.Schema(t), "devices")
	ctx := ctxT(t)
	if n, err := s.ProvisionDevices(ctx, 3); err != nil || n != 3 {
		t.Fatalf("first provision: %d %v", n, err)
	}
	if n, err := s.ProvisionDevices(ctx, 5); err != nil || n != 2 {
		t.Fatalf("second provision inserted %d (want 2) %v", n, err)
	}
	cases := []struct {
		device, token string
		ok            bool
	}{
		{"u-000-d1", "tok-u-000-d1", true},
		{"u-004-d1", "tok-u-004-d1", true},
		{"u-004-d1", "tok-u-000-d1", false},
		{"u-005-d1", "tok-u-005-d1", false},
		{"u-000-d1", "", false},
	}
	for _, c := range cases {
		if ok, err := s.Authenticate(ctx, c.device, c.token); err != nil || ok != c.ok {
			t.Errorf("Authenticate(%s, %s) = %v %v, want %v", c.device, c.token, ok, err, c.ok)
		}
	}
	if store.DeviceID(7) != "u-007-d1" || store.DeviceID(1234) != "u-1234-d1" {
		t.Errorf("DeviceID naming: %s %s", store.DeviceID(7), store.DeviceID(1234))
	}
}

// TestSweepDeletesOnlyExpiredOthers: gw-dead's lease ended, gw-live's did
// not, and the sweeper's own expired lease never makes it sweep itself.
func TestSweepDeletesOnlyExpiredOthers(t *testing.T) {
	s := pgtest.Open(t, pgtest.Schema(t), "sweep")
	ctx := ctxT(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	acquire := func(gw string) {
		t.Helper()
		held, err := s.AcquireLease(ctx, gw, "owner-"+gw, time.Minute)
		must(err)
		if held {
			t.Fatalf("%s: fresh lease reported held", gw)
		}
	}
	acquire("gw-live")
	acquire("gw-dead")
	must(s.ExpireLease(ctx, "gw-dead", "owner-gw-dead"))
	acquire("gw-self")
	must(s.ExpireLease(ctx, "gw-self", "owner-gw-self"))
	owners := map[string]int{"gw-live": 2, "gw-dead": 3, "gw-self": 1}
	i := 0
	for gw, n := range owners {
		for range n {
			i++
			_, err := s.ClaimRoute(ctx, store.Claim{Device: store.DeviceID(i), Gateway: gw, Conn: gw + "-c", Attempt: 1})
			must(err)
		}
	}
	got, err := s.Sweep(ctx, "gw-self")
	must(err)
	if len(got) != 1 || got[0] != (store.Reclaimed{Gateway: "gw-dead", Routes: 3}) {
		t.Fatalf("sweep = %+v, want gw-dead: 3", got)
	}
	for gw, want := range map[string]int64{"gw-live": 2, "gw-dead": 0, "gw-self": 1} {
		if n, _ := s.RouteCount(ctx, gw); n != want {
			t.Errorf("%s has %d routes, want %d", gw, n, want)
		}
	}
	if got, _ := s.Sweep(ctx, "gw-self"); len(got) != 0 {
		t.Errorf("second sweep reclaimed %+v", got)
	}
	if n, err := s.ReleaseGateway(ctx, "gw-live"); err != nil || n != 2 {
		t.Errorf("ReleaseGateway = %d %v, want 2", n, err)
	}
}

// TestKickIsNotifiedOnlyOnCommittedTakeover: a takeover notifies the
// previous owner; a refused claim and a first claim notify nobody.
func TestKickIsNotifiedOnlyOnCommittedTakeover(t *testing.T) {
	s := pgtest.Open(t, pgtest.Schema(t), "kick")
	ctx, cancel := context.WithCancel(ctxT(t))
	kicks := make(chan store.Kick, 10)
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- s.ListenKicks(ctx, func() { close(ready) }, func(k store.Kick) { kicks <- k }) }()
	<-ready
	claims := []store.Claim{
		{Device: "d", Gateway: "gw-a", Conn: "a1", Attempt: 1}, // first: nobody to kick
		{Device: "d", Gateway: "gw-b", Conn: "b1", Attempt: 1}, // refused
		{Device: "d", Gateway: "gw-b", Conn: "b2", Attempt: 2}, // kicks a1
	}
	for _, c := range claims {
		if _, err := s.ClaimRoute(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case k := <-kicks:
		if k != (store.Kick{Gateway: "gw-a", Conn: "a1", Device: "d", Version: 2}) {
			t.Fatalf("kick %+v", k)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no kick")
	}
	select {
	case k := <-kicks:
		t.Fatalf("unexpected second kick %+v", k)
	case <-time.After(200 * time.Millisecond):
	}
	cancel()
	<-done
}

// TestEventsAppendAndSync: appends get consecutive seqs, concurrent ones
// included; a page stops at its event count or once the bodies before an
// event reach its byte budget (the first event always comes); only members
// read a conversation, and a non-member cannot tell whether it exists.
func TestEventsAppendAndSync(t *testing.T) {
	s := pgtest.Open(t, pgtest.Schema(t), "events")
	ctx := ctxT(t)
	if head, err := s.AppendEvents(ctx, "c1", []string{"a", "bb", "ccc"}); err != nil || head != 3 {
		t.Fatalf("append: %d %v", head, err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, err := s.AppendEvents(ctx, "c1", []string{"x", "y"}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n, err := s.Join(ctx, "c1", []string{"member", "member", "other"}); err != nil || n != 2 {
		t.Fatalf("join: %d %v, want 2 new memberships", n, err)
	}
	if n, err := s.Join(ctx, "empty", []string{"member"}); err != nil || n != 1 {
		t.Fatalf("join empty: %d %v", n, err)
	}
	// Body lengths by seq: 1, 2, 3, then eight 1-byte bodies (seq 4-11).
	cases := []struct {
		name  string
		after int64
		page  store.Page
		seqs  []int64
		head  int64
	}{
		{"everything", 0, store.Page{Events: 100, Bytes: 1 << 20}, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 11},
		{"after a cursor", 9, store.Page{Events: 100, Bytes: 1 << 20}, []int64{10, 11}, 11},
		{"at head", 11, store.Page{Events: 100, Bytes: 1 << 20}, nil, 11},
		{"event limit", 0, store.Page{Events: 2, Bytes: 1 << 20}, []int64{1, 2}, 11},
		{"bytes: 1+2 = 3 before seq 3 reaches 3", 0, store.Page{Events: 100, Bytes: 3}, []int64{1, 2}, 11},
		{"bytes: 3 before seq 3 is under 4", 0, store.Page{Events: 100, Bytes: 4}, []int64{1, 2, 3}, 11},
		{"bytes: the first event always comes", 2, store.Page{Events: 100, Bytes: 1}, []int64{3}, 11},
	}
	for _, c := range cases {
		ev, head, err := s.EventsAfter(ctx, "member", "c1", c.after, c.page)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var seqs []int64
		for _, e := range ev {
			seqs = append(seqs, e.Seq)
		}
		if head != c.head || !slices.Equal(seqs, c.seqs) {
			t.Errorf("%s: seqs %v head %d, want %v %d", c.name, seqs, head, c.seqs, c.head)
		}
	}
	ev, head, err := s.EventsAfter(ctx, "member", "empty", 0, store.Page{Events: 10, Bytes: 100})
	if err != nil || head != 0 || len(ev) != 0 || ev == nil {
		t.Errorf("empty conversation: %v %d %v (want a non-nil empty list for JSON [])", ev, head, err)
	}
	for _, c := range []struct{ device, conv string }{{"stranger", "c1"}, {"other", "empty"}, {"member", "missing"}} {
		if ev, head, err := s.EventsAfter(ctx, c.device, c.conv, 0, store.Page{Events: 10, Bytes: 100}); !errors.Is(err, store.ErrNotMember) || ev != nil || head != 0 {
			t.Errorf("%s reading %s: %v %d %v, want ErrNotMember and nothing else", c.device, c.conv, ev, head, err)
		}
	}
}

// TestLeaseOwnership: a live lease belongs to its owner; another owner gets
// it only once it has expired, and the previous owner can then no longer
// renew or expire it.
func TestLeaseOwnership(t *testing.T) {
	s := pgtest.Open(t, pgtest.Schema(t), "lease-owner")
	ctx := ctxT(t)
	steps := []struct {
		name   string
		owner  string
		lease  time.Duration
		expire bool
		held   bool
	}{
		{"first owner takes a free id", "a", time.Minute, false, false},
		{"first owner renews", "a", time.Minute, false, false},
		{"second owner is refused a live lease", "b", time.Minute, false, true},
		{"second owner cannot expire it", "b", 0, true, false},
		{"so it is still refused", "b", time.Minute, false, true},
		{"first owner lets it lapse", "a", time.Millisecond, false, false},
		{"second owner takes the lapsed lease", "b", time.Minute, false, false},
		{"first owner is now refused", "a", time.Minute, false, true},
	}
	for _, st := range steps {
		if st.expire {
			if err := s.ExpireLease(ctx, "gw", st.owner); err != nil {
				t.Fatal(err)
			}
			continue
		}
		time.Sleep(5 * time.Millisecond) // lets a 1ms lease lapse
		held, err := s.AcquireLease(ctx, "gw", st.owner, st.lease)
		if err != nil || held != st.held {
			t.Errorf("%s: held=%v err=%v, want held=%v", st.name, held, err, st.held)
		}
	}
}

// TestReleaseRoutesOnlyTheNamedConnections: a listed route goes only while
// the listed connection holds it.
func TestReleaseRoutesOnlyTheNamedConnections(t *testing.T) {
	s := pgtest.Open(t, pgtest.Schema(t), "release-routes")
	ctx := ctxT(t)
	for i, c := range []store.Claim{
		{Device: "d1", Gateway: "gw", Conn: "c1", Attempt: 1},
		{Device: "d2", Gateway: "gw", Conn: "c2", Attempt: 1},
		{Device: "d3", Gateway: "other", Conn: "c3", Attempt: 1},
	} {
		if _, err := s.ClaimRoute(ctx, c); err != nil {
			t.Fatalf("claim %d: %v", i, err)
		}
	}
	got, err := s.RoutesOf(ctx, "gw")
	slices.SortFunc(got, func(a, b store.RouteKey) int { return strings.Compare(a.Device, b.Device) })
	if err != nil || !slices.Equal(got, []store.RouteKey{{Device: "d1", Conn: "c1"}, {Device: "d2", Conn: "c2"}}) {
		t.Fatalf("RoutesOf = %v %v", got, err)
	}
	n, err := s.ReleaseRoutes(ctx, []store.RouteKey{{Device: "d1", Conn: "c1"}, {Device: "d2", Conn: "stale"}, {Device: "d3", Conn: "c3"}})
	if err != nil || n != 2 {
		t.Fatalf("ReleaseRoutes = %d %v, want 2", n, err)
	}
	for dev, want := range map[string]string{"d1": "", "d2": "c2", "d3": ""} {
		if o, _ := s.Route(ctx, dev); o.Conn != want {
			t.Errorf("%s: route %+v, want conn %q", dev, o, want)
		}
	}
}

// TestResetFloorLetsAnyClaimIn: after a reset the device's next claim is
// accepted whatever its (epoch, attempt), and versions keep growing.
func TestResetFloorLetsAnyClaimIn(t *testing.T) {
	s := pgtest.Open(t, pgtest.Schema(t), "reset-floor")
	ctx := ctxT(t)
	const top = 1<<31 - 1
	if _, err := s.ClaimRoute(ctx, store.Claim{Device: "d", Gateway: "gw", Conn: "c1", Epoch: top, Attempt: top}); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.ClaimRoute(ctx, store.Claim{Device: "d", Gateway: "gw", Conn: "c2", Epoch: top, Attempt: top}); r.Accepted {
		t.Fatal("claim at the maximum accepted twice")
	}
	if found, err := s.ResetFloor(ctx, "d"); err != nil || !found {
		t.Fatalf("ResetFloor = %v %v", found, err)
	}
	r, err := s.ClaimRoute(ctx, store.Claim{Device: "d", Gateway: "gw", Conn: "c3", Epoch: 0, Attempt: 0})
	if err != nil || !r.Accepted || r.Version != 2 {
		t.Errorf("claim after reset: %+v %v, want accepted at version 2", r, err)
	}
	if found, _ := s.ResetFloor(ctx, "never-claimed"); found {
		t.Error("ResetFloor found a floor for a device that never claimed")
	}
}

func TestCheckSchema(t *testing.T) {
	cases := []struct {
		name string
		ok   bool
	}{
		{"", true},
		{"lab", true},
		{"t_test_1", true},
		{"public", false},
		{"information_schema", false},
		{"pg_catalog", false},
		{"pg_lab", false},
		{"Lab", false},
		{"1lab", false},
		{strings.Repeat("a", 56), false},
	}
	for _, c := range cases {
		if err := store.CheckSchema(c.name); (err == nil) != c.ok {
			t.Errorf("CheckSchema(%q) = %v, want ok=%v", c.name, err, c.ok)
		}
	}
}
