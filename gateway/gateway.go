package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"stormsim/gateway/logline"
)

// Gateway is one gateway process's state. Create it with New and run it
// with Run.
type Gateway struct {
	cfg     Config
	deps    Deps
	log     *slog.Logger
	metrics *Metrics
	admit   *admitter
	reg     *registry

	start       time.Time // origin of the monotonic clock readings below
	incarnation string    // random per process: conn ids are never reused
	connSeq     atomic.Int64

	lastRenew     atomic.Int64 // monotonic ns when the last successful renew was sent
	lease         leaseState   // owned by the lease loop
	listening     atomic.Bool
	reregistering atomic.Bool
	goawaySent    atomic.Int64

	ctx    context.Context // sessions' lifetime; cancelled when Run returns
	cancel context.CancelFunc
}

// New validates cfg and builds a gateway. deps.Leases should use a pool of
// its own; see Deps.
func New(cfg Config, deps Deps, log *slog.Logger) (*Gateway, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if deps.Handshakes == nil || deps.Leases == nil || deps.Kicks == nil {
		return nil, errors.New("gateway: Deps must be complete")
	}
	var b [4]byte
	rand.Read(b[:])
	start := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	return &Gateway{
		cfg:         cfg,
		deps:        deps,
		log:         log.With("gateway", cfg.ID),
		metrics:     &Metrics{},
		admit:       newAdmitter(cfg.admission(), start),
		reg:         newRegistry(),
		start:       start,
		incarnation: hex.EncodeToString(b[:]),
		ctx:         ctx,
		cancel:      cancel,
	}, nil
}

// Metrics returns the live counters.
func (g *Gateway) Metrics() *Metrics { return g.metrics }

// Connections returns the number of registered connections.
func (g *Gateway) Connections() int { return g.reg.len() }

// mono is the time since New on the monotonic clock.
func (g *Gateway) mono() time.Duration { return time.Since(g.start) }

func (g *Gateway) newConnID() string {
	return "c-" + g.incarnation + "-" + strconv.FormatInt(g.connSeq.Add(1), 10)
}

// Run takes the first lease (retrying every period), serves ln until ctx is
// cancelled, then drains and returns. It returns nil after a clean drain.
func (g *Gateway) Run(ctx context.Context, ln net.Listener) error {
	defer g.cancel()
	if err := g.firstLease(ctx); err != nil {
		ln.Close()
		if ctx.Err() != nil {
			return nil // stopped before admitting anything: nothing to drain
		}
		return err
	}
	var loops sync.WaitGroup
	loopCtx, stopLoops := context.WithCancel(context.Background())
	leaseCtx, stopLeaseLoop := context.WithCancel(loopCtx)
	leaseDone := make(chan struct{})
	go func() { defer close(leaseDone); g.leaseLoop(leaseCtx) }()
	loops.Go(func() { g.listenLoop(loopCtx) })

	srv := &http.Server{
		Handler:           g.Handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ErrorLog:          slog.NewLogLogger(g.log.Handler(), slog.LevelDebug),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	g.log.Info(logline.Listening, logline.KeyAddr, ln.Addr().String(), "lease_ms", g.cfg.Lease.Milliseconds(),
		"period_ms", g.cfg.Period().Milliseconds(), "admission", g.admit.rule.String())

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served:
		serveErr = fmt.Errorf("serve: %w", serveErr)
	}
	err := g.drain(func() { stopLeaseLoop(); <-leaseDone })
	srv.Close()
	stopLoops()
	loops.Wait()
	return errors.Join(serveErr, err)
}

// firstLease renews until it succeeds (a gateway admits nothing before it
// holds a lease), then deletes routes left under its id by an earlier
// process: conn ids are per process, so none of them can be live, and with
// the lease renewed under the same id nobody else would ever sweep them.
func (g *Gateway) firstLease(ctx context.Context) error {
	for {
		sent := g.mono()
		rctx, cancel := context.WithTimeout(ctx, g.cfg.Lease)
		err := g.deps.Leases.RenewLease(rctx, g.cfg.ID, g.cfg.Lease)
		var stale int64
		if err == nil {
			stale, err = g.deps.Leases.ReleaseGateway(rctx, g.cfg.ID)
		}
		cancel()
		if err == nil {
			g.lastRenew.Store(int64(sent))
			if stale > 0 {
				g.log.Info(logline.StaleRoutesReleased, logline.KeyCount, stale)
			}
			return nil
		}
		g.log.Warn(logline.LeaseRenewFailed, "err", err.Error())
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(g.cfg.Period()):
		}
	}
}
