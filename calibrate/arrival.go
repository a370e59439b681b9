package calibrate

import (
	"net/http"
	"slices"
	"time"

	"gonum.org/v1/gonum/stat"

	"stormsim/gateway/client"
)

// Arrival is a phase's attempts per window counted where the simulator
// counts them: when they reach the gateway, rtt/2 after they were sent.
// A rejected attempt's rtt is its whole latency (the gateway does no work
// for it), so it is placed at the midpoint of sent and answered. An
// admitted attempt's answer also waited for the route claim, so its midpoint
// would fall up to half a claim too late; it is placed at sent + RTTMs/2,
// the median rejected latency (capped at its own latency). Window i covers
// [i*window, (i+1)*window) from the phase's origin.
type Arrival struct {
	RTTMs float64 `json:"rtt_ms"`
	Series
}

// arrivalSeries counts the attempts sent in [from, until).
func arrivalSeries(events []client.Event, from, until time.Time, window time.Duration) Arrival {
	var phase []client.Event
	var rejected []float64
	for _, ev := range events {
		if ev.Kind != client.EventAttempt || ev.Sent.Before(from) || !ev.Sent.Before(until) {
			continue
		}
		phase = append(phase, ev)
		if ev.Status != http.StatusSwitchingProtocols {
			rejected = append(rejected, ms(ev.Answered.Sub(ev.Sent)))
		}
	}
	var a Arrival
	if len(rejected) > 0 {
		a.RTTMs = stat.Quantile(0.5, stat.Empirical, slices.Sorted(slices.Values(rejected)), nil)
	}
	rtt := time.Duration(a.RTTMs * float64(time.Millisecond))
	for _, ev := range phase {
		latency := ev.Answered.Sub(ev.Sent)
		if ev.Status == http.StatusSwitchingProtocols {
			latency = min(latency, rtt)
		}
		i := int((ev.Sent.Sub(from) + latency/2) / window)
		countWindows(&a.Attempts, i)
		if ev.Status == http.StatusSwitchingProtocols {
			countWindows(&a.Accepts, i)
		} else {
			countWindows(&a.Rejects, i)
		}
	}
	a.finish()
	return a
}
