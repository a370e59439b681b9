package fit

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"stormsim/calibrate/measured"
	"stormsim/config"
	"stormsim/models"
)

// lognormalGrid is n samples at the lognormal's (i-0.5)/n quantiles: their
// logs are symmetric about ln(median), so the log-moment fit recovers the
// median exactly and sigma within the grid's discretisation.
func lognormalGrid(median, sigma float64, n int) []float64 {
	ln := distuv.LogNormal{Mu: math.Log(median), Sigma: sigma}
	out := make([]float64, n)
	for i := range out {
		out[i] = ln.Quantile((float64(i) + 0.5) / float64(n))
	}
	return out
}

func TestFitLognormal(t *testing.T) {
	cases := []struct {
		name           string
		samples        []float64
		wantDist       models.DistKind
		wantMedian     time.Duration
		wantSigma      float64
		sigmaTolerance float64
	}{
		{"recovers a lognormal", lognormalGrid(10, 0.5, 2000), "lognormal", 10 * time.Millisecond, 0.5, 0.005},
		{"recovers a wide one", lognormalGrid(3, 1.5, 2000), "lognormal", 3 * time.Millisecond, 1.5, 0.01},
		{"equal samples are fixed", []float64{4, 4, 4}, "fixed", 4 * time.Millisecond, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := fitLognormal(c.samples)
			median := d.Median
			if d.Dist == "fixed" {
				median = d.Value
			}
			if d.Dist != c.wantDist || median != c.wantMedian || math.Abs(d.Sigma-c.wantSigma) > c.sigmaTolerance {
				t.Errorf("fit = %+v, want %s median %v sigma %v", d, c.wantDist, c.wantMedian, c.wantSigma)
			}
			if hi := slices.Max(c.samples); d.Dist == "lognormal" && d.Cap != durationMs(hi) {
				t.Errorf("cap %v, want the largest sample %v", d.Cap, durationMs(hi))
			}
			if err := d.Validate(); err != nil {
				t.Errorf("fitted distribution invalid: %v", err)
			}
		})
	}
}

// TestFitClaimsContention: 116 claims, all decided at -1 ms (each waited
// behind the one before), end at 0 and then through (0, 75] ms: 50 in
// the first 25 ms window, 40 in the second and 25 in the third, while
// the survivor decides 0, 50 and 125 rejections in them. As rates, 2,
// 1.6 and 1 claims/ms against 0, 2 and 5 decisions/ms: claims/ms = 2 -
// 0.2 x decisions/ms exactly, a claim taking 1/2 = 0.5 ms and 0.2/2 =
// 0.1 ms for each decision beside it (25 = 0.5 x 40 + 0.1 x 50), over 3
// windows at 7/4.6 decisions per claim. The claims' own decisions, at -1,
// are in no window.
func TestFitClaimsContention(t *testing.T) {
	claims := []measured.Claim{{DecidedMs: -1, DoneMs: 0}}
	end := func(ms float64) { claims = append(claims, measured.Claim{DecidedMs: -1, DoneMs: ms}) }
	var rejects []float64
	for k := 1; k <= 50; k++ {
		end(float64(k) * 0.5)
		rejects = append(rejects, 25+(float64(k)-0.5)*0.5)
	}
	for k := 1; k <= 40; k++ {
		end(25 + float64(k)*0.625)
	}
	for k := 1; k <= 25; k++ {
		end(50 + float64(k))
	}
	for k := 1; k <= 125; k++ {
		rejects = append(rejects, 50+(float64(k)-0.5)*0.2)
	}
	c, err := ClaimsOf([]*measured.Run{{Claims: claims, RejectsMs: rejects}})
	if err != nil {
		t.Fatal(err)
	}
	k := c.Contention
	if k == nil || math.Abs(k.BaseMs-0.5) > 1e-12 || math.Abs(k.PerDecisionMs-0.1) > 1e-12 || k.Windows != 3 || math.Abs(k.MeanDecisions-7/4.6) > 1e-12 {
		t.Errorf("contention = %+v, want base 0.5 ms, 0.1 ms a decision, 3 windows at 7/4.6 decisions per claim", k)
	}
	if admit, share, ok := k.Share(); !ok || admit != 2000 || share != 100*time.Microsecond {
		t.Errorf("as a capacity: admit_per_s %v, decision_share %v, %v; want 1/0.5 ms = 2000/s and 0.1 ms", admit, share, ok)
	}
	if c.Gaps != 115 || math.Abs(c.GapMs-75.0/115) > 1e-12 {
		t.Errorf("%d waited gaps of mean %v ms; want 115 over 75 ms", c.Gaps, c.GapMs)
	}
}

