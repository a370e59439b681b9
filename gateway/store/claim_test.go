package store_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"stormsim/gateway/store"
	"stormsim/internal/pgtest"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestClaimRouteSequence pins down claimRoute's rule on one device, step by
// step; each expectation follows from the seed: accept iff (epoch, attempt)
// is lexicographically greater than the floor, or the same connection
// repeats; version = floor version + 1.
func TestClaimRouteSequence(t *testing.T) {
	s := pgtest.Open(t, pgtest.Schema(t), "claim-seq")
	ctx := ctxT(t)
	steps := []struct {
		name          string
		gw, conn      string
		epoch, att    int64
		accepted      bool
		version       int64
		previousConn  string
		wantOwnerConn string
	}{
		{"first claim accepted with attempt 0", "gw-a", "a1", 0, 0, true, 1, "", "a1"},
		{"same connection repeats: idempotent", "gw-a", "a1", 0, 0, true, 1, "", "a1"},
		{"equal (epoch, attempt) from another conn: 409", "gw-b", "b1", 0, 0, false, 0, "", "a1"},
		{"newer attempt takes over, kicks a1", "gw-b", "b1", 0, 3, true, 2, "a1", "b1"},
		{"late old attempt: 409, owner kept", "gw-a", "a2", 0, 2, false, 0, "", "b1"},
		{"reinstall: epoch 1 beats attempt 3 with attempt 0", "gw-a", "a3", 1, 0, true, 3, "b1", "a3"},
		{"old epoch, huge attempt: 409", "gw-b", "b2", 0, 1000, false, 0, "", "a3"},
		{"same gateway, newer attempt: kicks own conn", "gw-a", "a4", 1, 1, true, 4, "a3", "a4"},
	}
	for _, st := range steps {
		r, err := s.ClaimRoute(ctx, store.Claim{Device: "d", Gateway: st.gw, Conn: st.conn, Epoch: st.epoch, Attempt: st.att})
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if r.Accepted != st.accepted || r.Version != st.version || r.Previous.Conn != st.previousConn {
			t.Errorf("%s: got accepted=%v version=%d previous=%q, want %v %d %q",
				st.name, r.Accepted, r.Version, r.Previous.Conn, st.accepted, st.version, st.previousConn)
		}
		o, err := s.Route(ctx, "d")
		if err != nil {
			t.Fatal(err)
		}
		if o.Conn != st.wantOwnerConn {
			t.Errorf("%s: owner %q, want %q", st.name, o.Conn, st.wantOwnerConn)
		}
	}
}

// TestLateOldClaimVersusLastWriterWins replays the seed's "late old claim"
// and "last-writer-wins" rows: u-000-d1 connected to gw-a at attempt 3, then
// to gw-b at attempt 4 (version 2). A late claim as gw-a with attempt 3 is
// refused and leaves gw-b at version 2; the unconditional upsert of the same
// claim hijacks the route to gw-a / gw-a-ghost at version 3.
func TestLateOldClaimVersusLastWriterWins(t *testing.T) {
	s := pgtest.Open(t, pgtest.Schema(t), "late-claim")
	ctx := ctxT(t)
	dev := store.DeviceID(0)
	for _, c := range []store.Claim{
		{Device: dev, Gateway: "gw-a", Conn: "gw-a-1", Attempt: 3},
		{Device: dev, Gateway: "gw-b", Conn: "gw-b-1", Attempt: 4},
	} {
		if r, err := s.ClaimRoute(ctx, c); err != nil || !r.Accepted {
			t.Fatalf("setup claim %+v: %+v %v", c, r, err)
		}
	}
	late := store.Claim{Device: dev, Gateway: "gw-a", Conn: "gw-a-ghost", Attempt: 3}
	r, err := s.ClaimRoute(ctx, late)
	if err != nil {
		t.Fatal(err)
	}
	o, _ := s.Route(ctx, dev)
	if r.Accepted || o != (store.Owner{Gateway: "gw-b", Conn: "gw-b-1", Version: 2}) {
		t.Fatalf("late claim: accepted=%v owner %+v, want refused and gw-b/gw-b-1 v2", r.Accepted, o)
	}
	if r.Floor != (store.Floor{Version: 2, Epoch: 0, Attempt: 4}) {
		t.Errorf("floor %+v, want {2 0 4}", r.Floor)
	}
	v, err := s.UpsertRouteUnconditional(ctx, late)
	if err != nil {
		t.Fatal(err)
	}
	o, _ = s.Route(ctx, dev)
	if v != 3 || o != (store.Owner{Gateway: "gw-a", Conn: "gw-a-ghost", Version: 3}) {
		t.Fatalf("last-writer-wins: version %d owner %+v, want hijack to gw-a/gw-a-ghost v3", v, o)
	}
}

