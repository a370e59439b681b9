package plots

import (
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSweepChartsProduceValidFiles(t *testing.T) {
	x := SweepAxis{Name: "lease.duration", Unit: "ms", Values: []float64{500, 1000, 1500}}
	y := SweepAxis{Name: "lease.sweep_every", Unit: "ms", Values: []float64{100, 500}}
	z := SweepAxis{Name: "policy", Values: []float64{0, 1, 2}, Labels: []string{"full", "equal", "none"}}
	grid := [][]float64{{600, 1100, 1600}, {1000, math.NaN(), 2000}}
	m := SweepMetric{Name: "reclaim p99", Unit: "ms"}
	dir := t.TempDir()

	lines := []SweepLine{
		{Group: "full", Values: []float64{1, 2, math.NaN()}, Lo: []float64{0.5, 1.5, math.NaN()}, Hi: []float64{1.5, 2.5, math.NaN()}},
		{Group: "equal", Values: []float64{3, 2, 1}},
	}
	if _, err := (Sweep{File: "lines", Metric: m}).WriteLines(dir, x, lines, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := (Sweep{File: "heat", Metric: m, Caption: "c"}).WriteHeatMap(dir, x, y, grid, Options{}); err != nil {
		t.Fatal(err)
	}
	cube := [][][]float64{grid, grid, {{1, 2, 3}, {4, 5, 6}}}
	if _, err := (Sweep{File: "multi", Metric: m}).WriteSmallMultiples(dir, x, y, z, cube, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"lines", "heat", "multi"} {
		checkPNG(t, filepath.Join(dir, name+".png"))
	}
	checkSVG(t, filepath.Join(dir, "lines.svg"), seriesColor(0), seriesColor(1))
	for _, name := range []string{"heat", "multi"} {
		checkSVG(t, filepath.Join(dir, name+".svg"))
		data, _ := os.ReadFile(filepath.Join(dir, name+".svg"))
		if !strings.Contains(string(data), "<image") {
			t.Errorf("%s.svg: heat map is not rasterized (no <image>)", name)
		}
		if !strings.Contains(string(data), "Grey cells: no data") {
			t.Errorf("%s.svg: caption does not explain the missing cell", name)
		}
	}
}

func TestSweepEdgeGridsDoNotPanic(t *testing.T) {
	one := SweepAxis{Name: "a", Values: []float64{1}}
	two := SweepAxis{Name: "b", Values: []float64{1, 2}}
	cases := []struct {
		name string
		grid [][]float64
	}{
		{"single cell", [][]float64{{5}}},
		{"all missing", [][]float64{{math.NaN()}}},
		{"constant", [][]float64{{3}}},
		{"infinite", [][]float64{{math.Inf(1)}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			s := Sweep{File: "h", Metric: SweepMetric{Name: "m"}}
			if _, err := s.WriteHeatMap(dir, one, one, c.grid, Options{}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.WriteLines(dir, one, []SweepLine{{Values: c.grid[0]}}, Options{}); err != nil {
				t.Fatal(err)
			}
		})
	}
	// A log-swept axis and a metric spanning decades get log scales.
	dir := t.TempDir()
	wide := [][]float64{{1, 1000}}
	two.Log = true
	if _, err := (Sweep{File: "w", Metric: SweepMetric{Name: "m", Unit: "ms"}}).WriteHeatMap(dir, two, one, wide, Options{}); err != nil {
		t.Fatal(err)
	}
	if hs := newHeatScale(wide); !hs.log || hs.min != 0 || hs.max != 3 {
		t.Errorf("colour scale for 1..1000 = log %v [%v, %v], want log10 [0, 3]", hs.log, hs.min, hs.max)
	}
}

func TestSweepRejectsMismatchedShapes(t *testing.T) {
	x := SweepAxis{Name: "x", Values: []float64{1, 2}}
	y := SweepAxis{Name: "y", Values: []float64{1}}
	s := Sweep{File: "s", Metric: SweepMetric{Name: "m"}}
	dir := t.TempDir()
	cases := []struct {
		name string
		err  func() error
		want string
	}{
		{"short row", func() error { _, err := s.WriteHeatMap(dir, x, y, [][]float64{{1}}, Options{}); return err }, "grid row 0 has 1 cells for 2 values of x"},
		{"missing row", func() error { _, err := s.WriteHeatMap(dir, x, y, nil, Options{}); return err }, "grid has 0 rows for 1 values of y"},
		{"short line", func() error {
			_, err := s.WriteLines(dir, x, []SweepLine{{Group: "g", Values: []float64{1}}}, Options{})
			return err
		}, `line "g" needs 2 values`},
		{"no lines", func() error { _, err := s.WriteLines(dir, x, nil, Options{}); return err }, "no lines"},
		{"labels", func() error {
			bad := SweepAxis{Name: "x", Values: []float64{1, 2}, Labels: []string{"a"}}
			_, err := s.WriteHeatMap(dir, bad, y, [][]float64{{1, 2}}, Options{})
			return err
		}, "1 labels for 2 values"},
		{"panels", func() error {
			_, err := s.WriteSmallMultiples(dir, x, y, SweepAxis{Name: "z", Values: []float64{1, 2}}, [][][]float64{{{1, 2}}}, Options{})
			return err
		}, "1 panels of data for 2 values of z"},
		{"path in file name", func() error {
			_, err := Sweep{File: "../s"}.WriteHeatMap(dir, x, y, [][]float64{{1, 2}}, Options{})
			return err
		}, "plain base name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.err(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error = %v, want it to contain %q", err, c.want)
			}
		})
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("wrote %d files despite errors", len(entries))
	}
}

