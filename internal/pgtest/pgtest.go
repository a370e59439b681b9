// Package pgtest gives each test its own PostgreSQL schema in the database
// named by DATABASE_URL. Without DATABASE_URL tests skip, except under
// CI=true, where they fail.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"stormsim/gateway/store"
)

// URL returns DATABASE_URL, skipping (or failing under CI=true) without it.
func URL(t testing.TB) string {
	t.Helper()
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("DATABASE_URL is not set (required when CI=true)")
		}
		t.Skip("DATABASE_URL not set")
	}
	return url
}

// Schema creates a fresh schema named after the test and drops it (with
// everything in it) when the test ends.
func Schema(t testing.TB) string {
	t.Helper()
	url := URL(t)
	var b [4]byte
	rand.Read(b[:])
	name := strings.ToLower(t.Name())
	name = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, name)
	if len(name) > 40 {
		name = name[:40]
	}
	schema := "t_" + name + "_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Logf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Logf("drop schema %s: %v", schema, err)
		}
	})
	return schema
}

// Open opens a migrated store on schema, closed when the test ends.
func Open(t testing.TB, schema, app string) *store.PG {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := store.Open(ctx, URL(t), store.Options{Schema: schema, AppName: app, MaxConns: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}
