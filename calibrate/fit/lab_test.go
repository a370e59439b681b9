package fit

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"stormsim/calibrate/measured"
	"stormsim/gateway/storm"
	"stormsim/models"
	"stormsim/sim"
)

// pointsTimes returns NoticePoints points, point i at f(i) ms.
func pointsTimes(f func(i int) float64) []float64 {
	p := make([]float64, measured.NoticePoints)
	for i := range p {
		p[i] = f(i)
	}
	return p
}

// TestLabOf: three runs whose clients noticed at i, 2i and 4i ms at
// percent i, and whose clients' process took 0.30, 0.50 and 0.40 cores
// of 2: the lab is the median of each, 2i ms at percent i and 0.40
// cores; the detection delay is those points, in microseconds.
func TestLabOf(t *testing.T) {
	var runs []*measured.Run
	for k, c := range []struct {
		scale, cores float64
	}{{1, 0.30}, {2, 0.50}, {4, 0.40}} {
		runs = append(runs, &measured.Run{Run: k + 1, Load: measured.Load{Measured: true, Cores: 2, ClientsCores: c.cores},
			NoticePointsMs: pointsTimes(func(i int) float64 { return c.scale * float64(i) })})
	}
	l := LabOf(runs)
	if l.Cores != 2 || l.ClientsCores != 0.40 {
		t.Errorf("cores %d, clients %.2f; want 2 and 0.40", l.Cores, l.ClientsCores)
	}
	if want := pointsTimes(func(i int) float64 { return 2 * float64(i) }); !slices.Equal(l.NoticesMs, want) {
		t.Errorf("notices %v, want 2i ms at percent i", l.NoticesMs)
	}
	d, ok := l.NoticeDelay()
	if !ok || d.Dist != models.DistEmpirical || len(d.Points) != measured.NoticePoints || d.Points[50] != 100*time.Millisecond || d.Points[100] != 200*time.Millisecond {
		t.Errorf("delay %+v (%v), want empirical, 100 ms at 50 %%, 200 ms at 100 %%", d, ok)
	}
	if err := d.Validate(); err != nil {
		t.Errorf("delay: %v", err)
	}

	// A run on another machine: the machine's figures say nothing.
	runs[1].Load.Cores = 4
	if l := LabOf(runs); l.Cores != 0 || l.ClientsCores != 0 || len(l.NoticesMs) != measured.NoticePoints {
		t.Errorf("two machines: %+v, want no machine figures, the notices kept", l)
	}
	// Runs measured before the notices were kept: no notice delay.
	for _, r := range runs {
		r.NoticePointsMs = nil
	}
	if _, ok := LabOf(runs).NoticeDelay(); ok {
		t.Error("a notice delay from runs without notices")
	}
	// Every client at once: a fixed delay.
	one := Lab{NoticesMs: pointsTimes(func(int) float64 { return 7.5 })}
	if d, ok := one.NoticeDelay(); !ok || d.Dist != models.DistFixed || d.Value != 7500*time.Microsecond {
		t.Errorf("all at 7.5 ms: %+v", d)
	}
}

// TestWithLab: a reset's delay becomes the lab's notices, the rest of the
// model as it was; a heartbeat's clients notice by their own timers, and
// a lab without notices changes nothing.
func TestWithLab(t *testing.T) {
	m := Model{Capacity: models.CapacitySpec{AdmitPerS: 500},
		Detection: models.DetectionSpec{Kind: models.DetectionReset, Delay: models.Distribution{Dist: models.DistFixed, Value: 5 * time.Millisecond}}}
	l := Lab{NoticesMs: pointsTimes(func(i int) float64 { return float64(i) })}
	got, ok := m.WithLab(l)
	if !ok || got.Detection.Delay.Dist != models.DistEmpirical || got.Detection.Delay.Points[100] != 100*time.Millisecond || got.Capacity != m.Capacity {
		t.Errorf("reset: %+v (%v)", got, ok)
	}
	if m.Detection.Delay.Dist != models.DistFixed {
		t.Error("WithLab changed its receiver")
	}
	hb := m
	hb.Detection = models.DetectionSpec{Kind: models.DetectionHeartbeat, Ping: time.Second, Idle: 3 * time.Second}
	if got, ok := hb.WithLab(l); ok || !reflect.DeepEqual(got.Detection, hb.Detection) {
		t.Errorf("heartbeat: %+v (%v), want unchanged", got.Detection, ok)
	}
	if got, ok := m.WithLab(Lab{}); ok || got.Detection.Delay.Dist != models.DistFixed {
		t.Errorf("no notices: %+v (%v), want unchanged", got.Detection, ok)
	}
}

