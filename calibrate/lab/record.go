package lab

import (
	"encoding/json"
	"io"
	"slices"
	"time"

	"stormsim/gateway/logline"
)

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
			if logline.IsLifecycle(l.Msg) { // per-handshake lines stay in the raw logs: the record has every attempt client-side
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
