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
	cfg        Config
	deps       Deps
	log        *slog.Logger
	metrics    *Metrics
	admit      *admitter
	sources    *sourceLimiter // nil without Config.SourceRate
	slots      slotQueue
	reg        *registry
	rejections rejectionCounts
	syncSlots  chan struct{}

	start       time.Time // origin of the monotonic clock readings below
	incarnation string    // random per process: conn ids are never reused; the lease's owner
	connSeq     atomic.Int64

	lastRenew         atomic.Int64 // monotonic ns when the last successful renew was sent
	leaseLosses       atomic.Int64 // times the lease lapsed, so a claim can tell it lapsed meanwhile
	lease             leaseState   // owned by the lease loop
	listening         atomic.Bool
	reregistering     atomic.Bool // a re-registration pass is running
	reregisterPending atomic.Bool // a lapse asks for another pass
	// reregisters are the re-registrations started by the lease loop,
	// which waits for them when it stops: a statement of theirs in flight
	// would otherwise write a route after the drain's final delete.
	reregisters      sync.WaitGroup
	orphansSuspected atomic.Bool // a route release failed: look for orphan routes
	goawaySent       atomic.Int64
	goawayFailed     atomic.Int64 // goaways whose write failed: said in drain_done, not hidden in goaway's shortfall

	refusedAnswer []byte // what a TCP connection over Config.MaxConns gets

	ctx     context.Context // sessions' lifetime; cancelled when Run returns
	cancel  context.CancelFunc
	stopped chan error // the gateway's own reason to stop (buffered 1)
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
	var b [8]byte
	rand.Read(b[:])
	start := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	g := &Gateway{
		cfg:           cfg,
		deps:          deps,
		log:           log.With(logline.KeyGateway, cfg.ID),
		metrics:       &Metrics{},
		admit:         newAdmitter(cfg.admission(), start),
		sources:       newSourceLimiter(cfg.SourceRate, cfg.SourceBurst, start),
		reg:           newRegistry(),
		syncSlots:     make(chan struct{}, syncSlots),
		start:         start,
		incarnation:   hex.EncodeToString(b[:]),
		refusedAnswer: fmt.Appendf(nil, refusedAnswer, cfg.retryAfterSeconds()),
		ctx:           ctx,
		cancel:        cancel,
		stopped:       make(chan error, 1),
	}
	g.slots = slotQueue{slots: make(chan struct{}, cfg.ClaimConcurrency), limit: int64(cfg.MaxClaimsInflight),
		waiting: &g.metrics.ClaimsWaiting, inflight: &g.metrics.ClaimsInflight}
	g.metrics.MaxConns.Store(int64(cfg.MaxConns))
	return g, nil
}

// stop makes Run drain and return err.
func (g *Gateway) stop(err error) {
	select {
	case g.stopped <- err:
	default:
	}
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

// Run takes the first lease (retrying every period, and refusing to start
// while another live process holds this id), serves ln until ctx is
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
	if g.cfg.LogRejections == RejectionSummary {
		loops.Go(func() { g.summarizeRejections(loopCtx) })
	}

	capped := newCapListener(ln, g)
	srv := &http.Server{
		Handler:           g.Handler(),
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       g.cfg.HTTPIdle,
		MaxHeaderBytes:    maxHeaderBytes,
		ConnState:         capped.connState,
		ErrorLog:          slog.NewLogLogger(g.log.Handler(), slog.LevelDebug),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(capped) }()
	g.log.Info(logline.Listening, logline.KeyAddr, ln.Addr().String(), "lease_ms", g.cfg.Lease.Milliseconds(),
		"period_ms", g.cfg.Period().Milliseconds(), "admission", g.admit.rule.String(),
		"abandoned", string(g.cfg.Abandoned), "max_claims_inflight", g.cfg.MaxClaimsInflight, "max_conns", g.cfg.MaxConns)

	var stopErr error
	select {
	case <-ctx.Done():
	case err := <-served:
		stopErr = fmt.Errorf("serve: %w", err)
	case stopErr = <-g.stopped:
		g.log.Error(logline.Stopping, "err", stopErr.Error())
	}
	err := g.drain(func() { stopLeaseLoop(); <-leaseDone }, errors.Is(stopErr, errLeaseTaken))
	srv.Close()
	stopLoops()
	loops.Wait()
	return errors.Join(stopErr, err)
}

const (
	// readHeaderTimeout bounds how long a client may take to send its
	// request headers.
	readHeaderTimeout = 5 * time.Second
	// maxRequestHead bounds a request's line and headers together; a
	// handshake needs well under 1 KiB.
	maxRequestHead = 16 << 10
	// maxHeaderBytes is http.Server.MaxHeaderBytes for maxRequestHead:
	// net/http reads up to MaxHeaderBytes plus 4096 bytes of slack.
	maxHeaderBytes = maxRequestHead - 4096
)

// ErrIDInUse is returned by Run when another live process holds the
// gateway id's lease.
var ErrIDInUse = errors.New("gateway id in use by a live gateway")

// firstLease acquires the id's lease (a gateway admits nothing before it
// holds one), then deletes routes left under its id by an earlier process:
// conn ids are per process, so none of them can be live, and with the lease
// renewed under the same id nobody else would ever sweep them. A lease held
// by another process is waited for up to one lease and two periods, long
// enough for a dead holder's lease to run out: if it is still held then,
// its holder is renewing it, and Run fails with ErrIDInUse.
func (g *Gateway) firstLease(ctx context.Context) error {
	heldSince := time.Duration(-1)
	for {
		sent := g.mono()
		rctx, cancel := context.WithTimeout(ctx, g.cfg.Lease)
		held, err := g.deps.Leases.AcquireLease(rctx, g.cfg.ID, g.incarnation, g.cfg.Lease)
		var stale int64
		if err == nil && !held {
			stale, err = g.deps.Leases.ReleaseGateway(rctx, g.cfg.ID)
		}
		cancel()
		switch {
		case err == nil && !held:
			g.lastRenew.Store(int64(sent))
			if stale > 0 {
				g.log.Info(logline.StaleRoutesReleased, logline.KeyCount, stale)
			}
			return nil
		case err == nil:
			if heldSince < 0 {
				heldSince = sent
				g.log.Warn(logline.LeaseHeld, "lease_ms", g.cfg.Lease.Milliseconds())
			}
			if sent-heldSince > g.cfg.Lease+2*g.cfg.Period() {
				return fmt.Errorf("%w: %q is still leased after %v; choose another --id or stop the other gateway",
					ErrIDInUse, g.cfg.ID, (sent - heldSince).Round(time.Millisecond))
			}
		default:
			g.log.Warn(logline.LeaseRenewFailed, "err", err.Error())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(g.cfg.Period()):
		}
	}
}