// TestRestarts: two deploy runs of three drains each, back 20, 30, 90
// and 10, 25, 40 ms after their clients' last closes (their exits 5 ms
// after those): the median of the six by the
// project's rule (quantile.Median: the lower middle value), 25 ms, is the
// prediction's deploy.startup, the scenario given left as it was;
// a storm with no deploy, or runs with none, keep the config's.
func TestRestarts(t *testing.T) {
	drains := func(closes, backs [3]float64) *storm.DeploySummary {
		var d storm.DeploySummary
		for g := range 3 {
			d.Drains = append(d.Drains, storm.DeployDrain{Gateway: g, StartMs: closes[g] - 100, LastCloseMs: closes[g], ExitMs: closes[g] + 5, BackMs: backs[g]})
		}
		return &d
	}
	runs := []*measured.Run{
		{Run: 1, Deploy: drains([3]float64{100, 1200, 2300}, [3]float64{120, 1230, 2390})},
		{Run: 2, Deploy: drains([3]float64{150, 1300, 2500}, [3]float64{160, 1325, 2540})},
	}
	l := LabOf(runs)
	if l.StartupMs != 25 {
		t.Errorf("startup %v ms, want 25 (the lower median of 10, 20, 25, 30, 40, 90)", l.StartupMs)
	}
	s := &sim.Scenario{Name: "deploy", Deploy: &sim.DeploySpec{Startup: 400 * time.Millisecond, Pause: time.Second}}
	got, ok := l.Restarts(s)
	if !ok || got.Deploy.Startup != 25*time.Millisecond || got.Deploy.Pause != time.Second || s.Deploy.Startup != 400*time.Millisecond {
		t.Errorf("restarts: %+v (%v), given %+v; want startup 25 ms, the pause kept, the given unchanged", got.Deploy, ok, s.Deploy)
	}
	if got, ok := l.Restarts(&sim.Scenario{Name: "crash"}); ok || got.Deploy != nil {
		t.Errorf("no deploy: %+v (%v)", got.Deploy, ok)
	}
	// Runs measured before the closes were kept: no start-up measured.
	for _, r := range runs {
		for k := range r.Deploy.Drains {
			r.Deploy.Drains[k].LastCloseMs = 0
		}
	}
	if got, ok := LabOf(runs).Restarts(s); ok || got != s {
		t.Errorf("no deploy measured: %+v (%v)", got.Deploy, ok)
	}
}

