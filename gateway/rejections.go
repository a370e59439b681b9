package gateway

import (
	"context"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"stormsim/gateway/logline"
	"stormsim/gateway/protocol"
)

// RejectionSummaryEvery is the interval of the "rejections" summary line.
const RejectionSummaryEvery = time.Second

// maxEchoBytes bounds any client-supplied value echoed in an answer or a log
// line; the rest is replaced by its length.
const maxEchoBytes = 64

// truncate shortens a client-supplied value for echoing.
func truncate(s string) string {
	if len(s) <= maxEchoBytes {
		return s
	}
	return s[:maxEchoBytes] + "...(" + strconv.Itoa(len(s)) + " bytes)"
}

// rejectionCounts accumulates refusals per reason between summary lines.
type rejectionCounts struct {
	mu     sync.Mutex
	counts map[string]int64
}

func (r *rejectionCounts) add(reason string) {
	r.mu.Lock()
	if r.counts == nil {
		r.counts = map[string]int64{}
	}
	r.counts[reason]++
	r.mu.Unlock()
}

// take returns the counts so far and starts afresh.
func (r *rejectionCounts) take() map[string]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.counts
	r.counts = nil
	return out
}

// summarizeRejections writes a "rejections" line every RejectionSummaryEvery
// in which anything was refused, until ctx ends (then once more).
func (g *Gateway) summarizeRejections(ctx context.Context) {
	t := time.NewTicker(RejectionSummaryEvery)
	defer t.Stop()
	flush := func() {
		if counts := g.rejections.take(); len(counts) > 0 {
			attrs := make([]any, 0, len(counts))
			for _, reason := range slices.Sorted(maps.Keys(counts)) {
				attrs = append(attrs, slog.Int64(reason, counts[reason]))
			}
			g.log.Info(logline.Rejections, "interval_ms", RejectionSummaryEvery.Milliseconds(), slog.Group("by_reason", attrs...))
		}
	}
	for {
		select {
		case <-ctx.Done():
			flush()
			return
		case <-t.C:
			flush()
		}
	}
}

// writeRejection counts, logs and answers a refused handshake.
func (g *Gateway) writeRejection(w http.ResponseWriter, r *http.Request, rej *rejection) {
	g.metrics.rejectedCounter(rej.reason).Add(1)
	if rej.status == protocol.StatusTooManyRequests || rej.status == protocol.StatusServiceUnavailable {
		w.Header().Set(protocol.HeaderRetryAfter, strconv.Itoa(g.cfg.retryAfterSeconds()))
	}
	level := slog.LevelDebug
	if g.cfg.LogRejections == RejectionEach {
		level = slog.LevelInfo
	} else {
		g.rejections.add(rej.reason)
	}
	if g.log.Enabled(r.Context(), level) {
		args := []any{logline.KeyStatus, rej.status, logline.KeyReason, rej.reason, "cause", rej.message, logline.KeyDevice, rej.device, "remote", r.RemoteAddr}
		if rej.detail != "" {
			args = append(args, "err", rej.detail)
		}
		g.log.Log(r.Context(), level, logline.Rejected, args...)
	}
	http.Error(w, rej.message, rej.status)
}