// TestConcurrentClaimsKeepFloorMonotone races two gateways claiming one
// device with random (epoch, attempt) pairs while an observer polls the
// floor. Independent checks: the floor never goes down; accepted claims,
// ordered by version, have strictly increasing (epoch, attempt) and versions
// 1..k without gaps; the final floor and owner are the overall maximum claim
// (it is newer than everything, so it must have been accepted); and there is
// exactly one route.
func TestConcurrentClaimsKeepFloorMonotone(t *testing.T) {
	s := pgtest.Open(t, pgtest.Schema(t), "concurrent")
	ctx := ctxT(t)
	type accepted struct {
		version, epoch, attempt int64
		conn                    string
	}
	for seed := range uint64(4) {
		dev := fmt.Sprintf("dev-%d", seed)
		var mu sync.Mutex
		var got []accepted
		var all []store.Claim
		var wg sync.WaitGroup
		stop := make(chan struct{})
		observed := make(chan error, 1)
		go func() {
			prev := store.Floor{Version: 0, Epoch: -1, Attempt: -1}
			for {
				select {
				case <-stop:
					observed <- nil
					return
				default:
				}
				fs, err := s.Floors(ctx, []string{dev})
				if err != nil {
					observed <- err
					return
				}
				if f, ok := fs[dev]; ok {
					if f.Version < prev.Version || prev.Below(f.Epoch, f.Attempt) == false && f != prev {
						observed <- fmt.Errorf("floor went from %+v to %+v", prev, f)
						return
					}
					prev = f
				}
			}
		}()
		for gw := range 2 {
			rng := rand.New(rand.NewPCG(seed, uint64(gw)))
			claims := make([]store.Claim, 40)
			for i := range claims {
				claims[i] = store.Claim{Device: dev, Gateway: fmt.Sprintf("gw-%d", gw), Conn: fmt.Sprintf("gw-%d-%d", gw, i),
					Epoch: rng.Int64N(3), Attempt: rng.Int64N(30)}
			}
			all = append(all, claims...)
			wg.Go(func() {
				for _, c := range claims {
					r, err := s.ClaimRoute(ctx, c)
					if err != nil {
						t.Error(err)
						return
					}
					if r.Accepted {
						mu.Lock()
						got = append(got, accepted{r.Version, c.Epoch, c.Attempt, c.Conn})
						mu.Unlock()
					}
				}
			})
		}
		wg.Wait()
		close(stop)
		if err := <-observed; err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		sort.Slice(got, func(i, j int) bool { return got[i].version < got[j].version })
		for i, a := range got {
			if a.version != int64(i+1) {
				t.Fatalf("seed %d: versions %v not 1..k", seed, got)
			}
			if i > 0 && !(store.Floor{Epoch: got[i-1].epoch, Attempt: got[i-1].attempt}).Below(a.epoch, a.attempt) {
				t.Fatalf("seed %d: accepted claim %+v not newer than %+v", seed, a, got[i-1])
			}
		}
		best := all[0]
		for _, c := range all {
			if (store.Floor{Epoch: best.Epoch, Attempt: best.Attempt}).Below(c.Epoch, c.Attempt) {
				best = c
			}
		}
		last := got[len(got)-1]
		if last.epoch != best.Epoch || last.attempt != best.Attempt {
			t.Errorf("seed %d: last accepted (%d,%d), want the maximum (%d,%d)", seed, last.epoch, last.attempt, best.Epoch, best.Attempt)
		}
		var routes int
		if err := s.Pool().QueryRow(ctx, `SELECT count(*) FROM routes WHERE device_id = $1`, dev).Scan(&routes); err != nil {
			t.Fatal(err)
		}
		o, _ := s.Route(ctx, dev)
		if routes != 1 || o.Conn != last.conn || o.Version != last.version {
			t.Errorf("seed %d: %d routes, owner %+v, want 1 route owned by %s v%d", seed, routes, o, last.conn, last.version)
		}
	}
}

// TestReregisterRoute: a route swept while its gateway's lease lapsed comes
// back with a fresh version only if no newer claim was accepted meanwhile.
func TestReregisterRoute(t *testing.T) {
	s := pgtest.Open(t, pgtest.Schema(t), "rereg")
	ctx := ctxT(t)
	a := store.Claim{Device: "d", Gateway: "gw-a", Conn: "a1", Attempt: 5}
	if r, err := s.ClaimRoute(ctx, a); err != nil || r.Version != 1 {
		t.Fatalf("%+v %v", r, err)
	}
	cases := []struct {
		name    string
		prepare string
		ok      bool
		version int64
		floor   store.Floor // the claim that refused it
	}{
		{"route intact: kept at its version", ``, true, 1, store.Floor{}},
		{"route swept: restored with floor+1", `DELETE FROM routes`, true, 2, store.Floor{}},
		{"newer claim accepted meanwhile: refused", `UPDATE route_floor SET max_attempt = 6, max_version = 3`, false, 0,
			store.Floor{Version: 3, Epoch: 0, Attempt: 6}},
	}
	for _, c := range cases {
		if c.prepare != "" {
			if _, err := s.Pool().Exec(ctx, c.prepare); err != nil {
				t.Fatal(err)
			}
		}
		r, err := s.ReregisterRoute(ctx, a)
		if err != nil || r.Accepted != c.ok || r.Version != c.version || r.Floor != c.floor {
			t.Errorf("%s: %+v err=%v, want accepted %v version %d floor %+v", c.name, r, err, c.ok, c.version, c.floor)
		}
	}
}

