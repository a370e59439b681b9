// Package store is the gateway's PostgreSQL state: devices, routes, route
// floors, gateway leases, the kick channel and the event log. Every rule that
// needs a transaction (claimRoute, re-registration, sweep) lives here, in SQL
// the seed document spells out; the gateway package decides when to call it.
package store

import (
	"context"
	_ "embed"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed schema.sql
var schemaSQL string

// migrateLockKey serialises concurrent migrations (several gateways starting
// at once would otherwise race on CREATE TABLE IF NOT EXISTS).
const migrateLockKey = 0x5707_6a7e

// schemaName leaves room for the kick channel name (63 bytes at most).
var schemaName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,54}$`)

// CheckSchema reports whether name is usable as Options.Schema ("" is). The
// schemas PostgreSQL and every other application share are refused:
// information_schema, public, and pg_* (reserved for system schemas).
func CheckSchema(name string) error {
	switch {
	case name == "":
		return nil
	case !schemaName.MatchString(name):
		return fmt.Errorf("schema must match %s (got %q)", schemaName, name)
	case name == "public" || name == "information_schema" || strings.HasPrefix(name, "pg_"):
		return fmt.Errorf("schema %q is shared with PostgreSQL or other applications; name a schema of the gateway's own, or omit it to use the URL's search_path", name)
	}
	return nil
}

// Options configures Open.
type Options struct {
	// Schema, when set, is created by Migrate and becomes the session's
	// search_path, so tests and labs can share one database. Lower-case
	// letters, digits and underscores, at most 55 bytes.
	Schema string
	// AppName is the connections' application_name (pg_stat_activity), e.g.
	// "gateway-gw-a"; the LISTEN connection appends "-listen".
	AppName string
	// MaxConns bounds the pool size (connections); 0 keeps pgxpool's default.
	MaxConns int32
}

// PG is the PostgreSQL store. It is safe for concurrent use.
type PG struct {
	pool   *pgxpool.Pool
	schema string
}

// CheckURL reports whether url is a PostgreSQL URL or key=value DSN that
// Open can parse, without connecting; a password in it is not repeated in
// the error.
func CheckURL(url string) error {
	_, err := pgxpool.ParseConfig(url)
	return err
}

// Open connects a pool to url (a postgres:// URL or key=value DSN). It does
// not migrate.
func Open(ctx context.Context, url string, opt Options) (*PG, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("database url: %w", err)
	}
	if err := CheckSchema(opt.Schema); err != nil {
		return nil, err
	}
	if opt.Schema != "" {
		cfg.ConnConfig.RuntimeParams["search_path"] = opt.Schema
	}
	if opt.AppName != "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = opt.AppName
	}
	if opt.MaxConns > 0 {
		cfg.MaxConns = opt.MaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &PG{pool: pool, schema: opt.Schema}, nil
}

// Addr is the database's host:port as the URL names it (the first of
// several hosts), for messages about it.
func (s *PG) Addr() string {
	c := s.pool.Config().ConnConfig
	return net.JoinHostPort(c.Host, strconv.Itoa(int(c.Port)))
}

// Close closes the pool.
func (s *PG) Close() { s.pool.Close() }

// Schema returns the schema given to Open ("" if none).
func (s *PG) Schema() string { return s.schema }

// Pool exposes the pool for tests and tools that read the tables directly.
func (s *PG) Pool() *pgxpool.Pool { return s.pool }

// Migrate creates the schema (if Options.Schema is set) and the tables;
// running it again changes nothing.
func (s *PG) Migrate(ctx context.Context) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrateLockKey); err != nil {
			return err
		}
		if s.schema != "" {
			if _, err := tx.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{s.schema}.Sanitize()); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, schemaSQL)
		return err
	})
}
