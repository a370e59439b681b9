package fit

import (
	"errors"
	"slices"

	"stormsim/calibrate/measured"
	"stormsim/internal/quantile"
	"stormsim/models"
)

// The first wave's span runs between these quantiles of its decisions:
// the fastest and slowest few are left out (a client the machine starved,
// one that found the survivor idle).
const (
	waveLo = 0.02
	waveHi = 0.98
)

// FirstWave is how the clients' first attempts reached the survivor's
// decision, per run and pooled (the median over the runs).
type FirstWave struct {
	Runs []WaveRun `json:"runs"`
	// OnsetMs is how long after the kill the first attempts begin to be
	// decided; NoticeMs how long after it the first clients had noticed
	// (detection.delay). The rest, OnsetMs - NoticeMs, is the first
	// attempts' way to the decision (network.first_out), which a drained
	// client, noticing at its close, takes too.
	OnsetMs  float64 `json:"onset_ms"`
	NoticeMs float64 `json:"notice_ms"`
	// DecidePerS is capacity.decide_per_s: how fast the survivor decides
	// a backlog of handshakes.
	DecidePerS float64 `json:"decide_per_s"`
}

// FirstOut is network.first_out as the first wave gives it: the way
// OnsetMs - NoticeMs, which the first clients took, plus how late each
// client's first attempt was sent (late: Lab.FirstLateMs, points in ms),
// the one client process firing its timers later the more clients it
// holds; fixed at the way when late is empty (runs measured before it
// was kept). False when no run's first wave was fitted.
func (w FirstWave) FirstOut(late []float64) (models.Distribution, bool) {
	if len(w.Runs) == 0 {
		return models.Distribution{}, false
	}
	way := w.OnsetMs - w.NoticeMs
	if len(late) < 2 {
		return models.Distribution{Dist: models.DistFixed, Value: durationMs(way)}, true
	}
	points := make([]float64, len(late))
	for i, l := range late {
		points[i] = way + l
	}
	return pointsDistribution(points)
}

// WithFirstOutOf returns m with network.first_out from w and the lab's
// lateness l (FirstOut): the first attempts' way in a storm whose runs
// fit a first wave but not the rest (nobody refused: no legs to time).
// False, and m unchanged, when w has none.
func (m Model) WithFirstOutOf(w FirstWave, l Lab) (Model, bool) {
	d, ok := w.FirstOut(l.FirstLateMs)
	if !ok {
		return m, false
	}
	m.Network.FirstOutLeg = &d
	return m, true
}

// WaveRun is one run's first wave.
type WaveRun struct {
	Run      int     `json:"run"`
	Attempts int     `json:"attempts"`  // first attempts whose decision is known
	OnsetMs  float64 `json:"onset_ms"`  // their decisions' 2nd percentile
	NoticeMs float64 `json:"notice_ms"` // the clients' notices' 2nd percentile (measured.Run.FirstNoticeMs), at most OnsetMs
	SpanMs   float64 `json:"span_ms"`   // from the 2nd to the 98th percentile
	// WavePerS is 0.96 x Attempts / SpanMs: the first wave's rate, a lower
	// bound of the survivor's decision rate (the clients may not send
	// faster: the initial jitter spreads them, and so does their process);
	// BacklogPerS is the other lower bound (Backlog); DecidePerS the larger.
	WavePerS    float64 `json:"wave_per_s"`
	BacklogPerS float64 `json:"backlog_per_s"`
	DecidePerS  float64 `json:"decide_per_s"`
}

// FirstWaveOf measures each run's first wave and takes the medians: the
// onset (ms after the kill) and capacity.decide_per_s (handshakes a
// second), as a fit does; a warm-up's run gives the hour's decision rate.
func FirstWaveOf(runs []*measured.Run) (FirstWave, error) {
	var w FirstWave
	var onsets, notices, rates []float64
	for _, r := range runs {
		var decided []float64
		for _, h := range r.Handshakes {
			if at, ok := h.DecidedMs(); ok && h.Attempt == 1 {
				decided = append(decided, at)
			}
		}
		if len(decided) < minSamples {
			continue
		}
		slices.Sort(decided)
		wr := WaveRun{Run: r.Run, Attempts: len(decided), OnsetMs: quantile.NearestRank(decided, waveLo)}
		wr.NoticeMs = min(max(r.FirstNoticeMs, 0), wr.OnsetMs)
		wr.SpanMs = quantile.NearestRank(decided, waveHi) - wr.OnsetMs
		if wr.SpanMs > 0 {
			wr.WavePerS = 1000 * (waveHi - waveLo) * float64(len(decided)) / wr.SpanMs
		}
		if b, ok := measureBacklog(r); ok {
			wr.BacklogPerS = b.DecidePerS
		}
		wr.DecidePerS = roundTo(max(wr.WavePerS, wr.BacklogPerS), 1)
		w.Runs = append(w.Runs, wr)
		onsets, notices = append(onsets, wr.OnsetMs), append(notices, wr.NoticeMs)
		if wr.DecidePerS > 0 {
			rates = append(rates, wr.DecidePerS)
		}
	}
	if len(onsets) == 0 || len(rates) == 0 {
		return w, errors.New("capacity.decide_per_s: no run has the survivor's decisions on 3 first attempts or more")
	}
	w.OnsetMs, w.DecidePerS = roundTo(quantile.Median(onsets), 0.001), quantile.Median(rates)
	w.NoticeMs = min(roundTo(quantile.Median(notices), 0.001), w.OnsetMs)
	return w, nil
}