// TestWithLegsOf: a model fitted at another count takes every leg of the
// storm's own fit: the retries' out and back (lognormals of 89 and 61 ms
// medians) and the first attempts' out and back (fixed 403 ms, 228 ms
// median, as fitted at 4,000 clients), keeping its own server time and
// capacity; a fit with no first legs leaves m's; a fit without legs
// changes nothing.
func TestWithLegsOf(t *testing.T) {
	ln := func(median time.Duration) *models.Distribution {
		return &models.Distribution{Dist: models.DistLognormal, Median: median, Sigma: 0.5}
	}
	fixed := func(v time.Duration) *models.Distribution {
		return &models.Distribution{Dist: models.DistFixed, Value: v}
	}
	m := Model{Capacity: models.CapacitySpec{AdmitPerS: 1478},
		Network: models.NetworkSpec{OutLeg: ln(11 * time.Millisecond), BackLeg: ln(2 * time.Millisecond),
			FirstOutLeg: fixed(114 * time.Millisecond), FirstBackLeg: ln(8 * time.Millisecond), ServerTime: *ln(time.Millisecond)}}
	here := Model{Capacity: models.CapacitySpec{AdmitPerS: 991},
		Network: models.NetworkSpec{OutLeg: ln(89 * time.Millisecond), BackLeg: ln(61 * time.Millisecond),
			FirstOutLeg: fixed(403 * time.Millisecond), FirstBackLeg: ln(228 * time.Millisecond), ServerTime: *ln(5 * time.Millisecond)}}
	got, ok := m.WithLegsOf(here)
	n := got.Network
	if !ok || n.OutLeg.Median != 89*time.Millisecond || n.BackLeg.Median != 61*time.Millisecond ||
		n.FirstOutLeg.Value != 403*time.Millisecond || n.FirstBackLeg.Median != 228*time.Millisecond ||
		n.ServerTime.Median != time.Millisecond || got.Capacity.AdmitPerS != 1478 {
		t.Errorf("with the legs: %+v (%v), want out 89 ms, back 61 ms, first out 403 ms, first back 228 ms, the rest m's", n, ok)
	}
	if m.Network.OutLeg.Median != 11*time.Millisecond || m.Network.FirstOutLeg.Value != 114*time.Millisecond {
		t.Error("WithLegsOf changed its receiver")
	}
	if n.FirstOutLeg == here.Network.FirstOutLeg || n.OutLeg == here.Network.OutLeg {
		t.Error("WithLegsOf shares here's distributions rather than copying them")
	}
	here.Network.FirstOutLeg, here.Network.FirstBackLeg = nil, nil
	if got, ok := m.WithLegsOf(here); !ok || got.Network.FirstOutLeg.Value != 114*time.Millisecond || got.Network.FirstBackLeg.Median != 8*time.Millisecond {
		t.Errorf("no first legs here: %+v (%v), want m's", got.Network, ok)
	}
	if got, ok := m.WithLegsOf(Model{}); ok || got.Network.OutLeg.Median != 11*time.Millisecond {
		t.Errorf("no legs: %+v (%v), want m unchanged", got.Network, ok)
	}
}

// TestGoawayLegs: three drains whose 101 clients' goaways took 0, 1, ...,
// 100 ms, twice that and three times that from their goaway_sent lines
// to their sessions' ends. Each run's points are its own values (101 of
// them: percent i is the i-th least), so the lab's are the median of
// each, 2i ms at percent i, and network.goaway is that, empirical; a run
// with two legs only (fewer than 3) and one without a drain are left out.
// A lab without drains leaves the model alone.
func TestGoawayLegs(t *testing.T) {
	var runs []*measured.Run
	for k, scale := range []float64{1, 2, 3} {
		legs := pointsTimes(func(i int) float64 { return scale * float64(100-i) }) // in no order
		runs = append(runs, &measured.Run{Run: k + 1, Drain: &measured.Drain{GoawayLegsMs: legs}})
	}
	runs = append(runs, &measured.Run{Run: 4, Drain: &measured.Drain{GoawayLegsMs: []float64{900, 900}}}, &measured.Run{Run: 5})
	l := LabOf(runs)
	if want := pointsTimes(func(i int) float64 { return 2 * float64(i) }); !slices.Equal(l.GoawayLegsMs, want) {
		t.Fatalf("goaway legs %v, want 2i ms at percent i", l.GoawayLegsMs)
	}
	m, ok := Model{}.WithGoawaysOf(l)
	g := m.Network.GoawayLeg
	if !ok || g == nil || g.Dist != models.DistEmpirical || g.Points[0] != 0 || g.Points[50] != 100*time.Millisecond || g.Points[100] != 200*time.Millisecond {
		t.Fatalf("network.goaway %+v (%v), want empirical, 0 at 0 %%, 100 ms at 50 %%, 200 ms at 100 %%", g, ok)
	}
	if err := g.Validate(); err != nil {
		t.Errorf("network.goaway: %v", err)
	}
	if m, ok := (Model{}).WithGoawaysOf(LabOf(runs[3:])); ok || m.Network.GoawayLeg != nil {
		t.Errorf("no drain of 3 clients or more: %+v (%v), want the model alone", m.Network.GoawayLeg, ok)
	}
}

