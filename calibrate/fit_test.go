package calibrate

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

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

// TestFitCapacity: run 1 is a gateway serving claims 5 ms apart while
// backlogged (ten decided at 0, done at 5, 10, ..., 50) and one more decided
// at 100 when idle (done 105: its gap is idle time, not counted); run 2
// serves three decided at 0 in 2 ms each. Busy gaps: 9 x 5 + 2 x 2 = 49 ms
// over 11, admit_per_s = 11000/49 = 224.49, rounded 224.5. The 429 gaps
// are 0.1, 0.1, 0.1, 49.7 (run 1) and 0.2 (run 2), median 0.1 ms:
// reject_per_s 10000. Rejected latencies all 2 ms give rtt fixed 2 ms, and
// admitted latencies minus their time at the gateway minus 2 ms are all
// 8 ms: server_time fixed 8 ms (the queue explains the rest).
func TestFitCapacity(t *testing.T) {
	var run1 []Claim
	for i := 1; i <= 10; i++ {
		run1 = append(run1, Claim{DecidedMs: 0, DoneMs: 5 * float64(i)})
	}
	run1 = append(run1, Claim{DecidedMs: 100, DoneMs: 105})
	run2 := []Claim{{DoneMs: 6}, {DoneMs: 2}, {DoneMs: 4}} // out of order: sorted by DoneMs
	rejects := [][]float64{{0, 0.1, 0.2, 0.3, 50}, {1, 1.2}}
	gw := func(v float64) *float64 { return &v }
	hs := []Handshake{{Attempt: 1, Status: 429, LatencyMs: 2}, {Attempt: 2, Status: 429, LatencyMs: 2}, {Attempt: 3, Status: 503, LatencyMs: 2},
		{Attempt: 1, Status: 101, LatencyMs: 30, GatewayMs: gw(20)}, {Attempt: 2, Status: 101, LatencyMs: 12, GatewayMs: gw(2)},
		{Attempt: 2, Status: 101, LatencyMs: 58, GatewayMs: gw(48)}}
	f, err := fitModel(hs, nil, [][]Claim{run1, run2}, rejects)
	if err != nil {
		t.Fatal(err)
	}
	want := models.CapacitySpec{AdmitPerS: 224.5, RejectPerS: 10000, Decide: models.DecideOnArrival}
	if f.Capacity == nil || *f.Capacity != want || f.AdmitGaps != 11 || f.RejectGaps != 5 {
		t.Errorf("capacity %+v from %d and %d gaps, want %+v from 11 and 5", f.Capacity, f.AdmitGaps, f.RejectGaps, want)
	}
	fixed := func(ms float64) models.Distribution {
		return models.Distribution{Dist: "fixed", Value: time.Duration(ms * float64(time.Millisecond))}
	}
	if !reflect.DeepEqual(f.Network.RTT, fixed(2)) || !reflect.DeepEqual(f.Network.ServerTime, fixed(8)) || f.Network.FirstRTT != nil || f.Network.FirstServerTime != nil {
		t.Errorf("network %+v, want rtt fixed 2ms, server_time fixed 8ms, no first-attempt parts", f.Network)
	}
	// Without a backlog there is no capacity.
	if f, _ := fitModel(hs, nil, [][]Claim{{{DecidedMs: 0, DoneMs: 1}, {DecidedMs: 5, DoneMs: 6}}}, nil); f.Capacity != nil {
		t.Errorf("capacity %+v without a backlog, want none", f.Capacity)
	}
}

