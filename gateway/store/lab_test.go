package store_test

import (
	"context"
	"testing"

	"stormsim/gateway/store"
	"stormsim/internal/pgtest"
)

// TestRouteCountExcept: of gw-a's three routes, two are not the witness's;
// gw-b's one route is the witness's own.
func TestRouteCountExcept(t *testing.T) {
	s := pgtest.Open(t, pgtest.Schema(t), "route-count")
	ctx := ctxT(t)
	for i, gw := range []string{"gw-a", "gw-a", "gw-a", "gw-b"} {
		if _, err := s.ClaimRoute(ctx, store.Claim{Device: store.DeviceID(i), Gateway: gw, Conn: "c", Attempt: 1}); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		gateway, except string
		want            int64
	}{{"gw-a", store.DeviceID(0), 2}, {"gw-a", "nobody", 3}, {"gw-b", store.DeviceID(3), 0}, {"gw-c", "nobody", 0}}
	for _, c := range cases {
		if n, err := s.RouteCountExcept(ctx, c.gateway, c.except); err != nil || n != c.want {
			t.Errorf("RouteCountExcept(%s, %s) = %d, %v; want %d", c.gateway, c.except, n, err, c.want)
		}
	}
}

// TestDropSchema removes the store's own schema, tables and all; a store
// without a schema refuses.
func TestDropSchema(t *testing.T) {
	schema := pgtest.Schema(t)
	s := pgtest.Open(t, schema, "drop-schema")
	ctx := ctxT(t)
	if err := s.DropSchema(ctx); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_namespace WHERE nspname = $1`, schema).Scan(&n); err != nil || n != 0 {
		t.Errorf("schema %s still there (%d, %v)", schema, n, err)
	}
	plain, err := store.Open(context.Background(), pgtest.URL(t), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if err := plain.DropSchema(ctx); err == nil {
		t.Error("a store without a schema dropped one")
	}
}
