package fit

import (
	"time"

	"stormsim/calibrate/measured"
	"stormsim/internal/quantile"
	"stormsim/models"
	"stormsim/sim"
)

// Lab is the lab's own client process, and its restarts of a gateway, as
// the runs measured them: figures of the lab, not of the gateway. The
// lab's clients run in one process on the machine the survivor and
// PostgreSQL share, and the lab starts its gateways as processes on that
// machine; a user's clients are separate devices, their gateways start as
// their deployment starts them, and none of this is theirs.
type Lab struct {
	// Cores is the machine's CPUs, 0 when the runs did not measure it;
	// ClientsCores the clients' process's CPU during the crash storm,
	// cores, the median over the runs (measured.Load.ClientsCores).
	Cores        int     `json:"cores,omitempty"`
	ClientsCores float64 `json:"clients_cores,omitempty"`
	// NoticesMs are when the clients noticed the kill, ms after it, at 0,
	// 1, ..., 100 % (measured.Run.NoticePointsMs; over several runs the
	// median of each point): how long the one process took to read its
	// connections' resets. At 1,000 clients on this project's machine
	// the median client noticed 25-185 ms after the kill, at 2,000
	// 240-650 ms: the more clients, the longer. Empty for runs measured
	// before the notices were kept.
	NoticesMs []float64 `json:"notices_ms,omitempty"`
	// StartupMs is a rolling deploy's restart of a gateway here, ms: from
	// the last close its clients read (where the model's drain ends) to
	// its successor in the clients' list (storm.DeployDrain BackMs -
	// LastCloseMs), the median over the runs' drains; 0 without a deploy
	// or for runs measured before the closes were kept. On this project's
	// machine 80-190 ms (the process's exit and a new one's start, 15-50
	// ms of it), where a deploy config may have been written for another.
	StartupMs float64 `json:"startup_ms,omitempty"`
	// GoawayLegsMs are the drained clients' goaways' ways, ms at 0, 1,
	// ..., 100 % (measured.Drain.GoawayLegsMs; over several runs the
	// median of each point): from the gateway writing a goaway to its
	// client's session ending, the one process reading a thousand closes.
	// Empty for runs without a drain, or measured before they were kept.
	GoawayLegsMs []float64 `json:"goaway_legs_ms,omitempty"`
	// GoneMs are how long after a client gave up the survivor knew it had
	// gone, ms at 0, 1, ..., 100 % (measured.Run.GonePointsMs; over
	// several runs the median of each point): the one process firing its
	// timeouts late and its closes reaching the survivor. Empty for runs
	// in which the survivor dropped no handshake unclaimed.
	GoneMs []float64 `json:"gone_ms,omitempty"`
	// FirstLateMs are how late the clients' first attempts were sent, ms
	// after they were due, at 0, 1, ..., 100 % (measured.Run.
	// FirstLatePointsMs; over several runs the median of each point):
	// network.first_out adds them to the first clients' way
	// (FirstWave.FirstOut). Empty for runs measured before they were kept.
	FirstLateMs []float64 `json:"first_late_ms,omitempty"`
}

// LabOf measures the lab's client process over runs. The machine's
// figures are left out when the runs disagree on its cores (not one
// machine) or did not measure it.
func LabOf(runs []*measured.Run) Lab {
	var l Lab
	var clients []float64
	var points [][]float64
	var startups []float64
	var legs, gone, late [][]float64
	for _, r := range runs {
		if len(r.FirstLatePointsMs) == measured.NoticePoints {
			late = append(late, r.FirstLatePointsMs)
		}
		if len(r.GonePointsMs) == measured.NoticePoints {
			gone = append(gone, r.GonePointsMs)
		}
		if r.Drain != nil && len(r.Drain.GoawayLegsMs) >= minSamples {
			legs = append(legs, measured.PointsOf(r.Drain.GoawayLegsMs))
		}
		if r.Deploy != nil {
			for _, d := range r.Deploy.Drains {
				if d.LastCloseMs > 0 {
					startups = append(startups, d.BackMs-d.LastCloseMs)
				}
			}
		}
		if r.Load.Measured && r.Load.Cores > 0 {
			if l.Cores != 0 && l.Cores != r.Load.Cores {
				l.Cores, clients = -1, nil
			}
			if l.Cores >= 0 {
				l.Cores = r.Load.Cores
				clients = append(clients, r.Load.ClientsCores)
			}
		}
		if len(r.NoticePointsMs) == measured.NoticePoints {
			points = append(points, r.NoticePointsMs)
		}
	}
	if len(clients) == 0 {
		l.Cores = 0
	} else {
		l.ClientsCores = roundTo(quantile.Median(clients), 0.01)
	}
	if len(startups) > 0 {
		l.StartupMs = roundTo(quantile.Median(startups), 0.001)
	}
	l.NoticesMs, l.GoawayLegsMs, l.GoneMs, l.FirstLateMs = medianPoints(points), medianPoints(legs), medianPoints(gone), medianPoints(late)
	return l
}

