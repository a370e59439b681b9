package calibrate

import (
	"encoding/json"
	"io"
	"math"
	"slices"
	"time"
)

// lifecycleMessages are the gateway log lines copied into real.ndjson: the
// process's life, leases and sweeps, and the drain. Per-handshake lines are
// left in the raw logs; every attempt is already recorded client-side.
var lifecycleMessages = []string{"start", "listening", "sweep_reclaimed", "sweep_paused", "stale_routes_released",
	"lease_lost", "lease_regained", "lease_renew_failed", "lease_expire_failed", "listen_lost", "listen_reconnected",
	"drain_start", "drain_done", "exit"}

// runMarker opens each real run in real.ndjson; the storm's own lines
// (header, client events, phase and settled markers) follow, timed from the
// storm's t0.
type runMarker struct {
	Event  string `json:"event"` // "run"
	Client int    `json:"client"`
	Run    int    `json:"run"`
	Seed   uint64 `json:"seed"`
	Schema string `json:"schema"`
}

// lifecycleLine is a gateway's lifecycle event: a line of its log, or a
// signal the harness sent it.
type lifecycleLine struct {
	At      time.Time
	Gateway string
	Action  string         // harness: "sigkill", "sigterm", "exited N"
	Log     map[string]any // gateway log line
}

// lifecycleRecord is a lifecycleLine in real.ndjson, timed like the
// storm's lines: milliseconds since the storm's t0 (negative before it).
type lifecycleRecord struct {
	TMs     float64        `json:"t_ms"`
	Event   string         `json:"event"` // "gateway" (its log) or "harness" (a signal sent)
	Client  int            `json:"client"`
	Run     int            `json:"run"`
	Gateway string         `json:"gateway_id"`
	Action  string         `json:"action,omitempty"`
	Log     map[string]any `json:"log,omitempty"`
}

func writeMarker(w io.Writer, m runMarker) {
	if w != nil {
		json.NewEncoder(w).Encode(m)
	}
}

// writeLifecycle appends the run's lifecycle lines, in time order, after
// the storm has flushed its own.
func writeLifecycle(w io.Writer, run int, t0 time.Time, procs []*gatewayProc, marks []lifecycleLine) {
	if w == nil {
		return
	}
	lines := slices.Clone(marks)
	for _, p := range procs {
		for _, l := range p.log.all() {
			if slices.Contains(lifecycleMessages, l.Msg) {
				lines = append(lines, lifecycleLine{At: l.Time, Gateway: p.spec.ID, Log: l.Fields})
			}
		}
	}
	slices.SortStableFunc(lines, func(a, b lifecycleLine) int { return a.At.Compare(b.At) })
	enc := json.NewEncoder(w)
	for _, l := range lines {
		rec := lifecycleRecord{TMs: ms(l.At.Sub(t0)), Event: "gateway", Client: -1, Run: run, Gateway: l.Gateway, Action: l.Action, Log: l.Log}
		if l.Action != "" {
			rec.Event = "harness"
		}
		enc.Encode(rec)
	}
}

// nearestRank returns nearest-rank quantiles (the ceil(q*n)-th smallest)
// of values, as storm and sim do.
func nearestRank(values []float64) Quantiles {
	if len(values) == 0 {
		return Quantiles{}
	}
	v := slices.Sorted(slices.Values(values))
	at := func(q float64) float64 {
		k := int(math.Ceil(q*float64(len(v)))) - 1
		return v[min(max(k, 0), len(v)-1)]
	}
	return Quantiles{P50: at(0.5), P90: at(0.9), P99: at(0.99), Max: v[len(v)-1]}
}
