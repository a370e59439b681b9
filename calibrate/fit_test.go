package calibrate

import (
	"math"
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
		wantDist       string
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
	f, err := fitModel(hs, [][]float64{{5, 10, 20}})
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
		{"first_rtt", f.Network.FirstRTT, 20 * time.Millisecond},
		{"rtt", &f.Network.RTT, 2 * time.Millisecond},
		{"server_time", &f.Network.ServerTime, 20 * time.Millisecond},
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
	if _, err := fitModel(hs, nil); err == nil || !strings.Contains(err.Error(), "too few handshakes") {
		t.Errorf("err = %v, want too few handshakes", err)
	}
}

// TestFitModelSharesRTT: with fewer than 3 first-attempt rejections, one rtt
// is fitted to all of them and there is no first_rtt.
func TestFitModelSharesRTT(t *testing.T) {
	hs := []Handshake{{Attempt: 1, Status: 429, LatencyMs: 8}, {Attempt: 2, Status: 429, LatencyMs: 2},
		{Attempt: 2, Status: 429, LatencyMs: 4}, {Attempt: 1, Status: 101, LatencyMs: 5},
		{Attempt: 2, Status: 101, LatencyMs: 6}, {Attempt: 3, Status: 101, LatencyMs: 7}}
	f, err := fitModel(hs, nil)
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
