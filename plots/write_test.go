package plots

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"image"
	"image/color"
	_ "image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"

	"stormsim/sim"
)

// decodePNG opens a PNG and fails the test unless it decodes.
func decodePNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, format, err := image.Decode(f)
	if err != nil || format != "png" {
		t.Fatalf("%s: not a PNG (format %q, err %v)", path, format, err)
	}
	return img
}

// checkPNG requires a decodable PNG with more than a handful of colours
// (a blank or single-colour image means nothing was drawn).
func checkPNG(t *testing.T, path string) {
	t.Helper()
	img := decodePNG(t, path)
	seen := map[color.RGBA]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), uint8(a >> 8)}] = true
		}
	}
	if len(seen) < 8 {
		t.Errorf("%s: only %d distinct colours; the chart looks empty", path, len(seen))
	}
}

// checkSVG requires well-formed SVG with a stroked path in each of colours.
func checkSVG(t *testing.T, path string, colors ...color.Color) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte("<?xml")) && !bytes.HasPrefix(data, []byte("<svg")) {
		t.Fatalf("%s: does not start with <?xml or <svg", path)
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	paths := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: invalid XML: %v", path, err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "path" {
			paths++
		}
	}
	if paths == 0 {
		t.Fatalf("%s: no <path> elements", path)
	}
	for _, c := range colors {
		if !bytes.Contains(data, []byte("stroke:"+svgColor(c))) {
			t.Errorf("%s: no path stroked in %s", path, svgColor(c))
		}
	}
}

func svgColor(c color.Color) string {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	return fmt.Sprintf("#%02X%02X%02X", n.R, n.G, n.B)
}