// TestFitModelSplitsHandshakes: first and later rejections give first_rtt
// and rtt; server time is each admitted latency minus the median rtt of its
// kind (first: 40 - 20, later: 12 - 2 and 14 - 2 etc.); rejections take no
// server time.
func TestFitModelSplitsHandshakes(t *testing.T) {
	var hs []Handshake
	for _, ms := range []float64{10, 20, 40} {
		hs = append(hs, Handshake{Attempt: 1, Status: 429, LatencyMs: ms})
	}
	for _, ms := range []float64{1, 2, 4} {
		hs = append(hs, Handshake{Attempt: 3, Status: 429, LatencyMs: ms})
	}
	hs = append(hs, Handshake{Attempt: 1, Status: 101, LatencyMs: 40}, // server 20
		Handshake{Attempt: 2, Status: 101, LatencyMs: 12},   // server 10
		Handshake{Attempt: 4, Status: 101, LatencyMs: 42},   // server 40
		Handshake{Attempt: 2, Status: 409, LatencyMs: 1000}) // not a latency of the storm's kinds
	f, err := fitModel(hs, [][]float64{{5, 10, 20}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Log-moments of {10, 20, 40}: median 20, sigma ln 2; of {1, 2, 4}:
	// median 2; of {20, 10, 40}: median 20; of the start delays: median 10.
	checks := []struct {
		name string
		d    *models.Distribution
		want time.Duration
	}{
		{"first_rtt", f.NetworkOnly.FirstRTT, 20 * time.Millisecond},
		{"rtt", &f.NetworkOnly.RTT, 2 * time.Millisecond},
		{"server_time", &f.NetworkOnly.ServerTime, 20 * time.Millisecond},
		{"detection", &f.Detection.Delay, 10 * time.Millisecond},
	}
	for _, c := range checks {
		if c.d == nil || c.d.Dist != "lognormal" || c.d.Median != c.want || math.Abs(c.d.Sigma-math.Ln2) > 1e-3 {
			t.Errorf("%s = %+v, want lognormal median %v sigma ln 2", c.name, c.d, c.want)
		}
	}
	if f.Network.RejectTime == nil || !f.Network.RejectTime.IsZero() {
		t.Errorf("reject_time = %+v, want fixed 0", f.Network.RejectTime)
	}
	if f.FirstRejected != 3 || f.Rejected != 3 || f.Admitted != 3 || f.StartDelaySamples != 3 {
		t.Errorf("sample counts %d %d %d %d, want 3 each", f.FirstRejected, f.Rejected, f.Admitted, f.StartDelaySamples)
	}
}

func TestFitModelNeedsRejections(t *testing.T) {
	hs := []Handshake{{Attempt: 1, Status: 101, LatencyMs: 5}, {Attempt: 1, Status: 101, LatencyMs: 6}, {Attempt: 1, Status: 101, LatencyMs: 7}}
	if _, err := fitModel(hs, nil, nil, nil); err == nil || !strings.Contains(err.Error(), "too few handshakes") {
		t.Errorf("err = %v, want too few handshakes", err)
	}
}

// TestFitModelSharesRTT: with fewer than 3 first-attempt rejections, one rtt
// is fitted to all of them and there is no first_rtt.
func TestFitModelSharesRTT(t *testing.T) {
	hs := []Handshake{{Attempt: 1, Status: 429, LatencyMs: 8}, {Attempt: 2, Status: 429, LatencyMs: 2},
		{Attempt: 2, Status: 429, LatencyMs: 4}, {Attempt: 1, Status: 101, LatencyMs: 5},
		{Attempt: 2, Status: 101, LatencyMs: 6}, {Attempt: 3, Status: 101, LatencyMs: 7}}
	f, err := fitModel(hs, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Network.FirstRTT != nil || f.Network.RTT.Median != 4*time.Millisecond {
		t.Errorf("first_rtt %+v, rtt %+v; want none and median 4ms", f.Network.FirstRTT, f.Network.RTT)
	}
	if !f.Detection.Delay.IsZero() {
		t.Errorf("detection delay %+v without start delays, want 0", f.Detection.Delay)
	}
}

// TestAlignRuns: runs with medians 2 and 20 are scaled to the lower middle
// median of {2, 20}, 2: the second run's delays are divided by 10.
func TestAlignRuns(t *testing.T) {
	got := alignRuns([][]float64{{1, 2, 3}, {10, 20, 30}, {}})
	want := []float64{1, 2, 3, 1, 2, 3}
	if !slices.EqualFunc(got, want, func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }) {
		t.Errorf("alignRuns = %v, want %v", got, want)
	}
	if alignRuns(nil) != nil {
		t.Error("alignRuns(nil) is not nil")
	}
}

// TestFitLegs: rejected first attempts out 80 ms of a 100 ms latency, later
// ones 30 of 35, every sample alike, give fixed legs (80, 20; 30, 5), first
// attempts apart; admitted out legs are reported, not fitted. With too few
// first attempts all are pooled into out and back: a lognormal whose median
// is exp(mean ln) of 30, 30, 30, 80, 80.
func TestFitLegs(t *testing.T) {
	legged := func(attempt, status int, out, latency float64) Handshake {
		return Handshake{Attempt: attempt, Status: status, LatencyMs: latency, OutMs: &out}
	}
	hs := []Handshake{legged(1, 429, 80, 100), legged(1, 429, 80, 100), legged(1, 429, 80, 100),
		legged(2, 429, 30, 35), legged(3, 429, 30, 35), legged(2, 429, 30, 35), legged(2, 101, 1, 400), {Attempt: 2, Status: 429, LatencyMs: 9}}
	var f Fit
	fitLegs(&f, hs)
	fixed := func(v float64) models.Distribution { return models.Distribution{Dist: "fixed", Value: durationMs(v)} }
	n := f.NetworkWithLegs
	for _, c := range []struct {
		name string
		got  *models.Distribution
		want models.Distribution
	}{{"first_out", n.FirstOutLeg, fixed(80)}, {"first_back", n.FirstBackLeg, fixed(20)}, {"out", n.OutLeg, fixed(30)}, {"back", n.BackLeg, fixed(5)}} {
		if c.got == nil || !reflect.DeepEqual(*c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if f.FirstLegs != 3 || f.Legs != 3 || f.AdmittedOutMs.P50 != 1 || f.FirstOutMs.P50 != 80 || f.BackMs.P50 != 5 {
		t.Errorf("samples %d/%d, admitted out p50 %v, first out p50 %v, back p50 %v; want 3/3, 1, 80, 5",
			f.FirstLegs, f.Legs, f.AdmittedOutMs.P50, f.FirstOutMs.P50, f.BackMs.P50)
	}

	var pooled Fit
	fitLegs(&pooled, append(hs[1:3:3], hs[3:6]...))
	wantMedian := durationMs(math.Exp((3*math.Log(30) + 2*math.Log(80)) / 5))
	if n := pooled.NetworkWithLegs; n.FirstOutLeg != nil || n.FirstBackLeg != nil || n.OutLeg == nil || n.OutLeg.Median != wantMedian {
		t.Errorf("pooled legs: first out %v, first back %v, out %v; want none, none, median %v", n.FirstOutLeg, n.FirstBackLeg, n.OutLeg, wantMedian)
	}
}

// TestFitLegsServerTime: with legs, an admitted handshake's server time is
// its latency less its own out leg, its time at gw-b and the median back
// leg of the rejected ones (5 ms here): 400 - 150 - 45 - 5 = 200 ms three
// times gives a fixed 200 ms, whatever the rtt would say; one whose
// residual is negative is floored at 0.1 ms, and one without a known
// decision is left out.
func TestFitLegsServerTime(t *testing.T) {
	admitted := func(out, gateway, latency float64) Handshake {
		return Handshake{Attempt: 1, Status: 101, LatencyMs: latency, OutMs: &out, GatewayMs: &gateway}
	}
	rejected := func(out, latency float64) Handshake {
		return Handshake{Attempt: 2, Status: 429, LatencyMs: latency, OutMs: &out}
	}
	hs := []Handshake{rejected(30, 35), rejected(30, 35), rejected(30, 35),
		admitted(150, 45, 400), admitted(150, 45, 400), admitted(150, 45, 400), {Attempt: 2, Status: 101, LatencyMs: 900}}
	var f Fit
	fitLegs(&f, hs)
	if got := f.NetworkWithLegs.ServerTime; !reflect.DeepEqual(got, models.Distribution{Dist: "fixed", Value: 200 * time.Millisecond}) {
		t.Errorf("server_time with legs = %v, want fixed 200ms", got)
	}
	var floored Fit
	fitLegs(&floored, append(hs[:3:3], admitted(150, 45, 190), admitted(150, 45, 190), admitted(150, 45, 190)))
	if got := floored.NetworkWithLegs.ServerTime; !reflect.DeepEqual(got, models.Distribution{Dist: "fixed", Value: minServerTime}) {
		t.Errorf("server_time with legs, residual below 0 = %v, want fixed %v", got, minServerTime)
	}
}

// TestFitEmpirical: up to 101 samples the points are the sorted samples;
// with 201 samples 0..200 ms (any order) point i is the quantile at i/100,
// order statistic 2i: i*2 ms.
func TestFitEmpirical(t *testing.T) {
	ms := time.Millisecond
	got := fitEmpirical([]float64{30, 10, 40, 20.5})
	want := models.Distribution{Dist: "empirical", Points: []time.Duration{10 * ms, 20500 * time.Microsecond, 30 * ms, 40 * ms}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("fitEmpirical(4 samples) = %v, want %v", got, want)
	}
	var many []float64
	for v := 200; v >= 0; v-- {
		many = append(many, float64(v))
	}
	got = fitEmpirical(many)
	if len(got.Points) != empiricalPoints || got.Validate() != nil {
		t.Fatalf("fitEmpirical(201 samples): %d points, %v", len(got.Points), got.Validate())
	}
	for i, p := range got.Points {
		if p != time.Duration(2*i)*ms {
			t.Errorf("point %d = %v, want %v", i, p, time.Duration(2*i)*ms)
		}
	}
}