// TestAuthenticateAndClaim: the token is checked in the claim's round trip;
// an unknown device or a wrong token changes nothing (no floor row, no
// route), a right one claims as ClaimRoute does.
func TestAuthenticateAndClaim(t *testing.T) {
	s := pgtest.Open(t, pgtest.Schema(t), "auth-claim")
	ctx := ctxT(t)
	if _, err := s.ProvisionDevices(ctx, 1); err != nil {
		t.Fatal(err)
	}
	dev := store.DeviceID(0)
	cases := []struct {
		name               string
		device, token      string
		unauthorized, okay bool
	}{
		{"unknown device", "u-999-d1", store.DeviceToken("u-999-d1"), true, false},
		{"wrong token", dev, "tok-u-000-d2", true, false},
		{"token prefix", dev, "tok-u-000-d", true, false},
		{"right token", dev, store.DeviceToken(dev), false, true},
	}
	for _, c := range cases {
		r, err := s.AuthenticateAndClaim(ctx, store.Claim{Device: c.device, Gateway: "gw", Conn: "c-" + c.name, Attempt: 1}, c.token)
		if err != nil || r.Unauthorized != c.unauthorized || r.Accepted != c.okay {
			t.Errorf("%s: %+v %v, want unauthorized=%v accepted=%v", c.name, r, err, c.unauthorized, c.okay)
		}
		if c.unauthorized {
			if f, _ := s.Floors(ctx, []string{c.device}); len(f) != 0 {
				t.Errorf("%s: floor row written %+v", c.name, f)
			}
			if o, _ := s.Route(ctx, c.device); o != (store.Owner{}) {
				t.Errorf("%s: route written %+v", c.name, o)
			}
		}
	}
	if o, _ := s.Route(ctx, dev); o.Conn != "c-right token" || o.Version != 1 {
		t.Errorf("route %+v, want c-right token v1", o)
	}
}

// TestClaimCompletesOnceSent: cancelling a claim's context abandons it while
// it waits for a pooled connection (nothing is written), but not once it
// has been sent: a claim blocked on the floor row's lock commits when the
// lock is released, after its caller has given up.
func TestClaimCompletesOnceSent(t *testing.T) {
	schema := pgtest.Schema(t)
	s := pgtest.Open(t, schema, "claim-sent")
	ctx := ctxT(t)
	one, err := store.Open(ctx, pgtest.URL(t), store.Options{Schema: schema, AppName: "claim-sent-one", MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	for _, d := range []string{"blocked", "waiting"} {
		if _, err := s.ClaimRoute(ctx, store.Claim{Device: d, Gateway: "gw", Conn: "c0", Attempt: 0}); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := s.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT 1 FROM route_floor WHERE device_id = 'blocked' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	sentCtx, cancelSent := context.WithCancel(ctx)
	sent := make(chan error, 1)
	go func() {
		_, err := one.ClaimRoute(sentCtx, store.Claim{Device: "blocked", Gateway: "gw", Conn: "c1", Attempt: 1})
		sent <- err
	}()
	waitCtx, cancelWait := context.WithCancel(ctx)
	waited := make(chan error, 1)
	time.Sleep(200 * time.Millisecond) // the first claim holds the only connection, blocked on the lock
	go func() {
		_, err := one.ClaimRoute(waitCtx, store.Claim{Device: "waiting", Gateway: "gw", Conn: "c1", Attempt: 1})
		waited <- err
	}()
	time.Sleep(100 * time.Millisecond)
	cancelWait()
	cancelSent()
	if err := <-waited; !errors.Is(err, context.Canceled) {
		t.Errorf("claim cancelled while waiting for a connection: %v, want context.Canceled", err)
	}
	time.Sleep(100 * time.Millisecond)
	tx.Rollback(ctx)
	if err := <-sent; err != nil {
		t.Errorf("claim cancelled after it was sent: %v, want it to complete", err)
	}
	if o, _ := s.Route(ctx, "blocked"); o.Conn != "c1" {
		t.Errorf("sent claim: route %+v, want c1", o)
	}
	if o, _ := s.Route(ctx, "waiting"); o.Conn != "c0" {
		t.Errorf("abandoned claim: route %+v, want c0 untouched", o)
	}
}
