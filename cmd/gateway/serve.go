package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"stormsim/gateway"
	"stormsim/gateway/logline"
	"stormsim/models"
)

// leaseConns is the lease pool's size; with the LISTEN connection and the
// handshake pool it makes the gateway's database connections.
const leaseConns = 2

// serveFlags are the serve command's settings beyond gateway.Config.
type serveFlags struct {
	db       dbFlags
	listen   string
	logLevel string
	dbConns  int32
}

func runServe(cmd *command, args []string, stdout, stderr io.Writer) error {
	host, _ := os.Hostname()
	cfg := gateway.DefaultConfig(fmt.Sprintf("gw-%s-%d", host, os.Getpid()))
	var sf serveFlags
	var abandoned, logRejections, drainPace, reconnectHint string
	fs := pflag.NewFlagSet(cmd.name, pflag.ContinueOnError)
	sf.db.register(fs)
	fs.StringVar(&cfg.ID, "id", cfg.ID, "gateway id, unique among live gateways (a second process with a live id is refused)")
	fs.StringVar(&sf.listen, "listen", "127.0.0.1:8080", "listen address; port 0 picks a free port, logged in the \"listening\" line")
	fs.DurationVar(&cfg.Lease, "lease", cfg.Lease, "lease duration")
	fs.DurationVar(&cfg.Ping, "ping", cfg.Ping, "WebSocket ping interval (0 = none)")
	fs.DurationVar(&cfg.Idle, "idle", cfg.Idle, "close connections silent this long after the upgrade (0 = never)")
	fs.Float64Var(&cfg.AdmitRate, "admit-rate", 0, "admission token bucket refill, handshakes/s (0 = unlimited)")
	fs.IntVar(&cfg.AdmitBurst, "admit-burst", cfg.AdmitBurst, "admission token bucket capacity, handshakes")
	fs.Float64Var(&cfg.SourceRate, "source-rate", 0, "per-source pre-limit before admission, handshakes/s per IPv4 address or IPv6 /64 (0 = none)")
	fs.IntVar(&cfg.SourceBurst, "source-burst", cfg.SourceBurst, "per-source bucket capacity, handshakes")
	fs.DurationVar(&cfg.RetryAfter, "retry-after", cfg.RetryAfter, "Retry-After on 429/503 (rounded up to seconds)")
	fs.StringVar(&abandoned, "abandoned", string(cfg.Abandoned), "a handshake whose client left before its claim: skip (drop it unclaimed) or serve (claim anyway)")
	fs.IntVar(&cfg.MaxClaimsInflight, "max-claims-inflight", 0, "answer 503 at once to a handshake that would wait behind this many others for its claim (0 = no limit)")
	fs.DurationVar(&cfg.DrainGrace, "drain-grace", cfg.DrainGrace, "how long a drain waits for connections to close")
	fs.StringVar(&drainPace, "drain-pace", "all", "when a drain sends each goaway: all, batches:size=N,interval=D, spread:over=D[,max_gap=D], lame_duck:grace=D,over=D[,max_gap=D], or a preset (phoenix, anycable, nats, envoy; stormsim policies lists them)")
	fs.StringVar(&reconnectHint, "reconnect-hint", "none", "the delay each goaway carries: none, fixed:delay=D, uniform:over=D or reserved[:rate=R,burst=B] (default rate and burst: --admit-rate and --admit-burst)")
	fs.Int32Var(&sf.dbConns, "db-conns", 8, fmt.Sprintf("handshake pool size (the lease pool has %d more, LISTEN one)", leaseConns))
	fs.IntVar(&cfg.MaxConns, "max-conns", 0, "cap on open TCP connections (0 = the descriptor limit less a reserve)")
	fs.DurationVar(&cfg.HTTPIdle, "http-idle", cfg.HTTPIdle, "close HTTP keep-alive connections idle this long")
	fs.Float64Var(&cfg.SyncRate, "sync-rate", cfg.SyncRate, "sync requests per second per connection")
	fs.IntVar(&cfg.SyncBurst, "sync-burst", cfg.SyncBurst, "sync requests a connection may send at once")
	fs.StringVar(&logRejections, "log-rejections", string(cfg.LogRejections), "summary (counts per second) or each (one line per refused handshake)")
	fs.StringVar(&sf.logLevel, "log-level", "info", "debug, info, warn or error")
	if err := parse(fs, args, stdout); err != nil {
		return err
	}
	cfg.Abandoned, cfg.LogRejections = models.Abandoned(abandoned), gateway.RejectionLog(logRejections)
	var err error
	if cfg.DrainPace, err = models.ParseDrainPace(drainPace); err != nil {
		return usageError{"--drain-pace: " + err.Error()}
	}
	if cfg.ReconnectHint, err = models.ParseReconnectHint(reconnectHint); err != nil {
		return usageError{"--reconnect-hint: " + err.Error()}
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(sf.logLevel)); err != nil {
		return usageError{fmt.Sprintf("--log-level: want debug, info, warn or error (got %q)", sf.logLevel)}
	}
	if sf.dbConns < 1 {
		return usageError{fmt.Sprintf("--db-conns: must be >= 1 (got %d)", sf.dbConns)}
	}
	cfg.ClaimConcurrency = int(sf.dbConns)
	if cfg.MaxConns == 0 {
		n, err := defaultMaxConns(int(sf.dbConns) + leaseConns + 1)
		if err != nil {
			return usageError{"--max-conns: " + err.Error()}
		}
		cfg.MaxConns = n
	}
	if err := cfg.Validate(); err != nil {
		return usageError{err.Error()}
	}
	if err := checkListen(sf.listen); err != nil {
		return usageError{"--listen: " + err.Error()}
	}
	if err := sf.db.validate(); err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))
	log.Info(logline.Start, logline.KeyGateway, cfg.ID, "pid", os.Getpid(), "lease_ms", cfg.Lease.Milliseconds(),
		"ping_ms", cfg.Ping.Milliseconds(), "idle_ms", cfg.Idle.Milliseconds(), "admit_rate", cfg.AdmitRate,
		"admit_burst", cfg.AdmitBurst, "source_rate", cfg.SourceRate, "source_burst", cfg.SourceBurst,
		"retry_after_ms", cfg.RetryAfter.Milliseconds(), "abandoned", string(cfg.Abandoned),
		"max_claims_inflight", cfg.MaxClaimsInflight, "drain_grace_ms", cfg.DrainGrace.Milliseconds(),
		"drain_pace", cfg.DrainPace.String(), "reconnect_hint", cfg.ReconnectHint.String(),
		"db_conns", sf.dbConns, "max_conns", cfg.MaxConns, "http_idle_ms", cfg.HTTPIdle.Milliseconds(),
		"sync_rate", cfg.SyncRate, "sync_burst", cfg.SyncBurst, "log_rejections", string(cfg.LogRejections),
		"schema", sf.db.schema)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() { <-ctx.Done(); stop() }() // a second signal kills at once

	if err := serveWith(ctx, cfg, sf, log); err != nil {
		log.Error(logline.Exit, "code", exitFailure, "err", err.Error())
		return err
	}
	log.Info(logline.Exit, "code", exitOK)
	return nil
}

