package fit

import (
	"slices"

	"stormsim/calibrate/measured"
	"stormsim/internal/quantile"
	"stormsim/models"
)

// Goaways is how fast the drained gateway's clients were let go, per run
// and pooled (the median over the runs): capacity.goaway_per_s. A client
// reconnects when its session has ended, the goaway read and the close
// after it, so that is what is timed: on one machine with the lab's
// clients the close came up to several hundred ms after the goaway, the
// clients' process reading a thousand of each.
type Goaways struct {
	Runs []GoawayRun `json:"runs"`
	// PerS is capacity.goaway_per_s; 0 when no run drained all at once.
	PerS float64 `json:"per_s"`
	// BusyWaysMs are, per run that drained all at once (as PerS), the
	// median of its drained clients' first attempts' ways while the drain
	// still ended sessions (measured.Drain.BusyWaysMs), ms:
	// network.drain_first_out takes one of them per drain, scaled by the
	// drain's load (models.CapacitySpec.DrainLoad): measured at the full
	// rate, a paced drain's says little of it. Empty when no run
	// measured them.
	BusyWaysMs []float64 `json:"busy_ways_ms,omitempty"`
}

// DrainFirstOut is network.drain_first_out: the runs' busy ways, one per
// drain (a model's drain waits as one of the measured drains did), fixed
// when there is one or they agree; nil when no run measured them.
func (g Goaways) DrainFirstOut() *models.Distribution {
	ways := slices.Sorted(slices.Values(g.BusyWaysMs))
	switch {
	case len(ways) == 0:
		return nil
	case len(ways) == 1:
		return &models.Distribution{Dist: models.DistFixed, Value: durationMs(ways[0])}
	}
	d, _ := pointsDistribution(ways)
	return &d
}

// GoawayRun is one run's drain: its clients' sessions' ends (the goaways
// as they received them, in runs measured before the ends were kept),
// from the SIGTERM.
type GoawayRun struct {
	Run     int     `json:"run"`
	Goaways int     `json:"goaways"`
	FirstMs float64 `json:"first_ms"` // their 2nd percentile
	SpanMs  float64 `json:"span_ms"`  // from the 2nd to the 98th percentile
	PerS    float64 `json:"per_s"`    // 0.96 x Goaways / SpanMs
}

// fitGoaways measures the drains that told every connection at once (the
// seed's drain, or pace all): the gateway then writes its goaways and
// closes as fast as it can, and the time its clients' sessions take to end
// is the rate. A
// paced drain's spread is its pace's, and says nothing of it.
func fitGoaways(runs []*measured.Run) Goaways {
	var g Goaways
	var rates []float64
	for _, r := range runs {
		d := r.Drain
		if d == nil || (d.Pace != "" && d.Pace != "all") {
			continue
		}
		ends := d.ClosesMs
		if len(ends) == 0 {
			ends = d.GoawaysMs // measured before the closes were kept
		}
		if len(ends) < minSamples {
			continue
		}
		at := slices.Sorted(slices.Values(ends))
		gr := GoawayRun{Run: r.Run, Goaways: len(at), FirstMs: quantile.NearestRank(at, waveLo)}
		gr.SpanMs = quantile.NearestRank(at, waveHi) - gr.FirstMs
		if gr.SpanMs > 0 {
			gr.PerS = roundTo(1000*(waveHi-waveLo)*float64(len(at))/gr.SpanMs, 1)
			rates = append(rates, gr.PerS)
		}
		g.Runs = append(g.Runs, gr)
	}
	if len(rates) > 0 {
		g.PerS = quantile.Median(rates)
	}
	for _, r := range runs {
		if d := r.Drain; d != nil && (d.Pace == "" || d.Pace == "all") && len(d.BusyWaysMs) >= minSamples {
			g.BusyWaysMs = append(g.BusyWaysMs, roundTo(quantile.Median(r.Drain.BusyWaysMs), 0.001))
		}
	}
	return g
}
