package plots

import (
	"flag"
	"image"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"stormsim/models"
	"stormsim/policies"
	"stormsim/sim"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

// goldenTolerance is the largest mean absolute difference per colour
// channel (0..255) still accepted as the same picture. Rendering is pure Go
// with embedded fonts, so the same module versions give identical pixels
// (difference 0); the slack absorbs anti-aliasing changes in a rasterizer
// upgrade. Moving the capacity line from 5 to 6 per window costs about
// 0.7, dropping a policy about 29.
const goldenTolerance = 0.3

// meanAbsDiff is the mean absolute difference of a and b per RGB channel,
// or -1 when their sizes differ.
func meanAbsDiff(a, b image.Image) float64 {
	if a.Bounds().Size() != b.Bounds().Size() {
		return -1
	}
	var sum float64
	ab, bb := a.Bounds(), b.Bounds()
	for y := 0; y < ab.Dy(); y++ {
		for x := 0; x < ab.Dx(); x++ {
			r1, g1, b1, _ := a.At(ab.Min.X+x, ab.Min.Y+y).RGBA()
			r2, g2, b2, _ := b.At(bb.Min.X+x, bb.Min.Y+y).RGBA()
			sum += absDiff(r1, r2) + absDiff(g1, g2) + absDiff(b1, b2)
		}
	}
	return sum / 257 / float64(3*ab.Dx()*ab.Dy())
}

func absDiff(a, b uint32) float64 {
	if a > b {
		return float64(a - b)
	}
	return float64(b - a)
}

// TestAttemptsGolden compares the seed model's attempts chart with
// testdata/attempts.golden.png; refresh with go test ./plots -update.
func TestAttemptsGolden(t *testing.T) {
	dir := t.TempDir()
	opt := Options{Formats: []string{"png"}}
	if _, err := Write(dir, seedModelRun(), opt); err != nil {
		t.Fatal(err)
	}
	gotPath := filepath.Join(dir, AttemptsChart+".png")
	golden := filepath.Join("testdata", "attempts.golden.png")
	if *update {
		data, err := os.ReadFile(gotPath)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := decodePNG(t, golden)
	got := decodePNG(t, gotPath)
	d := meanAbsDiff(got, want)
	if d < 0 {
		t.Fatalf("size %v, golden %v", got.Bounds().Size(), want.Bounds().Size())
	}
	if d > goldenTolerance {
		t.Errorf("attempts chart differs from %s by %.2f per channel (tolerance %v); inspect %s, then rerun with -update if the change is intended",
			golden, d, goldenTolerance, gotPath)
	}

	// The comparison must see a small real change: the capacity line one
	// attempt per window higher.
	other := seedModelRun()
	other.CapacityPerWindow = 6
	dir2 := t.TempDir()
	if _, err := Write(dir2, other, opt); err != nil {
		t.Fatal(err)
	}
	if d := meanAbsDiff(decodePNG(t, filepath.Join(dir2, AttemptsChart+".png")), want); d >= 0 && d <= goldenTolerance {
		t.Errorf("a chart with the capacity line moved is within tolerance (%.2f) of the golden", d)
	}
}

// cutStormRun is the storm the horizon cuts that the simulator's tests
// work by hand: 1,000 clients, one gateway serving 100 handshakes a second
// for everyone, a fixed 100 ms backoff, a 1 s timeout, cut at 60 s with
// 43,600 handshakes waiting.
func cutStormRun(t *testing.T) Run {
	t.Helper()
	s := &sim.Scenario{Name: "cut-storm", Clients: 1000, Horizon: time.Minute, Admission: models.AdmissionSpec{Kind: "unlimited"},
		Policies: []policies.Spec{{Kind: "fixed", Base: 100 * time.Millisecond, Timeout: time.Second}},
		Metrics:  sim.Metrics{Window: time.Second}, Capacity: &models.CapacitySpec{AdmitPerS: 100}}
	if err := s.Resolve(); err != nil {
		t.Fatal(err)
	}
	b, err := policies.New(s.Policies[0])
	if err != nil {
		t.Fatal(err)
	}
	res := sim.Run(s, b, s.Seed)
	r := FromResults(s.Name, s.Seed, []sim.Result{res}, math.Inf(1))
	r.ClaimCapacityPerWindow = 100
	return r
}

// TestCutQueueGolden compares the queue chart of a storm the horizon cut
// with testdata/queue-cut.golden.png: the line runs to the 60 s horizon,
// which is drawn, with the 43,600 still waiting there marked (refresh
// with go test ./plots -update). Without the cut marked, the chart is not
// the golden.
func TestCutQueueGolden(t *testing.T) {
	run := cutStormRun(t)
	if p := run.Policies[0]; p.HorizonMs != 60000 || p.QueuePerWindow[len(p.QueuePerWindow)-1] != 43600 {
		t.Fatalf("horizon %v ms, last queue value %v; want 60000 and 43,600", p.HorizonMs, p.QueuePerWindow[len(p.QueuePerWindow)-1])
	}
	opt := Options{Formats: []string{"png"}}
	dir := t.TempDir()
	if _, err := Write(dir, run, opt); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "queue-cut.golden.png")
	gotPath := filepath.Join(dir, QueueChart+".png")
	if *update {
		data, err := os.ReadFile(gotPath)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := decodePNG(t, golden)
	if d := meanAbsDiff(decodePNG(t, gotPath), want); d < 0 || d > goldenTolerance {
		t.Errorf("queue chart differs from %s by %.2f per channel (tolerance %v); inspect %s, then rerun with -update if the change is intended",
			golden, d, goldenTolerance, gotPath)
	}
	unmarked := cutStormRun(t)
	unmarked.Policies[0].HorizonMs = 0
	dir2 := t.TempDir()
	if _, err := Write(dir2, unmarked, opt); err != nil {
		t.Fatal(err)
	}
	if d := meanAbsDiff(decodePNG(t, filepath.Join(dir2, QueueChart+".png")), want); d >= 0 && d <= goldenTolerance {
		t.Errorf("the chart without its horizon is within tolerance (%.2f) of the golden", d)
	}
	if names := Names(run); slices.Contains(names, WorkVsTimeChart) {
		t.Errorf("charts %v: a storm that never converged has no point on work-vs-time", names)
	}
}