// startupTimeout bounds the migration at start-up, the first time the
// gateway talks to its database.
var startupTimeout = 10 * time.Second

func serveWith(ctx context.Context, cfg gateway.Config, sf serveFlags, log *slog.Logger) error {
	hs, err := sf.db.open(ctx, "gateway-"+cfg.ID, sf.dbConns)
	if err != nil {
		return err
	}
	defer hs.Close()
	leases, err := sf.db.open(ctx, "gateway-"+cfg.ID+"-lease", leaseConns)
	if err != nil {
		return err
	}
	defer leases.Close()
	if err := migrate(ctx, hs, sf.db.schema, startupTimeout); err != nil {
		return err
	}
	g, err := gateway.New(cfg, gateway.Deps{Handshakes: hs, Leases: leases, Kicks: hs}, log)
	if err != nil {
		return usageError{err.Error()}
	}
	ln, err := net.Listen("tcp", sf.listen)
	if err != nil {
		return err
	}
	return g.Run(ctx, ln)
}

// checkListen checks that addr is host:port with a port in [0, 65535],
// so that only what the system decides (a name that does not resolve, an
// address in use) fails at run time.
func checkListen(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("want host:port (got %q)", addr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("port must be a number in [0, 65535] (got %q)", port)
	}
	return nil
}
