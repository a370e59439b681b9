//go:build !race

// The browser test runs outside the race detector (.ci/run runs it on
// its own): it simulates every shipped sweep, which the race detector
// slows ten times, and it tests a browser, not Go code's races.

package htmlreport

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"stormsim/internal/chromium"
	"stormsim/sweep"
)

var shots = flag.String("shots", "", "write each report's screenshot into this directory")

// shipped is one report to load: its directory and the documents the
// page must hold byte for byte.
type shipped struct {
	name  string
	dir   string
	files []string
}

// shippedReports writes the report of every shipped config into root: a
// run's from its golden result (the config's whole result, exact), a
// sweep's from running it, a solve's from its golden solve.json, and the
// seed lab's calibration from a saved calibration.json.
func shippedReports(t *testing.T, root string) []shipped {
	t.Helper()
	var out []shipped
	configs, err := filepath.Glob("../configs/*.yaml")
	if err != nil || len(configs) == 0 {
		t.Fatalf("no shipped configs: %v", err)
	}
	for _, c := range configs {
		name := strings.TrimSuffix(filepath.Base(c), ".yaml")
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasPrefix(name, "solve-"):
			// The golden solve.json, as stormsim check solves the file
			// (its check: replications): a solve -o writes the same
			// document with more seeds at every probe.
			data, err := os.ReadFile(filepath.Join("..", "testdata", "golden", name+".json"))
			if err != nil {
				t.Fatalf("%s has no golden solve: %v", c, err)
			}
			if err := os.WriteFile(filepath.Join(dir, SolveFile), data, 0o644); err != nil {
				t.Fatal(err)
			}
			out = append(out, shipped{name, dir, []string{SolveFile}})
		case strings.HasPrefix(name, "sweep-"):
			plan, err := sweep.Load(c, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := plan.Run(sweep.Options{Dir: dir, NoCharts: true}); err != nil {
				t.Fatal(err)
			}
			out = append(out, shipped{name, dir, []string{sweep.ManifestFile, sweep.PointsFile}})
		default:
			data, err := os.ReadFile(filepath.Join("..", "testdata", "golden", name+".json"))
			if err != nil {
				t.Fatalf("%s has no golden result: %v", c, err)
			}
			if err := os.WriteFile(filepath.Join(dir, RunFile), data, 0o644); err != nil {
				t.Fatal(err)
			}
			out = append(out, shipped{name, dir, []string{RunFile}})
		}
	}
	cal := filepath.Join(root, "calibration-seed-lab")
	os.MkdirAll(cal, 0o755)
	for _, f := range []string{CalibrationFile, calibratedFile} {
		data, err := os.ReadFile(filepath.Join("testdata", "calibration", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(cal, f), data, 0o644)
	}
	out = append(out, shipped{"calibration-seed-lab", cal, []string{CalibrationFile}})
	for _, s := range out {
		p, err := FromDir(s.dir)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if _, err := Write(s.dir, p); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// seen is what the page did, as the browser reports it.
type seen struct {
	Charts []struct {
		ID            string
		Width, Height float64
	}
	Data     map[string]string
	Sections []string
}

const inspect = `(async () => {
  const charts = [...document.querySelectorAll("figure.chart")].map((f) => {
    const s = f.querySelector("svg");
    const r = s ? s.getBoundingClientRect() : { width: 0, height: 0 };
    return { ID: f.id, Width: r.width, Height: r.height };
  });
  const data = {};
  for (const el of document.querySelectorAll("script[data-encoding]")) {
    data[el.dataset.file] = await stormsimDocument(el.id);
  }
  return { Charts: charts, Data: data, Sections: [...document.querySelectorAll("main > section")].map((s) => s.id) };
})()`

// TestShippedReportsInABrowser loads every shipped config's report from
// file:// in headless Chromium and checks: no console error, exception
// or error logged; no request but the page's own; every chart drawn with
// a nonzero size; each embedded document, decompressed by the page,
// equal to the file beside it; a screenshot that is not blank. Without
// Chromium it skips, with CI=true it fails (.ci/run installs Debian's
// chromium).
func TestShippedReportsInABrowser(t *testing.T) {
	path := chromium.Need(t)
	start := time.Now()
	reports := shippedReports(t, t.TempDir())
	built := time.Since(start)
	b, err := chromium.Start(path, 1280, 1600)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	page, err := b.NewPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reports {
		t.Run(r.name, func(t *testing.T) {
			page.Reset()
			file := filepath.Join(r.dir, File)
			abs, _ := filepath.Abs(file)
			url := "file://" + abs
			if err := page.Load(ctx, url); err != nil {
				t.Fatal(err)
			}
			var got seen
			if err := page.Evaluate(ctx, inspect, &got); err != nil {
				t.Fatal(err)
			}
			shot, err := page.Screenshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			judgeEvents(t, page.Events(), url)
			p, err := FromDir(r.dir)
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			for _, s := range p.Sections {
				want += len(s.Charts)
			}
			if len(got.Charts) != want || want == 0 {
				t.Errorf("%d charts drawn, the page has %d", len(got.Charts), want)
			}
			for _, c := range got.Charts {
				if !(c.Width > 100 && c.Height > 50) {
					t.Errorf("chart %s drawn %.0f x %.0f", c.ID, c.Width, c.Height)
				}
			}
			for _, f := range r.files {
				data, err := os.ReadFile(filepath.Join(r.dir, f))
				if err != nil {
					t.Fatal(err)
				}
				if got.Data[f] != string(data) {
					t.Errorf("the page's %s (%d bytes) is not the file's (%d bytes)", f, len(got.Data[f]), len(data))
				}
			}
			notBlank(t, shot)
			if *shots != "" {
				os.WriteFile(filepath.Join(*shots, "report-"+r.name+".png"), shot, 0o644)
			}
			st, _ := os.Stat(file)
			t.Logf("%s: %d bytes, %d charts", r.name, st.Size(), len(got.Charts))
		})
	}
	t.Logf("%d reports: built in %v, loaded and checked in %v", len(reports), built.Round(time.Millisecond), (time.Since(start) - built).Round(time.Millisecond))
}

// judgeEvents fails on a console error, an exception, an error logged
// (a blocked request among them) and any request but the page's own.
func judgeEvents(t *testing.T, events []chromium.Event, url string) {
	t.Helper()
	for _, e := range events {
		var p struct {
			Type    string                            `json:"type"`
			Args    []struct{ Value any }             `json:"args"`
			Entry   struct{ Level, Text, URL string } `json:"entry"`
			Request struct{ URL string }              `json:"request"`
			Details struct {
				Text      string                       `json:"text"`
				Exception struct{ Description string } `json:"exception"`
			} `json:"exceptionDetails"`
		}
		json.Unmarshal(e.Params, &p)
		switch e.Method {
		case "Runtime.consoleAPICalled":
			if p.Type == "error" || p.Type == "assert" || p.Type == "warning" {
				t.Errorf("console %s: %v", p.Type, p.Args)
			}
		case "Runtime.exceptionThrown":
			t.Errorf("exception: %s %s", p.Details.Text, p.Details.Exception.Description)
		case "Log.entryAdded":
			if p.Entry.Level == "error" || p.Entry.Level == "warning" {
				t.Errorf("logged %s: %s %s", p.Entry.Level, p.Entry.Text, p.Entry.URL)
			}
		case "Network.requestWillBeSent":
			if p.Request.URL != url && !strings.HasPrefix(p.Request.URL, "data:") {
				t.Errorf("the page requested %s", p.Request.URL)
			}
		}
	}
}

// notBlank requires a screenshot with text and colour on it: more than a
// handful of colours and a share of pixels that are not the background.
func notBlank(t *testing.T, shot []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	bounds := img.Bounds()
	colours := map[color.RGBA]bool{}
	ink, all := 0, 0
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 4 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 4 {
			r, g, b, _ := img.At(x, y).RGBA()
			colours[color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 0xff}] = true
			if r>>8 < 0xf0 || g>>8 < 0xf0 || b>>8 < 0xf0 {
				ink++
			}
			all++
		}
	}
	if len(colours) < 32 || float64(ink) < 0.02*float64(all) {
		t.Errorf("the screenshot looks blank: %d colours, %.1f%% not background", len(colours), 100*float64(ink)/float64(all))
	}
}
