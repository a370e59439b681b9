// Command gateway runs the stormsim gateway (see package stormsim/gateway).
//
//	gateway [serve] [flags]          serve WebSocket handshakes (default)
//	gateway migrate [flags]          create the schema idempotently
//	gateway devices --count N        provision u-000-d1.. with tokens tok-<id>
//	gateway events --conv C --count N  append N events to conversation C
//
// Every flag falls back to an environment variable (GATEWAY_<FLAG>, and
// DATABASE_URL for --database-url). Bad flags exit 2; runtime failures exit
// 1; a SIGTERM drain that released every route exits 0.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"stormsim/gateway"
	"stormsim/gateway/logline"
	"stormsim/gateway/store"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// usageError is bad command-line input: exit 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func run(args []string) int {
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "serve":
		err = serve(args)
	case "migrate", "devices", "events":
		err = admin(cmd, args)
	default:
		err = usageError{fmt.Sprintf("unknown command %q (want serve, migrate, devices or events)", cmd)}
	}
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(os.Stderr, "gateway %s: %v\n", cmd, err)
		return 2
	default:
		fmt.Fprintf(os.Stderr, "gateway %s: %s\n", cmd, oneLine(err.Error()))
		return 1
	}
}

// oneLine folds a multi-line error (pgx lists every address it tried, one
// per line) into one line, so the last line of stderr says it all.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

// dbFlags are shared by every command.
type dbFlags struct {
	url    string
	schema string
}

func (d *dbFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&d.url, "database-url", "", "PostgreSQL URL (env DATABASE_URL)")
	fs.StringVar(&d.schema, "schema", "",
		"schema for all tables, created if missing; empty = the URL's search_path")
}

// validate checks the flags without connecting.
func (d *dbFlags) validate() error {
	if d.url == "" {
		d.url = os.Getenv("DATABASE_URL")
	}
	if d.url == "" {
		return usageError{"--database-url (or DATABASE_URL) is required"}
	}
	if err := store.CheckSchema(d.schema); err != nil {
		return usageError{"--schema: " + err.Error()}
	}
	return nil
}

func (d *dbFlags) open(ctx context.Context, app string, maxConns int32) (*store.PG, error) {
	return store.Open(ctx, d.url, store.Options{Schema: d.schema, AppName: app, MaxConns: maxConns})
}

// env returns GATEWAY_<NAME> for a flag name.
func env(flag string) (string, bool) {
	return os.LookupEnv("GATEWAY_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_")))
}

// applyEnv sets every flag not given on the command line from its
// environment variable, so the command line wins.
func applyEnv(fs *pflag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed || f.Name == "database-url" {
			return
		}
		if v, ok := env(f.Name); ok {
			if e := fs.Set(f.Name, v); e != nil {
				name := "GATEWAY_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
				err = usageError{fmt.Sprintf("%s: %v (got %q)", name, e, v)}
			}
		}
	})
	return err
}

// parse parses args, then the environment; errors are one line (usage is
// printed only for --help).
func parse(fs *pflag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(os.Stderr, "usage: gateway %s [flags]\nEvery flag --x-y falls back to $GATEWAY_X_Y (--database-url to $DATABASE_URL).\n%s",
				fs.Name(), fs.FlagUsages())
			os.Exit(0)
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	return applyEnv(fs)
}

