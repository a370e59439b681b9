package lab

import (
	"cmp"
	"math"
	"slices"

	"stormsim/calibrate/measured"
	"stormsim/gateway/storm"
	"stormsim/sim"
)

// tailFraction is the last part of the horizon the outcome looks at, and
// busyFloor and usefulCeiling its thresholds: the simulator's rule
// (sim.OutcomeMetastable).
const (
	tailFraction  = 0.1
	busyFloor     = 0.9
	usefulCeiling = 0.1
)

// outcomeOf judges a crash storm cut at horizonMs: crash is the clients'
// summary of it (counting only what happened before the horizon), claims
// every route claim of the survivor's log (before and after the horizon:
// a claim decided before the tail and done after it kept the survivor
// busy in it), skippedMs the decisions of the handshakes it dropped
// unclaimed.
func outcomeOf(crash storm.Summary, claims []measured.Claim, skippedMs []float64, horizonMs, windowMs float64) *measured.Outcome {
	o := &measured.Outcome{HorizonMs: horizonMs, Connected: int64(crash.Reconnected), TimedOut: crash.TimedOut,
		Shed: crash.ByStatus["503"], Converged: crash.AllReconnected}
	for _, s := range skippedMs {
		if s < horizonMs {
			o.Skipped++
		}
	}
	tailFrom := horizonMs * (1 - tailFraction)
	var served, useful int64
	var busy []span
	for _, c := range claims {
		if c.DoneMs < horizonMs {
			if c.Wasted {
				o.Wasted++
			} else {
				o.Useful++
			}
			if c.DoneMs >= 0 {
				o.AddClaim(int(c.DoneMs/windowMs), c.Wasted)
			}
			if c.DoneMs >= tailFrom {
				served++
				if !c.Wasted {
					useful++
				}
			}
		}
		if lo, hi := max(c.DecidedMs, tailFrom), min(c.DoneMs, horizonMs); lo < hi {
			busy = append(busy, span{lo, hi})
		}
	}
	o.FinishSeries()
	if tail := horizonMs - tailFrom; tail > 0 {
		o.TailBusy = covered(busy) / tail
	}
	if served > 0 {
		o.TailUseful = float64(useful) / float64(served)
	}
	switch {
	case o.Converged:
		o.Outcome = string(sim.OutcomeConverged)
	case served > 0 && o.TailBusy >= busyFloor && float64(useful) < usefulCeiling*float64(served):
		o.Outcome, o.Metastable = string(sim.OutcomeMetastable), true
	default:
		o.Outcome = string(sim.OutcomeUnfinished)
	}
	return o
}

// span is an interval [lo, hi) in ms.
type span struct{ lo, hi float64 }

// covered is the length of the union of spans.
func covered(spans []span) float64 {
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	total, end := 0.0, math.Inf(-1)
	for _, s := range spans {
		if s.hi > end {
			total += s.hi - max(s.lo, end)
			end = s.hi
		}
	}
	return total
}
