//go:build !race

// Drawing every picture of docs/img runs two sweeps, five storms and two
// solves:
// outside the race detector, which would slow them tenfold, .ci/run runs
// this test on its own.

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"stormsim/internal/imagediff"
)

// docImages are the pictures in docs/img and the commands that draw
// each: a user's commands, run in a temporary directory T; the picture
// is the chart file under T.
var docImages = []struct {
	image    string
	commands [][]string
	chart    string
}{
	{"attempts.png", [][]string{seedRun}, "seed/attempts.png"},
	{"connected.png", [][]string{seedRun}, "seed/connected.png"},
	{"work-vs-time.png", [][]string{seedRun}, "seed/work-vs-time.png"},
	{"seed-lab-reclaim.png", [][]string{labRun}, "lab/reclaim.png"},
	{"seed-lab-stale-routes.png", [][]string{labRun}, "lab/stale-routes.png"},
	{"sweep-admission-convergence.png", [][]string{{"sweep", "-c", "../configs/sweep-admission.yaml", "-o", "T/admission", "--progress", "none"}}, "admission/max-convergence_ms.png"},
	{"metastable-boundary.png", [][]string{{"sweep", "-c", "../configs/sweep-metastability.yaml", "-o", "T/boundary", "--progress", "none"}}, "boundary/convergence_ms.png"},
	{"metastable-queue.png", [][]string{serveRun}, "serve/queue.png"},
	{"metastable-connected.png", threeStorms, "three/connected.png"},
	{"metastable-goodput.png", threeStorms, "three/goodput.png"},
	{"solve-seed-window.png", [][]string{{"solve", "-c", "../configs/solve-seed-window.yaml", "-o", "T/window", "--progress", "none"}}, "window/requirements.png"},
	{"solve-metastable-frontier.png", [][]string{{"solve", "-c", "../configs/solve-metastable-boundary.yaml", "--replications", "4", "-o", "T/frontier", "--progress", "none"}}, "frontier/frontier.png"},
}

var (
	seedRun     = []string{"run", "-c", "../configs/seed-backoff-model.yaml", "-o", "T/seed"}
	labRun      = []string{"run", "-c", "../configs/seed-lab.yaml", "--replications", "500", "-o", "T/lab"}
	serveRun    = []string{"run", "-c", "../configs/metastable-storm.yaml", "-o", "T/serve"}
	threeStorms = [][]string{serveRun,
		{"run", "-c", "../configs/metastable-storm-bucket.yaml", "-o", "T/bucket"},
		{"run", "-c", "../configs/metastable-storm-skip.yaml", "-o", "T/skip"},
		{"plot", "T/serve/result.json", "T/bucket/result.json", "T/skip/result.json", "-o", "T/three"}}
)

// TestDocImagesAreFresh draws every picture of docs/img again with the
// commands a user runs and requires the one in docs/img to be the same
// picture: a change to a chart or to a model's results that leaves a
// documented picture stale fails here (the boundary map's caption once
// spoke of grey cells the tool no longer drew). Refresh with
// go test ./cli -run DocImages -update, and review the pictures.
func TestDocImagesAreFresh(t *testing.T) {
	dir := t.TempDir()
	ran := map[string]bool{}
	names := map[string]bool{}
	for _, img := range docImages {
		names[img.image] = true
		for _, cmd := range img.commands {
			args := make([]string, len(cmd))
			for i, a := range cmd {
				args[i] = strings.ReplaceAll(a, "T/", dir+"/")
			}
			key := strings.Join(args, " ")
			if ran[key] {
				continue
			}
			ran[key] = true
			// A solve that finds no value exits 1 with its charts drawn.
			if code, _, stderr := stormsim(args...); code != ExitOK && !(cmd[0] == "solve" && code == ExitCheckFailed) {
				t.Fatalf("stormsim %s: exit %d: %s", strings.Join(cmd, " "), code, stderr)
			}
		}
		drawn := filepath.Join(dir, img.chart)
		doc := filepath.Join("..", "docs", "img", img.image)
		if *update {
			data, err := os.ReadFile(drawn)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(doc, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := imagediff.ReadPNG(drawn)
		if err != nil {
			t.Fatal(err)
		}
		want, err := imagediff.ReadPNG(doc)
		if err != nil {
			t.Errorf("%s: %v (refresh with go test ./cli -run DocImages -update)", doc, err)
			continue
		}
		if d := imagediff.MeanAbsDiff(got, want); d < 0 || d > imagediff.Tolerance {
			t.Errorf("%s is stale: stormsim %s draws it %.2f per channel apart (tolerance %v); refresh with go test ./cli -run DocImages -update and review it",
				doc, strings.Join(img.commands[len(img.commands)-1], " "), d, imagediff.Tolerance)
		}
	}
	// Every chart in docs/img is drawn here; a report's screenshot is the
	// browser's, refreshed by the browser test (go test ./htmlreport -run
	// Browser -shots DIR).
	pictures, _ := filepath.Glob(filepath.Join("..", "docs", "img", "*.png"))
	for _, p := range pictures {
		if base := filepath.Base(p); !names[base] && !strings.HasPrefix(base, "report-") {
			t.Errorf("%s has no command that draws it in docImages", p)
		}
	}
}