// TestContentionShareNeedsPositiveTerms: a line whose claims speed up
// beside decisions, or whose base is not positive, is not a share, and
// no line at all is none.
func TestContentionShareNeedsPositiveTerms(t *testing.T) {
	for _, k := range []*Contention{nil, {BaseMs: 0.6, PerDecisionMs: -0.01}, {BaseMs: -0.1, PerDecisionMs: 0.2}, {BaseMs: 0.6, PerDecisionMs: 0}} {
		if admit, share, ok := k.Share(); ok {
			t.Errorf("%+v: a share of admit_per_s %v, decision_share %v; want none", k, admit, share)
		}
	}
	if admit, share, ok := (&Contention{BaseMs: 0.63, PerDecisionMs: 0.10437}).Share(); !ok || math.Abs(admit-1587.3) > 1e-9 || share != 104400*time.Nanosecond {
		t.Errorf("0.63 ms + 0.10437 ms: admit_per_s %v, decision_share %v; want 1000/0.63 = 1587.3/s and 104.4 us", admit, share)
	}
}

// TestFitClaims: run 1 is a gateway serving claims 5 ms apart while
// backlogged (ten decided at 0, done at 5, 10, ..., 50) and one more decided
// at 100 when idle (done 105: its gap is idle time, not counted); run 2
// serves three decided at 0 in 2 ms each. Busy gaps: 9 x 5 + 2 x 2 = 49 ms
// over 11, admit_per_s = 11000/49 = 224.49, rounded 224.5. Without a
// backlog there is no rate, and that is an error.
func TestFitClaims(t *testing.T) {
	var run1 []measured.Claim
	for i := 1; i <= 10; i++ {
		run1 = append(run1, measured.Claim{DecidedMs: 0, DoneMs: 5 * float64(i)})
	}
	run1 = append(run1, measured.Claim{DecidedMs: 100, DoneMs: 105})
	run2 := []measured.Claim{{DoneMs: 6}, {DoneMs: 2}, {DoneMs: 4}} // out of order: sorted by DoneMs
	c, err := ClaimsOf([]*measured.Run{{Claims: run1}, {Claims: run2}})
	if err != nil || c.AdmitPerS != 224.5 || c.Gaps != 11 || math.Abs(c.GapMs-49.0/11) > 1e-12 {
		t.Errorf("ClaimsOf = %+v, %v; want 224.5/s from 11 gaps", c, err)
	}
	if c.WastedPerS != 0 || c.WastedGaps != 0 {
		t.Errorf("no wasted claims: wasted_per_s %v from %d gaps, want none", c.WastedPerS, c.WastedGaps)
	}
	// Run 3: six decided at 0, done at 4, 8, 12 (useful), then 13, 14, 15
	// (wasted): gaps ending in a useful line 4, 4 (the first has no
	// predecessor), in a wasted one 1, 1, 1: 250/s and 1000/s.
	run3 := []measured.Claim{{DoneMs: 4}, {DoneMs: 8}, {DoneMs: 12}, {DoneMs: 13, Wasted: true}, {DoneMs: 14, Wasted: true},
		{DoneMs: 15, Wasted: true}}
	if c, err := ClaimsOf([]*measured.Run{{Claims: run3}}); err == nil {
		t.Errorf("two useful gaps: admit_per_s fitted (%+v), want an error", c)
	}
	run3 = append(run3, measured.Claim{DoneMs: 19})
	c, err = ClaimsOf([]*measured.Run{{Claims: run3}})
	if err != nil || c.AdmitPerS != 250 || c.Gaps != 3 || c.WastedPerS != 1000 || c.WastedGaps != 3 {
		t.Errorf("ClaimsOf = %+v, %v; want 250/s from 3 gaps and 1000/s wasted from 3", c, err)
	}
	if c.Contention != nil {
		t.Errorf("no decisions logged: contention %+v, want none (nothing varies)", *c.Contention)
	}
	idle := []measured.Claim{{DecidedMs: 0, DoneMs: 1}, {DecidedMs: 5, DoneMs: 6}}
	if _, err := ClaimsOf([]*measured.Run{{Claims: idle}}); err == nil || !strings.Contains(err.Error(), "admit_per_s") {
		t.Errorf("no backlog: err = %v, want one naming admit_per_s", err)
	}
}

