package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"stormsim/gateway/store"
)

// dbFlags are shared by every command.
type dbFlags struct {
	url    string
	schema string
}

func (d *dbFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&d.url, "database-url", "", "PostgreSQL URL (env DATABASE_URL)")
	fs.StringVar(&d.schema, "schema", "",
		"schema for all tables, created if missing; empty = the URL's search_path (public, information_schema and pg_* are refused)")
}

// validate checks the flags without connecting.
func (d *dbFlags) validate() error {
	name := "--database-url"
	if d.url == "" {
		d.url, name = os.Getenv("DATABASE_URL"), "DATABASE_URL"
	}
	if d.url == "" {
		return usageError{"--database-url (or DATABASE_URL) is required"}
	}
	if err := store.CheckURL(d.url); err != nil {
		return usageError{name + ": " + err.Error()}
	}
	if err := store.CheckSchema(d.schema); err != nil {
		return usageError{"--schema: " + err.Error()}
	}
	return nil
}

func (d *dbFlags) open(ctx context.Context, app string, maxConns int32) (*store.PG, error) {
	return store.Open(ctx, d.url, store.Options{Schema: d.schema, AppName: app, MaxConns: maxConns})
}

// envName is the environment variable of a flag: GATEWAY_<NAME>.
func envName(flag string) string {
	return "GATEWAY_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// applyEnv sets every flag not given on the command line from its
// environment variable, so the command line wins.
func applyEnv(fs *pflag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed || f.Name == "database-url" {
			return
		}
		if v, ok := os.LookupEnv(envName(f.Name)); ok {
			if e := fs.Set(f.Name, v); e != nil {
				err = usageError{fmt.Sprintf("%s: %v (got %q)", envName(f.Name), e, v)}
			}
		}
	})
	return err
}

// parse parses args, then the environment. --help prints the flags on
// stdout and returns errHelp; errors are one line.
func parse(fs *pflag.FlagSet, args []string, stdout io.Writer) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stdout, "usage: gateway %s [flags]\nEvery flag --x-y falls back to $GATEWAY_X_Y (--database-url to $DATABASE_URL).\n%s",
				fs.Name(), fs.FlagUsages())
			return errHelp
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	return applyEnv(fs)
}

// migrate runs s.Migrate within timeout; a failure names the phase and the
// database, and says when the database did not answer at all.
func migrate(ctx context.Context, s *store.PG, schema string, timeout time.Duration) error {
	mctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := s.Migrate(mctx)
	phase := "migrate"
	if schema != "" {
		phase = fmt.Sprintf("migrate schema %q", schema)
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded) || mctx.Err() != nil:
		return fmt.Errorf("%s: the database at %s did not answer within %v (%w)", phase, s.Addr(), timeout, err)
	default:
		return fmt.Errorf("%s on the database at %s: %w", phase, s.Addr(), err)
	}
}
