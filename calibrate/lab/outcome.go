package lab

import (
	"cmp"
	"math"
	"slices"
	"time"

	"stormsim/calibrate/measured"
	"stormsim/gateway/storm"
	"stormsim/models"
)

// outcomeOf judges a crash storm cut at horizonMs by the simulator's rule
// (models.Judge), fed what the simulator feeds it: crash is the clients'
// summary of it (counting only what happened before the horizon), claims
// every route claim of the survivor's log (before and after the horizon:
// a claim decided before the tail and done after it kept the survivor
// busy in it), skippedMs the decisions of the handshakes it dropped
// unclaimed. The survivor is busy while it has a claim in hand (from its
// decision to its end); its rejections are answered before any database
// work and take no time the log can see.
func outcomeOf(crash storm.Summary, claims []measured.Claim, skippedMs []float64, horizonMs, windowMs float64) *measured.Outcome {
	o := &measured.Outcome{HorizonMs: horizonMs, Connected: int64(crash.Reconnected), TimedOut: crash.TimedOut,
		Shed: crash.ByStatus["503"], Converged: crash.AllReconnected}
	for _, s := range skippedMs {
		if s < horizonMs {
			o.Skipped++
		}
	}
	tally := models.NewTailTally(nanos(horizonMs), 1)
	byDecision := slices.SortedStableFunc(slices.Values(claims), func(a, b measured.Claim) int { return cmp.Compare(a.DecidedMs, b.DecidedMs) })
	for _, c := range byDecision {
		if c.DoneMs < horizonMs {
			if c.Wasted {
				o.Wasted++
			} else {
				o.Useful++
			}
			if c.DoneMs >= 0 {
				o.AddClaim(int(c.DoneMs/windowMs), c.Wasted)
			}
		}
		tally.Work(0, nanos(c.DecidedMs), nanos(c.DoneMs))
		tally.Claim(nanos(c.DoneMs), !c.Wasted)
	}
	o.FinishSeries()
	tail := tally.Tail()
	o.TailBusy, o.TailUseful = tail.BusyFraction(), tail.UsefulFraction()
	verdict := models.Judge(o.Converged, tail)
	o.Outcome, o.Metastable = string(verdict), verdict == models.OutcomeMetastable
	return o
}

// nanos is a time of the log, in ms, as a duration.
func nanos(ms float64) time.Duration {
	return time.Duration(math.Round(ms * float64(time.Millisecond)))
}