func serve(args []string) error {
	host, _ := os.Hostname()
	cfg := gateway.DefaultConfig(fmt.Sprintf("gw-%s-%d", host, os.Getpid()))
	var db dbFlags
	var listen, logLevel string
	var dbConns int32
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	db.register(fs)
	fs.StringVar(&cfg.ID, "id", cfg.ID, "gateway id, unique among live gateways")
	fs.StringVar(&listen, "listen", "127.0.0.1:8080", "listen address; port 0 picks a free port, logged in the \"listening\" line")
	fs.DurationVar(&cfg.Lease, "lease", cfg.Lease, "lease duration")
	fs.DurationVar(&cfg.Ping, "ping", cfg.Ping, "WebSocket ping interval (0 = none)")
	fs.DurationVar(&cfg.Idle, "idle", cfg.Idle, "close connections silent this long (0 = never)")
	fs.Float64Var(&cfg.AdmitRate, "admit-rate", 0, "admission token bucket refill, handshakes/s (0 = unlimited)")
	fs.IntVar(&cfg.AdmitBurst, "admit-burst", cfg.AdmitBurst, "admission token bucket capacity, handshakes")
	fs.DurationVar(&cfg.RetryAfter, "retry-after", cfg.RetryAfter, "Retry-After on 429/503 (rounded up to seconds)")
	fs.DurationVar(&cfg.DrainGrace, "drain-grace", cfg.DrainGrace, "how long a drain waits for connections to close")
	fs.Int32Var(&dbConns, "db-conns", 8, "handshake pool size (the lease pool has 2 more)")
	fs.StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	if err := parse(fs, args); err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(logLevel)); err != nil {
		return usageError{fmt.Sprintf("--log-level: want debug, info, warn or error (got %q)", logLevel)}
	}
	if err := cfg.Validate(); err != nil {
		return usageError{err.Error()}
	}
	if dbConns < 1 {
		return usageError{fmt.Sprintf("--db-conns: must be >= 1 (got %d)", dbConns)}
	}
	if err := db.validate(); err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	log.Info(logline.Start, "gateway", cfg.ID, "pid", os.Getpid(), "lease_ms", cfg.Lease.Milliseconds(),
		"ping_ms", cfg.Ping.Milliseconds(), "idle_ms", cfg.Idle.Milliseconds(), "admit_rate", cfg.AdmitRate,
		"admit_burst", cfg.AdmitBurst, "retry_after_ms", cfg.RetryAfter.Milliseconds(),
		"drain_grace_ms", cfg.DrainGrace.Milliseconds(), "schema", db.schema)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() { <-ctx.Done(); stop() }() // a second signal kills at once

	err := serveWith(ctx, cfg, &db, listen, dbConns, log)
	code := 0
	if err != nil {
		code = 1
		log.Error(logline.Exit, "code", code, "err", err.Error())
		return err
	}
	log.Info(logline.Exit, "code", code)
	return nil
}

func serveWith(ctx context.Context, cfg gateway.Config, db *dbFlags, listen string, dbConns int32, log *slog.Logger) error {
	openCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	hs, err := db.open(openCtx, "gateway-"+cfg.ID, dbConns)
	if err != nil {
		return err
	}
	defer hs.Close()
	leases, err := db.open(openCtx, "gateway-"+cfg.ID+"-lease", 2)
	if err != nil {
		return err
	}
	defer leases.Close()
	if err := hs.Migrate(openCtx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	g, err := gateway.New(cfg, gateway.Deps{Handshakes: hs, Leases: leases, Kicks: hs}, log)
	if err != nil {
		return usageError{err.Error()}
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	return g.Run(ctx, ln)
}

// admin runs the one-shot commands.
func admin(cmd string, args []string) error {
	var db dbFlags
	var count int
	var conv, body string
	fs := pflag.NewFlagSet(cmd, pflag.ContinueOnError)
	db.register(fs)
	switch cmd {
	case "devices":
		fs.IntVar(&count, "count", 0, "number of devices u-000-d1 .. to provision")
	case "events":
		fs.StringVar(&conv, "conv", "", "conversation id")
		fs.IntVar(&count, "count", 0, "number of events to append")
		fs.StringVar(&body, "body", "event", "event body prefix; -1, -2, ... is appended")
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if (cmd == "devices" || cmd == "events") && (count < 1 || count > 1_000_000) {
		return usageError{fmt.Sprintf("--count: must be in [1, 1000000] (got %d)", count)}
	}
	if cmd == "events" && conv == "" {
		return usageError{"--conv: must not be empty"}
	}
	if err := db.validate(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := db.open(ctx, "gateway-"+cmd, 2)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	switch cmd {
	case "devices":
		n, err := s.ProvisionDevices(ctx, count)
		if err != nil {
			return err
		}
		fmt.Printf("devices: %d provisioned, %d new\n", count, n)
	case "events":
		bodies := make([]string, count)
		for i := range bodies {
			bodies[i] = body + "-" + strconv.Itoa(i+1)
		}
		head, err := s.AppendEvents(ctx, conv, bodies)
		if err != nil {
			return err
		}
		fmt.Printf("events: conv %s head %d\n", conv, head)
	}
	return nil
}