// TestGoneOf: three runs whose survivor knew of its clients' departures
// i, 3i and 2i ms after their deadlines at percent i (and one that
// dropped nothing): the lab is the median of each point, 2i ms, and
// network.gone that empirical distribution.
func TestGoneOf(t *testing.T) {
	var runs []*measured.Run
	for k, scale := range []float64{1, 3, 2} {
		runs = append(runs, &measured.Run{Run: k + 1, GonePointsMs: pointsTimes(func(i int) float64 { return scale * float64(i) })})
	}
	runs = append(runs, &measured.Run{Run: 4})
	l := LabOf(runs)
	if want := pointsTimes(func(i int) float64 { return 2 * float64(i) }); !slices.Equal(l.GoneMs, want) {
		t.Fatalf("gone %v, want 2i ms at percent i", l.GoneMs)
	}
	m, ok := Model{}.WithGoneOf(l)
	g := m.Network.GoneLeg
	if !ok || g == nil || g.Dist != models.DistEmpirical || g.Points[50] != 100*time.Millisecond || g.Points[100] != 200*time.Millisecond {
		t.Fatalf("network.gone %+v (%v), want empirical, 100 ms at 50 %%, 200 ms at 100 %%", g, ok)
	}
	if m, ok := (Model{}).WithGoneOf(LabOf(runs[3:])); ok || m.Network.GoneLeg != nil {
		t.Errorf("no handshake dropped: %+v (%v), want the model alone", m.Network.GoneLeg, ok)
	}
}

// TestFirstOutOf: a first wave decided from 180 ms whose first clients
// noticed at 40 ms gives network.first_out fixed at 140 ms without the
// clients' lateness; with it (three runs whose first attempts were sent
// i, 3i and 5i ms late at i %: the median 3i), 140 + 3i ms at i %; one
// with no run fitted gives none.
func TestFirstOutOf(t *testing.T) {
	wave := FirstWave{Runs: []WaveRun{{Run: 1}}, OnsetMs: 180, NoticeMs: 40}
	m, ok := Model{}.WithFirstOutOf(wave, Lab{})
	if f := m.Network.FirstOutLeg; !ok || f == nil || f.Dist != models.DistFixed || f.Value != 140*time.Millisecond {
		t.Errorf("first_out %+v (%v), want fixed 140 ms", f, ok)
	}
	var runs []*measured.Run
	for _, k := range []float64{1, 3, 5} {
		late := make([]float64, measured.NoticePoints)
		for i := range late {
			late[i] = k * float64(i)
		}
		runs = append(runs, &measured.Run{FirstLatePointsMs: late})
	}
	m, ok = Model{}.WithFirstOutOf(wave, LabOf(runs))
	f := m.Network.FirstOutLeg
	if !ok || f == nil || f.Dist != models.DistEmpirical || len(f.Points) != measured.NoticePoints {
		t.Fatalf("first_out %+v (%v), want 101 empirical points", f, ok)
	}
	for i, p := range f.Points {
		if want := time.Duration(140+3*i) * time.Millisecond; p != want {
			t.Errorf("first_out point %d %v, want %v", i, p, want)
		}
	}
	if m, ok := (Model{}).WithFirstOutOf(FirstWave{}, LabOf(runs)); ok || m.Network.FirstOutLeg != nil {
		t.Errorf("no first wave: %+v (%v), want the model alone", m.Network.FirstOutLeg, ok)
	}
}