// medianPoints is the median of each point over runs' points
// (measured.PointsOf each): non-decreasing, as each run's are; nil for
// no runs.
func medianPoints(runs [][]float64) []float64 {
	if len(runs) == 0 {
		return nil
	}
	out := make([]float64, measured.NoticePoints)
	column := make([]float64, len(runs))
	for i := range out {
		for k, p := range runs {
			column[k] = p[i]
		}
		out[i] = roundTo(quantile.Median(column), 0.001)
	}
	return out
}

// pointsDistribution is the empirical distribution of points (ms,
// non-decreasing), or, when they are all one value, that value fixed;
// false for fewer than two points.
func pointsDistribution(points []float64) (models.Distribution, bool) {
	if len(points) < 2 {
		return models.Distribution{}, false
	}
	if points[0] == points[len(points)-1] {
		return models.Distribution{Dist: models.DistFixed, Value: durationMs(points[0])}, true
	}
	d := models.Distribution{Dist: models.DistEmpirical, Points: make([]time.Duration, len(points))}
	for i, v := range points {
		d.Points[i] = durationMs(v)
	}
	return d, true
}

// NoticeDelay is detection.delay for the lab's clients: the empirical
// distribution of their notices, or, when they all noticed at once, that
// time; false when the runs did not keep the notices.
func (l Lab) NoticeDelay() (models.Distribution, bool) { return pointsDistribution(l.NoticesMs) }

// WithGoawaysOf returns m with network.goaway as l measured it: the way
// of a drain's goaways to the lab's clients, which a reserved hint's
// clients reach their slots that much after. False, and m unchanged,
// when l measured no drain's goaways.
func (m Model) WithGoawaysOf(l Lab) (Model, bool) {
	d, ok := pointsDistribution(l.GoawayLegsMs)
	if !ok {
		return m, false
	}
	m.Network.GoawayLeg = &d
	return m, true
}

// WithGoneOf returns m with network.gone as l measured it: how long
// after a client gave up the survivor knew, during which a gateway that
// skips departed clients' handshakes still claims for them. False, and m
// unchanged, when l measured none.
func (m Model) WithGoneOf(l Lab) (Model, bool) {
	d, ok := pointsDistribution(l.GoneMs)
	if !ok {
		return m, false
	}
	m.Network.GoneLeg = &d
	return m, true
}

// WithLab returns m for a storm of the lab whose client process l
// measured: m's detection.delay becomes l's notices (a reset), the rest
// as fitted. So a model fitted at one client count predicts the lab at
// another with the lab's clients as they were there. False, and m
// unchanged, when l has no notices or m's clients do not notice a reset.
func (m Model) WithLab(l Lab) (Model, bool) {
	d, ok := l.NoticeDelay()
	if !ok || m.Detection.Kind != models.DetectionReset {
		return m, false
	}
	m.Detection.Delay = d
	return m, true
}

// Restarts returns s with the lab's restart of a gateway as its deploy's
// start-up (deploy.startup = StartupMs), so a prediction of a deploy lab
// restarts its gateways as this machine did; false, and s unchanged,
// when s is no deploy or l measured none.
func (l Lab) Restarts(s *sim.Scenario) (*sim.Scenario, bool) {
	if s.Deploy == nil || l.StartupMs <= 0 {
		return s, false
	}
	c, d := *s, *s.Deploy
	d.Startup = durationMs(l.StartupMs)
	c.Deploy = &d
	return &c, true
}

// WithLegsOf returns m with the legs of here, a fit of the storm's own
// runs: the retries' (network.out and network.back) and, where here has
// them, the first attempts' (network.first_out and first_back). On the
// lab's machine the legs are mostly its client process's: out runs from
// when an attempt was due to the survivor's line for it, back from that
// line to the answer read, and the one process sends and reads later the
// more clients it holds (on this project's machine, the retries' out p50
// 11 ms at 1,000 clients and 89 ms at 4,000; the first attempts' way
// from the first notice to the first decision 37 ms at 500 clients, 114
// at 1,000 and 403 at 4,000 in one hour). So, like the notices, a
// prediction of a lab storm takes them at its own client count. False,
// and m unchanged, when here has no retries' legs.
func (m Model) WithLegsOf(here Model) (Model, bool) {
	out, back := here.Network.OutLeg, here.Network.BackLeg
	if out == nil || back == nil {
		return m, false
	}
	o, b := *out, *back
	m.Network.OutLeg, m.Network.BackLeg = &o, &b
	if first := here.Network.FirstOutLeg; first != nil {
		f := *first
		m.Network.FirstOutLeg = &f
	}
	if first := here.Network.FirstBackLeg; first != nil {
		f := *first
		m.Network.FirstBackLeg = &f
	}
	return m, true
}
