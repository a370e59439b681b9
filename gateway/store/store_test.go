package store_test

import (
	"context"
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
	must(s.RenewLease(ctx, "gw-live", time.Minute))
	must(s.RenewLease(ctx, "gw-dead", time.Minute))
	must(s.ExpireLease(ctx, "gw-dead"))
	must(s.RenewLease(ctx, "gw-self", time.Minute))
	must(s.ExpireLease(ctx, "gw-self"))
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

func TestEventsAppendAndSync(t *testing.T) {
	s := pgtest.Open(t, pgtest.Schema(t), "events")
	ctx := ctxT(t)
	if head, err := s.AppendEvents(ctx, "c1", []string{"a", "b", "c"}); err != nil || head != 3 {
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
	cases := []struct {
		after, limit int
		seqs         []int64
		head         int64
	}{
		{0, 100, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 11},
		{9, 100, []int64{10, 11}, 11},
		{11, 100, nil, 11},
		{0, 2, []int64{1, 2}, 11},
	}
	for _, c := range cases {
		ev, head, err := s.EventsAfter(ctx, "c1", int64(c.after), c.limit)
		if err != nil {
			t.Fatal(err)
		}
		var seqs []int64
		for _, e := range ev {
			seqs = append(seqs, e.Seq)
		}
		if head != c.head || len(seqs) != len(c.seqs) {
			t.Fatalf("after %d: seqs %v head %d, want %v %d", c.after, seqs, head, c.seqs, c.head)
		}
		for i := range seqs {
			if seqs[i] != c.seqs[i] {
				t.Fatalf("after %d: seqs %v, want %v", c.after, seqs, c.seqs)
			}
		}
	}
	ev, head, err := s.EventsAfter(ctx, "empty", 0, 10)
	if err != nil || head != 0 || len(ev) != 0 || ev == nil {
		t.Errorf("empty conversation: %v %d %v (want a non-nil empty list for JSON [])", ev, head, err)
	}
}