func TestWriteProducesEveryChartAsValidPNGAndSVG(t *testing.T) {
	cases := []struct {
		name string
		run  Run
		want []string
	}{
		{"seed model", seedModelRun(), []string{AttemptsChart, ConnectedChart, WorkVsTimeChart}},
		{"lab with failure models", labRun(), []string{AttemptsChart, ConnectedChart, WorkVsTimeChart, ReclaimChart, StaleRoutesChart, DatabaseChart}},
		{"storm with an outcome", outcomeRun(), []string{AttemptsChart, ConnectedChart, WorkVsTimeChart, GoodputChart, QueueChart}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			paths, err := Write(dir, c.run, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := Names(c.run); !slices.Equal(got, c.want) {
				t.Fatalf("Names = %v, want %v", got, c.want)
			}
			var want []string
			for _, n := range c.want {
				want = append(want, filepath.Join(dir, n+".png"), filepath.Join(dir, n+".svg"))
			}
			if !slices.Equal(paths, want) {
				t.Fatalf("wrote %v, want %v", paths, want)
			}
			var policyColors []color.Color
			for i := range c.run.Policies {
				policyColors = append(policyColors, seriesColor(i))
			}
			for _, n := range c.want {
				checkPNG(t, filepath.Join(dir, n+".png"))
				colors := policyColors
				if n == ReclaimChart {
					colors = []color.Color{seriesColor(0)} // one histogram per run
				}
				if n == WorkVsTimeChart && c.run.Policies[0].Replicated == nil {
					colors = nil // points only, no stroked lines
				}
				checkSVG(t, filepath.Join(dir, n+".svg"), colors...)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != len(want) {
				t.Errorf("directory holds %d files, want %d (temporary files left?)", len(entries), len(want))
			}
		})
	}
}

func TestLogAxesWithEmptyWindowsDoNotPanic(t *testing.T) {
	// Zeros inside, at the start and at the end of series on log count and
	// log time axes, a series of one window, and an all-zero series.
	run := Run{Name: "edge", Seed: 9, CapacityPerWindow: 5, Outage: &Interval{StartMs: 0, EndMs: 5}}
	run.Policies = []PolicySeries{
		{Policy: "spiky", Clients: 10, WindowMs: 10, AttemptsPerWindow: []float64{0, 1000, 0, 0, 3, 0}, AcceptsPerWindow: []float64{0, 5, 0, 0, 3, 0}, ConnectP99Ms: 45, ConvergenceMs: 45,
			StaleRoutesPerWindow: []float64{10, 0, 0}, DBRowsPerS: []float64{0, 0, 12500}},
		{Policy: "long", Clients: 10, WindowMs: 10, AttemptsPerWindow: append(make([]float64, 5000), 2), AcceptsPerWindow: append(make([]float64, 5000), 2), ConnectP99Ms: 50000, ConvergenceMs: 50000},
		{Policy: "single", Clients: 1, WindowMs: 10, AttemptsPerWindow: []float64{1}, AcceptsPerWindow: []float64{1}, ConnectP99Ms: 1, ConvergenceMs: 1},
		{Policy: "silent", Clients: 3, WindowMs: 10, AttemptsPerWindow: []float64{0, 0}, AcceptsPerWindow: []float64{0, 0}},
		{Policy: "empty", Clients: 3, WindowMs: 10},
	}
	run.Reclaim = &Reclaim{TimesMs: []float64{7}, BoundMs: [2]float64{7, 7}}
	dir := t.TempDir()
	if _, err := Write(dir, run, Options{}); err != nil {
		t.Fatal(err)
	}
	ta := newTimeAxis(flatten([]Run{run}), func(p *PolicySeries) []float64 { return p.AttemptsPerWindow })
	if !ta.log {
		t.Errorf("time axis for 10 ms against 50 s series is linear, want log")
	}
	ca := newCountAxis([][]float64{run.Policies[0].AttemptsPerWindow})
	if !ca.log || ca.floor != ZeroFloor {
		t.Errorf("count axis for 1000 vs 3 = %+v, want log with floor %v", ca, ZeroFloor)
	}
	checkPNG(t, filepath.Join(dir, AttemptsChart+".png"))
}

func TestWriteRejectsBadInputWithoutWriting(t *testing.T) {
	good := PolicySeries{Policy: "full", Clients: 1, WindowMs: 10, AttemptsPerWindow: []float64{1}, AcceptsPerWindow: []float64{1}}
	bad := func(mut func(*PolicySeries)) Run {
		p := good
		mut(&p)
		return Run{Name: "bad", Policies: []PolicySeries{p}}
	}
	cases := []struct {
		name string
		runs []Run
		want string
	}{
		{"no runs", nil, "no runs"},
		{"no policies", []Run{{Name: "x"}}, "no policies"},
		{"zero window", []Run{bad(func(p *PolicySeries) { p.WindowMs = 0 })}, "window must be > 0"},
		{"negative count", []Run{bad(func(p *PolicySeries) { p.AttemptsPerWindow = []float64{-1} })}, "attempts window 0 must be finite and >= 0"},
		{"NaN rate", []Run{bad(func(p *PolicySeries) { p.DBRowsPerS = []float64{math.NaN()} })}, "db rows/s window 0"},
		{"more accepts than attempts windows", []Run{bad(func(p *PolicySeries) { p.AcceptsPerWindow = []float64{1, 1} })}, "2 accept windows but only 1"},
		{"duplicate labels", []Run{{Name: "a", Policies: []PolicySeries{good}}, {Name: "a", Policies: []PolicySeries{good}}}, "two runs are labelled"},
		{"bad reclaim bound", []Run{{Name: "r", Policies: []PolicySeries{good}, Reclaim: &Reclaim{TimesMs: []float64{1}, BoundMs: [2]float64{2, 1}}}}, "not an interval"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			_, err := Overlay(dir, c.runs, Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error = %v, want it to contain %q", err, c.want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("wrote %d files despite the error", len(entries))
			}
		})
	}
	if _, err := Write(filepath.Join(t.TempDir(), "missing"), Run{Name: "x", Policies: []PolicySeries{good}}, Options{}); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
	dir := t.TempDir()
	if _, err := Write(dir, Run{Name: "x", Policies: []PolicySeries{good}}, Options{Formats: []string{"png", "gif"}}); err == nil || !strings.Contains(err.Error(), `unsupported format "gif"`) {
		t.Errorf("gif format: error %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("wrote %d files before rejecting the format", len(entries))
	}
}

func TestOverlayKeepsPolicyColoursAndDashesRuns(t *testing.T) {
	a, b := seedModelRun(), seedModelRun()
	a.Label, b.Label = "baseline", "candidate"
	b.Policies = b.Policies[1:] // candidate has only "full"
	ds := flatten([]Run{a, b})
	if len(ds) != 3 {
		t.Fatalf("got %d lines, want 3", len(ds))
	}
	if ds[2].label != "candidate · full" {
		t.Errorf("label = %q, want %q", ds[2].label, "candidate · full")
	}
	if ds[2].color != ds[1].color {
		t.Errorf("full has colour %v in one run and %v in the other", ds[1].color, ds[2].color)
	}
	if slices.Equal(ds[2].dashes, ds[1].dashes) {
		t.Errorf("both runs drawn with dashes %v", ds[1].dashes)
	}
	dir := t.TempDir()
	paths, err := Overlay(dir, []Run{a, b}, Options{Formats: []string{"svg"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 3 {
		t.Fatalf("wrote %v, want 3 SVGs", paths)
	}
	checkSVG(t, filepath.Join(dir, AttemptsChart+".svg"), seriesColor(0), seriesColor(1))
	data, _ := os.ReadFile(filepath.Join(dir, AttemptsChart+".svg"))
	for _, want := range []string{"baseline · full", "candidate · full", "config seed-backoff-model, seed 1"} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("attempts.svg lacks %q", want)
		}
	}
	// Both runs have one config and seed, and one capacity: each is said once.
	for _, once := range []string{"config seed-backoff-model, seed 1", "admission capacity"} {
		if n := bytes.Count(data, []byte(once)); n != 1 {
			t.Errorf("attempts.svg says %q %d times, want once", once, n)
		}
	}
}

func TestFromResults(t *testing.T) {
	convergence := 42.0
	results := []sim.Result{{
		Policy: "full", Clients: 3, ConvergenceMs: &convergence, WindowMs: 10,
		ConnectMs: sim.Quantiles{P99: 40},
		Series:    sim.Series{Attempts: []int64{3, 2}, Accepts: []int64{1, 2}, Rejects: []int64{2, 0}},
	}}
	got := FromResults("cfg", 7, results, math.Inf(1))
	want := PolicySeries{Policy: "full", Clients: 3, WindowMs: 10, AttemptsPerWindow: []float64{3, 2}, AcceptsPerWindow: []float64{1, 2}, ConnectP99Ms: 40, ConvergenceMs: 42}
	if got.Name != "cfg" || got.Seed != 7 || !math.IsInf(got.CapacityPerWindow, 1) || len(got.Policies) != 1 {
		t.Fatalf("run = %+v", got)
	}
	p := got.Policies[0]
	if p.Policy != want.Policy || p.Clients != want.Clients || p.WindowMs != want.WindowMs ||
		!slices.Equal(p.AttemptsPerWindow, want.AttemptsPerWindow) || !slices.Equal(p.AcceptsPerWindow, want.AcceptsPerWindow) ||
		p.ConnectP99Ms != want.ConnectP99Ms || p.ConvergenceMs != want.ConvergenceMs {
		t.Errorf("policy = %+v, want %+v", p, want)
	}
	if got.hasCapacity() {
		t.Error("+Inf capacity draws a capacity line")
	}
	if got.Reclaim != nil || got.Outage != nil || p.StaleRoutesPerWindow != nil || p.DBRowsPerS != nil || got.DBBudgetRowsPerS != 0 {
		t.Errorf("failure-model fields set without the models: %+v", got)
	}

	// With the lease and database models on.
	res := results[0]
	res.Reclaim = &sim.ReclaimResult{ReclaimMs: 1711, BoundLoMs: 1000, BoundHiMs: 2000, StaleRoutes: []int64{3, 1}, StaleRouteSeconds: 0.9}
	res.Database = &sim.DatabaseResult{RowsPerS: []float64{7500, 5000}, ReadBudgetPerS: 25000}
	second := res
	second.Policy = "equal"
	second.Reclaim = &sim.ReclaimResult{ReclaimMs: 1711, BoundLoMs: 1000, BoundHiMs: 2000, StaleRoutes: []int64{2}}
	got = FromResults("lab", 1, []sim.Result{res, second}, 20)
	if got.Reclaim == nil || !slices.Equal(got.Reclaim.TimesMs, []float64{1711}) || got.Reclaim.BoundMs != [2]float64{1000, 2000} {
		t.Errorf("reclaim = %+v, want one time 1711 in [1000, 2000]", got.Reclaim)
	}
	if got.Outage == nil || got.Outage.EndMs != 1711 {
		t.Errorf("outage = %+v, want [0, 1711]", got.Outage)
	}
	if got.Policies[0].StaleRouteSeconds != 0.9 {
		t.Errorf("stale route-seconds = %v, want 0.9", got.Policies[0].StaleRouteSeconds)
	}
	if !slices.Equal(got.Policies[0].StaleRoutesPerWindow, []float64{3, 1}) || !slices.Equal(got.Policies[1].StaleRoutesPerWindow, []float64{2}) {
		t.Errorf("stale routes = %v, %v", got.Policies[0].StaleRoutesPerWindow, got.Policies[1].StaleRoutesPerWindow)
	}
	if !slices.Equal(got.Policies[0].DBRowsPerS, []float64{7500, 5000}) || got.DBBudgetRowsPerS != 25000 {
		t.Errorf("database = %v, budget %v", got.Policies[0].DBRowsPerS, got.DBBudgetRowsPerS)
	}
}

func TestConnectedFraction(t *testing.T) {
	p := &PolicySeries{Clients: 4, AcceptsPerWindow: []float64{1, 0, 2, 1}}
	if got, want := connectedFraction(p), []float64{0.25, 0.25, 0.75, 1}; !slices.Equal(got, want) {
		t.Errorf("connectedFraction = %v, want %v", got, want)
	}
	if got := connectedFraction(&PolicySeries{AcceptsPerWindow: []float64{1}}); got != nil {
		t.Errorf("without clients: %v, want nil", got)
	}
}

func TestSpreads(t *testing.T) {
	// Samples 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sample variance 32/7.
	xs := []float64{2, 4, 4, 4, 5, 5, 7, 9}
	sd := math.Sqrt(32.0 / 7)
	if got := MeanStd(xs); math.Abs(got.Mean-5) > 1e-12 || math.Abs(got.Lo-(5-sd)) > 1e-12 || math.Abs(got.Hi-(5+sd)) > 1e-12 {
		t.Errorf("MeanStd = %+v, want 5 ± %v", got, sd)
	}
	if got := MeanMinMax(xs); got != (Spread{5, 2, 9}) {
		t.Errorf("MeanMinMax = %+v, want {5 2 9}", got)
	}
	if got := MeanStd([]float64{3}); got != (Spread{3, 3, 3}) {
		t.Errorf("MeanStd of one sample = %+v, want {3 3 3}", got)
	}
}

func TestWindowLineDownsamplesLongSeries(t *testing.T) {
	vals := make([]float64, 10000)
	vals[1234] = 77
	ta := scale{min: 0, max: 100}
	ca := scale{min: 0, max: 100}
	l := windowLine(ta, ca, 10, vals, 500, lineStyle(color.Black, 1, nil))
	if len(l.XYs) > 500 {
		t.Errorf("line has %d points, want <= 500", len(l.XYs))
	}
	if !slices.ContainsFunc(l.XYs, func(p plotter.XY) bool { return p.Y == 77 && p.X == 12.34 }) {
		t.Error("the lone spike at window 1234 was dropped")
	}
	short := windowLine(ta, ca, 10, []float64{4, 6}, 500, lineStyle(color.Black, 1, nil))
	want := []plotter.XY{{X: 0, Y: 4}, {X: 0.01, Y: 6}, {X: 0.02, Y: 6}, {X: 0.02, Y: 0}}
	if !slices.Equal([]plotter.XY(short.XYs), want) {
		t.Errorf("short line = %v, want %v", short.XYs, want)
	}
}

// TestChartNamesListsEveryChart keeps ChartNames whole: every chart the
// synthetic runs with each model draw is in it, so that stormsim run and
// plot can remove a chart an earlier run drew and this one does not.
func TestChartNamesListsEveryChart(t *testing.T) {
	for _, run := range []Run{seedModelRun(), outcomeRun(), labRun()} {
		for _, name := range Names(run) {
			if !slices.Contains(ChartNames, name) {
				t.Errorf("chart %q is not in ChartNames", name)
			}
		}
	}
}

// TestEveryChartHasABuilder pins that each chart name has a function that
// draws it, and no function draws an unnamed chart.
func TestEveryChartHasABuilder(t *testing.T) {
	for _, name := range ChartNames {
		if chartBuilders[name] == nil {
			t.Errorf("chart %q has no builder", name)
		}
	}
	if len(chartBuilders) != len(ChartNames) {
		t.Errorf("%d builders for %d chart names", len(chartBuilders), len(ChartNames))
	}
}