// firstWave builds a run whose first attempts are admitted at the given
// times (ms from the kill), sent 1 ms earlier.
func firstWave(run int, decided ...float64) *measured.Run {
	r := &measured.Run{Run: run}
	for _, d := range decided {
		out := 1.0
		r.Handshakes = append(r.Handshakes, measured.Handshake{Attempt: 1, Status: 101, SentMs: d - 1, OutMs: &out})
		r.Claims = append(r.Claims, measured.Claim{DecidedMs: d, DoneMs: d + 0.5})
	}
	return r
}

// TestFirstWave: 51 first attempts decided every 2 ms from 40 to 140 ms
// (sorted, the 2nd percentile is h = 0.02 x 50 = 1: 42 ms, the 98th h = 49:
// 138 ms): onset 42 ms, span 96 ms, 0.96 x 51 / 96 ms = 510/s. Each
// decision had a request waiting since its send 1 ms before (the fastest
// one-way time is 0: no 429 placed), so the backlog is busy 1 ms per
// decision, 1000/s: the larger bound wins. Over three runs, the medians.
// A retry is not a first attempt.
func TestFirstWave(t *testing.T) {
	var decided []float64
	for d := 40.0; d <= 140; d += 2 {
		decided = append(decided, d)
	}
	one := firstWave(1, decided...)
	w, err := FirstWaveOf([]*measured.Run{one})
	if err != nil {
		t.Fatal(err)
	}
	want := WaveRun{Run: 1, Attempts: 51, OnsetMs: 42, SpanMs: 96, WavePerS: 510, BacklogPerS: 1000, DecidePerS: 1000}
	got := w.Runs[0]
	if got.Run != want.Run || got.Attempts != want.Attempts || !near(got.OnsetMs, 42) || !near(got.SpanMs, 96) ||
		!near(got.WavePerS, 510) || !near(got.BacklogPerS, 1000) || got.DecidePerS != 1000 || w.OnsetMs != 42 || w.DecidePerS != 1000 {
		t.Errorf("first wave %+v (onset %v, rate %v); want %+v", got, w.OnsetMs, w.DecidePerS, want)
	}

	// Three runs: onsets 42, 12 and 102 ms, median 42.
	shifted := func(run int, by float64) *measured.Run {
		s := make([]float64, len(decided))
		for i, d := range decided {
			s[i] = d + by
		}
		return firstWave(run, s...)
	}
	retry := 7.0
	r3 := shifted(3, 60)
	r3.Handshakes = append(r3.Handshakes, measured.Handshake{Attempt: 2, Status: 101, SentMs: 0, OutMs: &retry})
	w, err = FirstWaveOf([]*measured.Run{one, shifted(2, -30), r3})
	if err != nil || w.OnsetMs != 42 || len(w.Runs) != 3 || w.Runs[2].Attempts != 51 {
		t.Errorf("three runs: onset %v, runs %+v, %v; want 42 and 51 first attempts each", w.OnsetMs, w.Runs, err)
	}
	if _, err := FirstWaveOf([]*measured.Run{firstWave(1, 5, 6)}); err == nil {
		t.Error("two first attempts gave a first wave")
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestMeasureBacklog: four handshakes sent at 0 and one at 200 ms; the
// 429 sent at 200 is decided at 205, the run's fastest one-way time
// (5 ms), so arrivals are 5, 5, 5, 5 and 205. Decisions at 45, 65
// (429s), 85 (a claim), 105 (429) and 205. Worked by hand: the backlog is
// non-empty from 5 to 105 (100 ms; it reaches 0 at the fourth decision)
// and for no time at 205 (arrival and decision at once), so 5 decisions in
// 100 ms, 50/s. A handshake answered 503 (not the survivor's decision) is
// left out.
func TestMeasureBacklog(t *testing.T) {
	out := func(v float64) *float64 { return &v }
	r := &measured.Run{Handshakes: []measured.Handshake{
		{Status: 429, SentMs: 0, OutMs: out(45)},
		{Status: 429, SentMs: 0, OutMs: out(65)},
		{Status: 101, SentMs: 0},
		{Status: 429, SentMs: 0},
		{Status: 429, SentMs: 200, OutMs: out(5)},
		{Status: 503, SentMs: 10, OutMs: out(1)},
	}, Claims: []measured.Claim{{DecidedMs: 85}}, RejectsMs: []float64{45, 65, 105, 205}}
	b, ok := measureBacklog(r)
	if !ok || b.Decisions != 5 || !near(b.BusyMs, 100) || !near(b.DecidePerS, 50) {
		t.Errorf("measureBacklog = %+v, %v; want 5 decisions in 100 ms, 50/s", b, ok)
	}
	r.Claims, r.RejectsMs = nil, nil
	if _, ok := measureBacklog(r); ok {
		t.Error("no decisions: measureBacklog ok, want not ok")
	}
}

// legged is a handshake whose decision came out ms after its send.
func legged(attempt, status int, out, latency float64) measured.Handshake {
	return measured.Handshake{Attempt: attempt, Status: status, LatencyMs: latency, OutMs: &out}
}

// TestFitLegs: rejected retries out 30 ms of a 35 ms latency, sent 5 ms
// late, give fixed legs out 35 (from when they were due) and back 5;
// rejected first attempts (out 80 of 100) give first_back 20; admitted
// ones are not legs. An admitted handshake's server time is its latency
// less its own out leg, its time at the survivor and the median back leg:
// 400 - 150 - 45 - 5 = 200 ms three times, a fixed 200 ms; one whose
// residual is negative is floored at 0.1 ms.
func TestFitLegs(t *testing.T) {
	admitted := func(out, gateway, latency float64) measured.Handshake {
		h := legged(2, 101, out, latency)
		h.GatewayMs = &gateway
		return h
	}
	late := func(h measured.Handshake) measured.Handshake { h.LagMs = 5; return h }
	hs := []measured.Handshake{legged(1, 429, 80, 100), legged(1, 429, 80, 100), legged(1, 429, 80, 100),
		late(legged(2, 429, 30, 35)), late(legged(3, 429, 30, 35)), late(legged(2, 429, 30, 35)),
		admitted(150, 45, 400), admitted(150, 45, 400), admitted(150, 45, 400), {Attempt: 2, Status: 429, LatencyMs: 9}}
	l, err := fitLegs([]*measured.Run{{Handshakes: hs}})
	if err != nil {
		t.Fatal(err)
	}
	fixed := func(v float64) models.Distribution { return models.Distribution{Dist: "fixed", Value: durationMs(v)} }
	for _, c := range []struct {
		name      string
		got, want models.Distribution
	}{{"out", l.Out, fixed(35)}, {"back", l.Back, fixed(5)}, {"first_back", l.FirstBack, fixed(20)}, {"server_time", l.ServerTime, fixed(200)}} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if l.Retries != 3 || l.Firsts != 3 || l.RetryLagMs.P50 != 5 {
		t.Errorf("%d retries, %d first attempts, lag p50 %v; want 3, 3, 5", l.Retries, l.Firsts, l.RetryLagMs.P50)
	}
	floored := append(hs[3:6:6], admitted(150, 45, 190), admitted(150, 45, 190), admitted(150, 45, 190))
	if l, err := fitLegs([]*measured.Run{{Handshakes: floored}}); err != nil || !reflect.DeepEqual(l.ServerTime, fixed(ms(minServerTime))) ||
		!reflect.DeepEqual(l.FirstBack, l.Back) {
		t.Errorf("server_time %v, first_back %v (%v); want fixed 0.1ms and the retries' back leg without first attempts", l.ServerTime, l.FirstBack, err)
	}
	if _, err := fitLegs([]*measured.Run{{Handshakes: hs[:3]}}); err == nil || !strings.Contains(err.Error(), "retries") {
		t.Errorf("no rejected retry: err = %v", err)
	}
}

// TestSharedEvery: four clumps of three rejected retries sent at +0, +1
// and +3 ms from 0, 100, 200 and 300 ms, every retry of a clump with the
// clump's out leg (10, 40, 20, 60 ms). Over all 66 pairs: 12 in-clump pairs
// differ by 0, the 54 others by 30, 10, 50, 20, 20, 40 ms, 9 pairs each; the
// lower middle of the 66 differences is 20 ms, so the limit is 10 ms. Pairs
// sent under 2 ms apart (+0/+1) and 2-5 ms apart (+1/+3, +0/+3) differ by
// 0; no pair is 5-50 ms apart; the 97-99 ms pairs cross clumps, with a
// median difference above 10 ms: 5 ms. With the legs shuffled between
// clumps' members no bin is alike: 0. Admitted and first attempts are not
// counted.
func TestSharedEvery(t *testing.T) {
	var hs []measured.Handshake
	legs := []float64{10, 40, 20, 60}
	for k, leg := range legs {
		for _, off := range []float64{0, 1, 3} {
			h := legged(2, 429, leg, 0)
			h.SentMs = float64(100*k) + off
			hs = append(hs, h)
		}
	}
	hs = append(hs, legged(1, 429, 500, 0), legged(2, 101, 500, 0))
	if got := sharedEvery(&measured.Run{Handshakes: hs}); got != 5*time.Millisecond {
		t.Errorf("sharedEvery = %v, want 5ms", got)
	}
	for i := range hs[:12] { // member i of every clump gets leg i: clumps no longer alike
		out := legs[i%4] + float64(i%3)*15
		hs[i].OutMs = &out
	}
	if got := sharedEvery(&measured.Run{Handshakes: hs}); got != 0 {
		t.Errorf("shuffled legs: sharedEvery = %v, want 0", got)
	}
	if got := sharedEvery(&measured.Run{Handshakes: hs[:2]}); got != 0 {
		t.Errorf("two retries: sharedEvery = %v, want 0", got)
	}
}

// TestModelRoundTripsThroughAConfig: the model applied to a scenario,
// echoed as calibrated.yaml is and loaded back, is the same model; a
// scenario without a capacity carries none.
func TestModelRoundTripsThroughAConfig(t *testing.T) {
	s, err := config.Load("../../configs/seed-lab.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	lognormal := models.Distribution{Dist: "lognormal", Median: 12 * time.Millisecond, Sigma: 0.8, Cap: 90 * time.Millisecond}
	m := Model{
		Capacity: models.CapacitySpec{AdmitPerS: 812.5, Decide: models.DecideOnArrival, DecidePerS: 6100, DecisionShare: 88400 * time.Nanosecond,
			ClaimShare: 712300 * time.Nanosecond},
		Network: models.NetworkSpec{ServerTime: lognormal, RejectTime: &models.Distribution{Dist: "fixed"}, OutLeg: &lognormal,
			BackLeg: &lognormal, FirstOutLeg: &models.Distribution{Dist: "fixed"}, FirstBackLeg: &lognormal, SharedEvery: 5 * time.Millisecond},
		Detection: models.DetectionSpec{Kind: "reset", Delay: models.Distribution{Dist: "fixed", Value: 42 * time.Millisecond}},
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	back, err := config.Parse("calibrated.yaml", config.Echo(m.Apply(s)), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := FromScenario(back)
	if err != nil || !reflect.DeepEqual(got, m) {
		t.Errorf("round trip = %+v, %v\nwant         %+v", got, err, m)
	}
	if back.Clients != s.Clients || !reflect.DeepEqual(back.Admission, s.Admission) {
		t.Errorf("the storm's own sections changed: clients %d, admission %+v", back.Clients, back.Admission)
	}
	if _, err := FromScenario(s); err == nil || !strings.HasPrefix(err.Error(), "capacity") {
		t.Errorf("seed-lab.yaml: err = %v, want no capacity", err)
	}
}

// TestRunsFitsEachRunAloneToo: two runs that fit together, one of them
// unable to alone (no rejected retry in it): the pooled model stands, and
// the per-run figures say which run could not be fitted and why, rather
// than leaving it out.
func TestRunsFitsEachRunAloneToo(t *testing.T) {
	good := labRun(1)
	noRetries := labRun(2)
	noRetries.Handshakes = slices.DeleteFunc(noRetries.Handshakes, func(h measured.Handshake) bool { return h.Attempt > 1 })
	f, err := Runs([]*measured.Run{good, noRetries})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Runs) != 2 || f.Runs[0].Model == nil || f.Runs[1].Model != nil || !strings.Contains(f.Runs[1].Error, "retries") {
		t.Errorf("per-run fits %+v; want run 1 fitted and run 2 with an error about retries", f.Runs)
	}
	if f.Model.Capacity.AdmitPerS <= 0 || f.Model.Capacity.DecidePerS <= 0 || f.Model.Network.OutLeg == nil {
		t.Errorf("pooled model %+v", f.Model)
	}
}

// labRun is a small run with every kind of observation the fit needs:
// backlogged claims, first attempts and rejected retries with their
// decisions, admitted ones with their claims.
func labRun(run int) *measured.Run {
	r := &measured.Run{Run: run}
	for i := range 10 {
		r.Claims = append(r.Claims, measured.Claim{DecidedMs: 10, DoneMs: 10 + float64(i+1)})
		out, gw := 5.0+float64(i), float64(i+1)
		r.Handshakes = append(r.Handshakes, measured.Handshake{Attempt: 1, Status: 101, SentMs: 5 - float64(i), LatencyMs: 30, OutMs: &out, GatewayMs: &gw})
	}
	for i := range 6 {
		first, retry := 3.0+float64(i), 8.0+float64(i)
		r.Handshakes = append(r.Handshakes,
			measured.Handshake{Attempt: 1, Status: 429, SentMs: float64(i), LatencyMs: 10, OutMs: &first},
			measured.Handshake{Attempt: 2, Status: 429, SentMs: 250 + float64(i), LatencyMs: 12 + float64(i), OutMs: &retry, LagMs: 1})
		r.RejectsMs = append(r.RejectsMs, float64(i)+first, 250+float64(i)+retry)
	}
	return r
}

// TestFitGoaways: a drain that told 51 connections at once, their goaways
// reaching the clients every 10 ms from 0 to 500 ms: the 2nd percentile is
// h = 0.02 x 50 = 1, 10 ms, the 98th h = 49, 490 ms, so 0.96 x 51 /
// 0.48 s = 102 goaways/s. A paced drain's goaways say nothing of the
// gateway's rate and are left out; the rate is the median over the runs.
func TestFitGoaways(t *testing.T) {
	at := func(step float64) []float64 {
		var v []float64
		for i := range 51 {
			v = append(v, float64(i)*step)
		}
		return v
	}
	runs := []*measured.Run{
		{Run: 1, Drain: &measured.Drain{GoawaysMs: at(10)}},
		{Run: 2, Drain: &measured.Drain{Pace: "spread:over=5s", GoawaysMs: at(100)}},
		{Run: 3, Drain: &measured.Drain{Pace: "all", GoawaysMs: at(5)}}, // twice as fast: 204/s
		{Run: 4, Drain: &measured.Drain{Pace: "all", GoawaysMs: at(2.5)}},
	}
	g := fitGoaways(runs)
	if len(g.Runs) != 3 || g.Runs[0].PerS != 102 || g.Runs[1].PerS != 204 || g.PerS != 204 {
		t.Errorf("goaways %+v, want 102, 204 and 408/s, median 204", g)
	}
	if g := fitGoaways(runs[1:2]); g.PerS != 0 {
		t.Errorf("a paced drain alone gave %v/s, want none", g.PerS)
	}
	// The clients read their goaways every 2.5 ms but their closes every
	// 10 ms: they reconnect at their closes, so the rate is the closes',
	// 102/s, not the goaways' 408/s.
	late := []*measured.Run{{Run: 1, Drain: &measured.Drain{GoawaysMs: at(2.5), ClosesMs: at(10)}}}
	if g := fitGoaways(late); g.PerS != 102 {
		t.Errorf("goaways read every 2.5 ms, closes every 10 ms: %v/s, want the closes' 102/s", g.PerS)
	}
}

// TestOnsetIsTheFirstAttemptsWay: labRun's first attempts are decided
// at 3, 5, 7, 9, 10 (ten of them), 11 and 13 ms after the kill, so the
// onset (their 2nd percentile, the nearest rank h = 0.32 rounded up: the
// first) is 3 ms. The clients' first notices came 1.25 ms after the kill:
// that is detection.delay, and the rest, 1.75 ms, the first attempt's
// way (network.first_out), which a drained client, noticing at its close,
// takes too. Notices later than the onset (a run that cannot tell them
// apart) leave the way at 0; none measured (runs from before they were
// kept) put the whole onset in the way. The two add up to the onset.
func TestOnsetIsTheFirstAttemptsWay(t *testing.T) {
	for _, c := range []struct {
		name                  string
		noticeMs              float64
		wantNotice, wantFirst time.Duration
	}{
		{"first notices 1.25 ms after the kill", 1.25, 1250 * time.Microsecond, 1750 * time.Microsecond},
		{"notices after the onset", 5, 3 * time.Millisecond, 0},
		{"no notice measured", 0, 0, 3 * time.Millisecond},
	} {
		r := labRun(1)
		r.FirstNoticeMs = c.noticeMs
		f, err := Runs([]*measured.Run{r})
		if err != nil {
			t.Fatal(err)
		}
		m := f.Model
		if f.FirstWave.OnsetMs != 3 || m.Detection.Delay.Value != c.wantNotice || m.Network.FirstOutLeg == nil ||
			m.Network.FirstOutLeg.Dist != models.DistFixed || m.Network.FirstOutLeg.Value != c.wantFirst {
			t.Errorf("%s: onset %v ms, detection %+v, first_out %+v; want 3 ms, %v and %v", c.name, f.FirstWave.OnsetMs,
				m.Detection.Delay, m.Network.FirstOutLeg, c.wantNotice, c.wantFirst)
		}
		if got := m.Detection.Delay.Value + m.Network.FirstOutLeg.Value; got != 3*time.Millisecond {
			t.Errorf("%s: delay + first_out = %v, want the onset, 3ms", c.name, got)
		}
	}
}

// TestFitBusyWays: network.drain_first_out is one value per run that
// drained all at once, the median of its busy ways: 20 ms (10, 20, 30),
// 100 ms (5, 100, 200); a paced drain's (at less than the full rate) and
// a run with 2 ways (fewer than minSamples) are left out. Two runs give an empirical distribution between
// their values, one a fixed value, none nothing.
func TestFitBusyWays(t *testing.T) {
	ms := time.Millisecond
	runs := []*measured.Run{
		{Run: 1, Drain: &measured.Drain{BusyWaysMs: []float64{30, 10, 20}}},
		{Run: 2, Drain: &measured.Drain{Pace: "all", BusyWaysMs: []float64{200, 5, 100}}},
		{Run: 3, Drain: &measured.Drain{BusyWaysMs: []float64{1, 2}}},
		{Run: 4},
		{Run: 5, Drain: &measured.Drain{Pace: "spread:over=5s", BusyWaysMs: []float64{7, 8, 9}}},
	}
	g := fitGoaways(runs)
	if !reflect.DeepEqual(g.BusyWaysMs, []float64{20, 100}) {
		t.Fatalf("busy ways %v, want [20 100]", g.BusyWaysMs)
	}
	want := &models.Distribution{Dist: models.DistEmpirical, Points: []time.Duration{20 * ms, 100 * ms}}
	if got := g.DrainFirstOut(); !reflect.DeepEqual(got, want) {
		t.Errorf("drain_first_out %+v, want %+v", got, want)
	}
	if got := fitGoaways(runs[1:2]).DrainFirstOut(); !reflect.DeepEqual(got, &models.Distribution{Dist: models.DistFixed, Value: 100 * ms}) {
		t.Errorf("one run: %+v, want fixed 100ms", got)
	}
	if got := fitGoaways(runs[2:]).DrainFirstOut(); got != nil {
		t.Errorf("no run with busy ways: %+v, want nil", got)
	}
}
