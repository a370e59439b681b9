package plots

import (
	"flag"
	"math"
	"os"
	"testing"
)

var previewDir = flag.String("preview", "", "write sample charts from synthetic data into this directory")

// TestPreview writes every chart kind from synthetic data for a person to
// look at: go test ./plots -run Preview -preview /tmp/plots-preview
func TestPreview(t *testing.T) {
	if *previewDir == "" {
		t.Skip("no -preview directory")
	}
	dir := *previewDir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	seed := seedModelRun()
	if _, err := Write(dir, seed, Options{}); err != nil {
		t.Fatal(err)
	}
	lab := labRun()
	labDir := dir + "/lab"
	os.MkdirAll(labDir, 0o755)
	if _, err := Write(labDir, lab, Options{}); err != nil {
		t.Fatal(err)
	}
	a, b := seedModelRun(), labRun()
	a.Label, b.Label = "model", "lab"
	overlayDir := dir + "/overlay"
	os.MkdirAll(overlayDir, 0o755)
	if _, err := Overlay(overlayDir, []Run{a, b}, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := sweepPreview(dir); err != nil {
		t.Fatal(err)
	}
	for _, p := range seed.Policies {
		t.Logf("%s: %d windows, p99 %.0f ms, convergence %.0f ms", p.Policy, len(p.AttemptsPerWindow), p.ConnectP99Ms, p.ConvergenceMs)
	}
}

// sweepPreview writes sample sweep charts from closed-form stand-ins.
func sweepPreview(dir string) error {
	base := SweepAxis{Name: "policies[0].base", Unit: "ms", Values: []float64{50, 100, 200, 400, 800}, Labels: []string{"50ms", "100ms", "200ms", "400ms", "800ms"}, Log: true}
	var lines []SweepLine
	for g, name := range []string{"full", "equal", "decorrelated"} {
		l := SweepLine{Group: name}
		for i, b := range base.Values {
			v := 4000*float64(g+1)/2 + 3*b + float64(i*i)*150
			l.Values = append(l.Values, v)
			l.Lo = append(l.Lo, v*0.92)
			l.Hi = append(l.Hi, v*1.08)
		}
		lines = append(lines, l)
	}
	conv := Sweep{File: "sweep-lines", Caption: "sweep-backoff.yaml, seed 1, 10 replications per point; error bars: 95% CI", Metric: SweepMetric{Name: "convergence", Unit: "ms"}}
	if _, err := conv.WriteLines(dir, base, lines, Options{}); err != nil {
		return err
	}

	lease := SweepAxis{Name: "lease.duration", Unit: "ms", Values: []float64{500, 1000, 1500, 3000}, Labels: []string{"500ms", "1s", "1.5s", "3s"}}
	sweep := SweepAxis{Name: "lease.sweep_every", Unit: "ms", Values: []float64{100, 250, 500, 1000, 2000}, Labels: []string{"100ms", "250ms", "500ms", "1s", "2s"}}
	grid := make([][]float64, len(sweep.Values))
	for yi, s := range sweep.Values {
		for _, d := range lease.Values {
			grid[yi] = append(grid[yi], d-d/3+0.99*(d/3+s))
		}
	}
	grid[4][3] = math.NaN()
	reclaim := Sweep{File: "sweep-heatmap", Caption: "sweep-lease.yaml, seed 1, 10 replications per point", Metric: SweepMetric{Name: "reclaim p99", Unit: "ms"}}
	if _, err := reclaim.WriteHeatMap(dir, lease, sweep, grid, Options{}); err != nil {
		return err
	}

	rate := SweepAxis{Name: "admission.rate", Unit: "1/s", Values: []float64{10, 18, 32, 56, 100, 200}, Log: true}
	burst := SweepAxis{Name: "admission.burst", Values: []float64{1, 5, 10, 20, 50}}
	pol := SweepAxis{Name: "policy", Values: []float64{0, 1, 2}, Labels: []string{"full", "equal", "exponential"}}
	cube := make([][][]float64, 3)
	for pi := range cube {
		cube[pi] = make([][]float64, len(burst.Values))
		for yi, b := range burst.Values {
			for _, r := range rate.Values {
				cube[pi][yi] = append(cube[pi][yi], (1000-b)/r*1000*(1+float64(pi)*float64(pi)))
			}
		}
	}
	admission := Sweep{File: "sweep-multiples", Caption: "sweep-admission.yaml, seed 1, 10 replications per point", Metric: SweepMetric{Name: "convergence", Unit: "ms"}}
	_, err := admission.WriteSmallMultiples(dir, rate, burst, pol, cube, Options{})
	return err
}
