package plots

import (
	"bytes"
	"flag"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"stormsim/internal/imagediff"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

// goldenTolerance: see imagediff.Tolerance.
const goldenTolerance = imagediff.Tolerance

// meanAbsDiff: see imagediff.MeanAbsDiff.
var meanAbsDiff = imagediff.MeanAbsDiff

// goldenPNG compares chart, drawn as PNG, with testdata/NAME.golden.png
// (refreshed with -update) and returns the golden image. A variant drawn
// without the feature the golden pins must differ from it beyond the
// tolerance, or the golden could not see that feature go.
func goldenPNG(t *testing.T, name string, chart, without *Chart) {
	t.Helper()
	encode := func(c *Chart) image.Image {
		var buf bytes.Buffer
		if err := c.Encode(&buf, "png", Options{}); err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(&buf)
		if err != nil {
			t.Fatal(err)
		}
		return img
	}
	golden := filepath.Join("testdata", name+".golden.png")
	got := encode(chart)
	if *update {
		var buf bytes.Buffer
		if err := chart.Encode(&buf, "png", Options{}); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := decodePNG(t, golden)
	d := meanAbsDiff(got, want)
	if d < 0 {
		t.Fatalf("%s: size %v, golden %v", name, got.Bounds().Size(), want.Bounds().Size())
	}
	if d > goldenTolerance {
		out := filepath.Join(t.TempDir(), name+".png")
		f, _ := os.Create(out)
		png.Encode(f, got)
		f.Close()
		t.Errorf("%s differs from %s by %.2f per channel (tolerance %v); inspect %s, then rerun with -update if the change is intended",
			name, golden, d, goldenTolerance, out)
	}
	if without != nil {
		if d := meanAbsDiff(encode(without), want); d >= 0 && d <= goldenTolerance {
			t.Errorf("%s: a chart without what it pins is within tolerance (%.2f) of the golden", name, d)
		}
	}
}

// TestAttemptsGolden compares the seed model's attempts chart with
// testdata/attempts.golden.png; refresh with go test ./plots -update.
// The capacity line one attempt per window higher must not pass.
func TestAttemptsGolden(t *testing.T) {
	chart := func(r Run) *Chart {
		charts, err := Charts([]Run{r}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return charts[0]
	}
	other := seedModelRun()
	other.CapacityPerWindow = 6
	goldenPNG(t, "attempts", chart(seedModelRun()), chart(other))
}

// TestPaletteGolden pins the palette fix: nine policies, each in its own
// hue, beside the admission capacity in the reference style (grey,
// dashed, beneath the data), the legend saying which is which. Drawn
// with the old palette, whose 7th colour was the capacity line's black,
// it must differ.
func TestPaletteGolden(t *testing.T) {
	run := func() Run {
		r := Run{Name: "palette", Seed: 1, CapacityPerWindow: 20}
		for i, name := range []string{"none", "fixed", "exponential", "full", "equal", "decorrelated", "cenkalti", "grpc", "socketio"} {
			p := PolicySeries{Policy: name, Clients: 100, WindowMs: 100}
			for w := range 40 {
				p.AttemptsPerWindow = append(p.AttemptsPerWindow, 12+float64(i)*4+10*math.Sin(float64(w)/4+float64(i)))
			}
			r.Policies = append(r.Policies, p)
		}
		return r
	}
	draw := func() *Chart {
		charts, err := Charts([]Run{run()}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return charts[0]
	}
	fixed := draw()
	saved := seriesColors
	seriesColors = slices.Clone(saved)
	seriesColors[6] = rgb(0, 0, 0)
	old := draw()
	seriesColors = saved
	goldenPNG(t, "palette", fixed, old)
}

// marksSweep is a small heat map with what the chart fixes mark: a cell
// over a limit's bound (hatched), a storm that never ended with a value
// (outlined, value kept) and one without (filled), and a cell 0.16 %
// over the bound that three digits would round onto it.
func marksSweep(limits bool) (Sweep, SweepAxis, SweepAxis, [][]float64) {
	x := SweepAxis{Name: "admission.rate", Values: []float64{200, 400, 800}, Labels: []string{"200", "400", "800"}}
	y := SweepAxis{Name: "admission.burst", Values: []float64{10, 100}, Labels: []string{"10", "100"}}
	grid := [][]float64{{12000, 25040, 31000}, {14000, 24000, math.NaN()}}
	s := Sweep{File: "marks", Caption: "marks, seed 1", Metric: SweepMetric{Name: "database.peak_rows_per_s"},
		Notes: [][]string{{"", "", "metastable"}, {"", "", "metastable"}}}
	if limits {
		s.Limits = []Limit{{Text: "database.peak_rows_per_s <= 25000", Bound: 25000,
			Fails: [][]bool{{false, true, true}, {false, false, false}}}}
	}
	return s, x, y, grid
}

// TestMarkedCellGolden pins the marks of a heat map: the hatched cell
// over the limit, "25.04k" where three digits read "25k", the bound, and the
// noted cells; without the limit the picture must differ.
func TestMarkedCellGolden(t *testing.T) {
	draw := func(limits bool) *Chart {
		s, x, y, grid := marksSweep(limits)
		c, err := s.HeatMap(x, y, grid, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	goldenPNG(t, "marked-cell", draw(true), draw(false))
}

// TestUnitLabelGolden pins a duration axis read in one unit: the cap
// axis of a backoff sweep, written 1s, 2000ms, 4s, 8s, 16s, is labelled
// "policies[0].cap (s)" with ticks 1 to 16. Labelled as written, with
// "(ms)", it must differ.
func TestUnitLabelGolden(t *testing.T) {
	axis := SweepAxis{Name: "policies[0].cap", Unit: "ms", Values: []float64{1000, 2000, 4000, 8000, 16000},
		Labels: []string{"1s", "2000ms", "4s", "8s", "16s"}, Log: true}
	s := Sweep{File: "units", Caption: "units, seed 1", Metric: SweepMetric{Name: "mean(convergence_ms)", Unit: "ms"}}
	lines := []SweepLine{{Values: []float64{2740, 3650, 4760, 6550, 6550}}}
	draw := func(a SweepAxis) *Chart {
		c, err := s.Lines(a, lines, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	asWritten := axis
	asWritten.Unit = "" // ticks as written, no unit on the axis
	goldenPNG(t, "unit-label", draw(axis), draw(asWritten))
}