func TestMillisecondMetricsReadInSeconds(t *testing.T) {
	m := SweepMetric{Name: "convergence", Unit: "ms"}
	if got, f := m.readable([]float64{500, 9999}); got.Unit != "ms" || f != 1 {
		t.Errorf("below 10 s: unit %q factor %v, want ms 1", got.Unit, f)
	}
	if got, f := m.readable([]float64{500, 10000}); got.Unit != "s" || f != 0.001 {
		t.Errorf("from 10 s: unit %q factor %v, want s 0.001", got.Unit, f)
	}
}

func TestContrastText(t *testing.T) {
	if c := contrastText(viridisAnchors[0]); c != color.White {
		t.Errorf("text on dark purple is %v, want white", c)
	}
	if c := contrastText(viridisAnchors[len(viridisAnchors)-1]); c != color.Black {
		t.Errorf("text on yellow is %v, want black", c)
	}
}

// TestHeatMapNotesMarkCells: a noted cell without a value (a storm that
// never ended has no convergence time) is drawn in the note colour; one
// with a value (the claims it wasted) keeps its value's colour, so the
// value that matters stays readable; the caption says which is which.
func TestHeatMapNotesMarkCells(t *testing.T) {
	grid := [][]float64{{1, math.NaN()}, {2, 3}}
	notes := [][]string{{"", "metastable"}, {"", "metastable"}}
	hs := newHeatScale(grid)
	img := cellImage(heatCells{grid: grid, notes: notes, digits: 3}, hs, 1)
	// Row 0 is drawn at the bottom of the image.
	if got := color.NRGBAModel.Convert(img.At(1, 1)); got != color.NRGBAModel.Convert(notedCellRGB) {
		t.Errorf("noted cell without a value drawn %v, want %v", got, notedCellRGB)
	}
	if got := color.NRGBAModel.Convert(img.At(1, 0)); got != color.NRGBAModel.Convert(hs.color(3)) {
		t.Errorf("noted cell with a value drawn %v, want its value's %v", got, hs.color(3))
	}
	if got := color.NRGBAModel.Convert(img.At(0, 1)); got != color.NRGBAModel.Convert(hs.color(1)) {
		t.Errorf("plain cell drawn %v, want %v", got, hs.color(1))
	}
	if got := notedCaption(grid, notes); got != "Red cells: metastable; red outline: metastable, its value kept" {
		t.Errorf("caption %q", got)
	}
	if got := heatCaption("", unnoted(grid, notes)); got != "" {
		t.Errorf("a noted cell is not missing data, caption %q", got)
	}
	dir := t.TempDir()
	x := SweepAxis{Name: "clients", Values: []float64{1, 2}}
	y := SweepAxis{Name: "admission.rate", Values: []float64{1, 2}}
	if _, err := (Sweep{File: "m", Metric: SweepMetric{Name: "convergence_ms"}, Notes: notes}).WriteHeatMap(dir, x, y, grid, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := (Sweep{File: "m", Metric: SweepMetric{Name: "convergence_ms"}, Notes: notes[:1]}).WriteHeatMap(dir, x, y, grid, Options{}); err == nil {
		t.Error("notes of the wrong shape accepted")
	}
}
