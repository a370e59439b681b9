package cli

import (
	"bytes"
	"encoding/json"
	"image/png"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"stormsim/internal/outdir/outdirtest"
)

// checkChartFiles checks that dir holds each chart as a decodable PNG
// with more than a handful of colours and as an SVG document.
func checkChartFiles(t *testing.T, dir string, charts ...string) {
	t.Helper()
	for _, c := range charts {
		data, err := os.ReadFile(filepath.Join(dir, c+".png"))
		if err != nil {
			t.Error(err)
			continue
		}
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Errorf("%s.png: %v", c, err)
			continue
		}
		b := img.Bounds()
		colours := map[[4]uint32]bool{}
		for y := b.Min.Y; y < b.Max.Y; y += 3 {
			for x := b.Min.X; x < b.Max.X; x += 3 {
				r, g, bl, a := img.At(x, y).RGBA()
				colours[[4]uint32{r, g, bl, a}] = true
			}
		}
		if b.Dx() < 600 || b.Dy() < 400 || len(colours) < 20 {
			t.Errorf("%s.png: %dx%d with %d colours: looks empty", c, b.Dx(), b.Dy(), len(colours))
		}
		svg, err := os.ReadFile(filepath.Join(dir, c+".svg"))
		if err != nil || !bytes.Contains(svg, []byte("<svg")) || len(svg) < 5000 {
			t.Errorf("%s.svg: %d bytes, err %v", c, len(svg), err)
		}
	}
}

func TestRunWritesCharts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	code, _, stderr := stormsim("run", "-c", ownConfigs[0], "-o", dir)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	checkChartFiles(t, dir, "attempts", "connected", "work-vs-time")
	entries, _ := os.ReadDir(dir)
	if len(entries) != 8 {
		t.Errorf("%d files, want result.json, report.html and 3 charts in 2 formats", len(entries))
	}
}

func TestRunReplications(t *testing.T) {
	cfg := ownConfigs[1]
	plain, _ := runJSON(t, "-c", cfg)
	one, _ := runJSON(t, "-c", cfg, "--replications", "1", "--workers", "3")
	if one != plain {
		t.Error("--replications 1 changed the JSON")
	}
	first, doc := runJSON(t, "-c", cfg, "--replications", "4", "--workers", "1")
	again, _ := runJSON(t, "-c", cfg, "--replications", "4", "--workers", "4")
	if first != again {
		t.Error("the worker count changed the JSON")
	}
	reps, _ := doc["replications"].(map[string]any)
	if reps["count"] != 4.0 || len(doc["summary"].([]any)) != 1 || doc["config"].(map[string]any)["replications"] != 4.0 {
		t.Errorf("replications %v, summary %v", reps, doc["summary"])
	}
	// The first replication is the single run: same result entries.
	if !strings.Contains(first, plain[strings.Index(plain, `"results": [`):strings.LastIndex(plain, "\n}")]) {
		t.Error("results of a replicated run differ from the single run's")
	}
	code, stdout, _ := stormsim("run", "-c", cfg, "--replications", "3")
	if code != ExitOK || !strings.Contains(stdout, "over 3 replications (seeds 1..3): mean ± half-width of the 95% confidence interval\n") {
		t.Errorf("table: exit %d\n%s", code, stdout)
	}
	for _, args := range [][]string{{"--replications", "-1"}, {"--workers", "-2"}} {
		if code, _, stderr := stormsim(append([]string{"run", "-c", cfg}, args...)...); code != ExitUsage {
			t.Errorf("%v: exit %d %s", args, code, stderr)
		}
	}
}

func TestPlotOverlaysSavedResults(t *testing.T) {
	base := t.TempDir()
	var files []string
	for _, name := range []string{"before", "after"} {
		dir := filepath.Join(base, name)
		args := []string{"run", "-c", ownConfigs[0], "-o", dir, "--charts=false", "--policy", "full"}
		if name == "after" {
			args = append(args, "--set", "policies[1].cap=1s")
		}
		if code, _, stderr := stormsim(args...); code != ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		files = append(files, filepath.Join(dir, ResultFile))
	}
	out := filepath.Join(base, "charts")
	code, stdout, stderr := stormsim(append([]string{"plot", "-o", out}, files...)...)
	if code != ExitOK || stdout != "wrote 6 chart files into "+out+"\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	checkChartFiles(t, out, "attempts", "connected", "work-vs-time")
	// Both runs share a config name, so the legend names them by directory.
	svg, _ := os.ReadFile(filepath.Join(out, "connected.svg"))
	if !bytes.Contains(svg, []byte("before")) || !bytes.Contains(svg, []byte("after")) {
		t.Error("overlay legend does not name the runs")
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"plot", "-o", out, filepath.Join(base, "none.json")}, filepath.Join(base, "none.json") + ": cannot read: no such file or directory"},
		{[]string{"plot", "-o", out, files[0], "--label", "a", "--label", "b", "--label", "c"}, "stormsim plot: 3 --label for 1 results"},
		{[]string{"plot", files[0]}, "stormsim plot: give result files and -o DIR"},
		{[]string{"plot", "-o", out, ownConfigs[0]}, ownConfigs[0] + ": not a stormsim result document"},
	} {
		if code, _, stderr := stormsim(tt.args...); code != ExitUsage || !strings.HasPrefix(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tt.args, code, stderr, tt.want)
		}
	}
}

// TestPlotBadDocumentsAreUsageErrors pins that every document a user can
// hand to plot that cannot be charted is refused with exit 2, one line
// naming the file (or the flag to use), and no output directory.
func TestPlotBadDocumentsAreUsageErrors(t *testing.T) {
	base := t.TempDir()
	res := filepath.Join(base, "r", ResultFile)
	if code, _, stderr := stormsim("run", "-c", ownConfigs[1], "-o", filepath.Dir(res), "--charts=false"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	edit := func(name string, change func(doc map[string]any)) string {
		data, _ := os.ReadFile(res)
		var doc map[string]any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		change(doc)
		data, _ = json.Marshal(doc)
		path := filepath.Join(base, name)
		os.WriteFile(path, data, 0o644)
		return path
	}
	first := func(doc map[string]any) map[string]any { return doc["results"].([]any)[0].(map[string]any) }
	noPolicies := edit("none.json", func(doc map[string]any) { doc["results"] = []any{} })
	negWindow := edit("window.json", func(doc map[string]any) { first(doc)["window_ms"] = -250 })
	negSeries := edit("series.json", func(doc map[string]any) { first(doc)["series"].(map[string]any)["attempts"].([]any)[0] = -5 })
	notDoc := filepath.Join(base, "a.json")
	os.WriteFile(notDoc, []byte(`{"a":1}`), 0o644)
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"the same file twice", []string{res, res},
			"stormsim plot: " + res + " and " + res + ` would both be labelled "r" in the legends; name each with --label NAME (one per result, in order)`},
		{"no policies", []string{noPolicies}, noPolicies + `: cannot chart it: run "seed-token-bucket": no policies to chart`},
		{"negative window", []string{negWindow}, negWindow + `: cannot chart it: run "seed-token-bucket" policy "full": window must be > 0 ms (got -250)`},
		{"negative series", []string{negSeries}, negSeries + `: cannot chart it: run "seed-token-bucket" policy "full": attempts window 0 must be finite and >= 0 (got -5)`},
		{"not a result document", []string{notDoc}, notDoc + ": not a stormsim result document: it has no schema_version (stormsim run -o DIR writes one as DIR/result.json)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(base, "charts", "new")
			code, stdout, stderr := stormsim(append([]string{"plot", "-o", out}, tt.args...)...)
			if code != ExitUsage || stdout != "" || !strings.HasPrefix(stderr, tt.want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, stdout, stderr, tt.want)
			}
			if _, err := os.Stat(filepath.Join(base, "charts")); err == nil {
				t.Error("plot left a directory behind")
			}
		})
	}
	dup, _, stderr := stormsim("plot", "-o", filepath.Join(base, "charts"), res, res, "--label", "x", "--label", "x")
	if want := `would both be labelled "x"`; dup != ExitUsage || !strings.Contains(stderr, want) {
		t.Errorf("two equal --label: exit %d, stderr %q, want %q", dup, stderr, want)
	}
}

// TestOutputDirIsCheckedBeforeTheRun pins that a directory that cannot be
// written is refused before anything runs (exit 2, nothing on stdout),
// not found after the run with the results lost.
func TestOutputDirIsCheckedBeforeTheRun(t *testing.T) {
	ro := outdirtest.UnwritableDir(t)
	for _, cmd := range [][]string{
		{"run", "-c", ownConfigs[0], "-o", ro},
		{"run", "-c", ownConfigs[0], "-o", filepath.Join(ro, "new")},
	} {
		code, stdout, stderr := stormsim(cmd...)
		if code != ExitUsage || stdout != "" || !strings.HasPrefix(stderr, "stormsim run: -o "+cmd[4]+": cannot ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 before running", cmd, code, stdout, stderr)
		}
	}
}

// TestRerunIntoADirectoryRemovesStaleFiles pins that run and plot remove
// what an earlier run of theirs wrote into -o DIR and this one did not
// (charts of a model now off, charts after --charts=false), and nothing
// else: the user's file beside them stays (--overwrite writes beside it).
func TestRerunIntoADirectoryRemovesStaleFiles(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)
	names := func() string {
		entries, _ := os.ReadDir(dir)
		var out []string
		for _, e := range entries {
			out = append(out, e.Name())
		}
		return strings.Join(out, " ")
	}
	if code, _, stderr := stormsim("run", "-c", "../configs/seed-lab.yaml", "-o", dir, "--overwrite"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := names(); !strings.Contains(got, "reclaim.png") || !strings.Contains(got, "database.svg") {
		t.Fatalf("the lab run drew no model charts: %s", got)
	}
	if code, _, stderr := stormsim("run", "-c", ownConfigs[0], "-o", dir, "--overwrite"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	core := "attempts.png attempts.svg connected.png connected.svg notes.txt report.html result.json work-vs-time.png work-vs-time.svg"
	if got := names(); got != core {
		t.Errorf("after a run without models:\n got %s\nwant %s", got, core)
	}
	if code, _, stderr := stormsim("run", "-c", ownConfigs[0], "-o", dir, "--charts=false", "--overwrite"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := names(); got != "notes.txt report.html result.json" {
		t.Errorf("after --charts=false: %s", got)
	}
	lab := filepath.Join(t.TempDir(), "lab")
	stormsim("run", "-c", "../configs/seed-lab.yaml", "-o", lab, "--charts=false")
	if code, _, stderr := stormsim("plot", "-o", dir, filepath.Join(lab, ResultFile), "--overwrite"); code != ExitOK {
		t.Fatalf("plot: exit %d: %s", code, stderr)
	}
	if code, _, stderr := stormsim("plot", "-o", dir, filepath.Join(dir, ResultFile), "--overwrite"); code != ExitOK {
		t.Fatalf("plot: exit %d: %s", code, stderr)
	}
	if got := names(); got != core {
		t.Errorf("after plot of a result without models:\n got %s\nwant %s", got, core)
	}
}

// TestOutputDirectoryIsNotReplacedSilently: -o over another run's or
// sweep's outputs, or over files the command does not write, is refused
// with exit 2 and nothing written, unless --overwrite; rerunning the same
// config into its own directory is fine.
func TestOutputDirectoryIsNotReplacedSilently(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run")
	if code, _, stderr := stormsim("run", "-c", ownConfigs[0], "-o", run); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	before := readDir(t, run)
	sweepCfg := writeConfig(t, smallSweep)
	swept := filepath.Join(t.TempDir(), "sweep")
	if code, _, stderr := stormsim("sweep", "-c", sweepCfg, "-o", swept, "--progress", "none"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	sweptBefore := readDir(t, swept)
	otherMetrics := writeConfig(t, strings.Replace(smallSweep, "metrics: [convergence_ms]", "metrics: [attempts]", 1))
	otherSweep := writeConfig(t, strings.Replace(strings.Replace(smallSweep, "metrics: [convergence_ms]", "metrics: [attempts]", 1), "seed: 2", "seed: 3", 1))
	user := t.TempDir()
	os.WriteFile(filepath.Join(user, ResultFile), []byte(`{"mine": true}`), 0o644)
	for _, tt := range []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"run over another config's run", []string{"run", "-c", ownConfigs[1], "-o", run},
			"stormsim run: -o " + run + ": holds what another stormsim run wrote (its result.json has config_hash sha256:"},
		{"run over the same config with other overrides", []string{"run", "-c", ownConfigs[0], "--set", "seed=9", "-o", run},
			": holds what another stormsim run wrote"},
		{"run over a result.json the user put there", []string{"run", "-c", ownConfigs[0], "-o", user},
			"stormsim run: -o " + user + ": its result.json was not written by stormsim run: give another -o DIR, or --overwrite to replace them\n"},
		{"run over a sweep", []string{"run", "-c", ownConfigs[0], "-o", swept},
			"stormsim run: -o " + swept + ": holds files stormsim run does not write (convergence_ms.png, convergence_ms.svg, sweep.csv and 2 more)"},
		{"another sweep, of other metrics, over a sweep", []string{"sweep", "-c", otherSweep, "-o", swept, "--progress", "none"},
			"stormsim sweep: -o " + swept + ": holds what another stormsim sweep wrote (its sweep.json has sweep sha256:"},
		{"sweep over a run", []string{"sweep", "-c", sweepCfg, "-o", run, "--progress", "none"},
			"stormsim sweep: -o " + run + ": holds files stormsim sweep does not write (attempts.png, attempts.svg, connected.png and 4 more)"},
		{"plot over a run", []string{"plot", filepath.Join(run, ResultFile), "-o", run}, "stormsim plot: -o " + run + ": holds files stormsim plot does not write (report.html, result.json)"},
		{"merge over a run", []string{"merge", swept, "-o", run}, "stormsim merge: -o " + run + ": holds files stormsim merge does not write"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := stormsim(tt.args...)
			if code != ExitUsage || stdout != "" || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, stdout, stderr, tt.want)
			}
		})
	}
	if after := readDir(t, run); len(after) != len(before) || !bytes.Equal(after[ResultFile], before[ResultFile]) {
		t.Error("a refused command changed the run's directory")
	}
	if after := readDir(t, swept); !maps.EqualFunc(after, sweptBefore, bytes.Equal) {
		t.Error("a refused command changed the sweep's directory")
	}
	if data, _ := os.ReadFile(filepath.Join(user, ResultFile)); string(data) != `{"mine": true}` {
		t.Errorf("the user's result.json was replaced: %s", data)
	}
	for _, args := range [][]string{
		{"run", "-c", ownConfigs[0], "-o", run},                               // the same config into its own directory
		{"sweep", "-c", sweepCfg, "-o", swept, "--progress", "none"},          // the same sweep into its own
		{"merge", swept, "-o", swept + "-merged"},                             // a fresh directory
		{"merge", swept, "-o", swept + "-merged"},                             // the same merge again
		{"plot", filepath.Join(run, ResultFile), "-o", t.TempDir() + "/plot"}, // charts only
		{"run", "-c", ownConfigs[1], "-o", run, "--overwrite"},                // replacing another run's, on request
		{"run", "-c", ownConfigs[0], "-o", user, "--overwrite"},
		{"sweep", "-c", otherMetrics, "-o", swept, "--progress", "none"}, // the same sweep charting another metric
	} {
		if code, _, stderr := stormsim(args...); code != ExitOK {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
	if charts, _ := filepath.Glob(filepath.Join(swept, "*.png")); len(charts) != 1 || filepath.Base(charts[0]) != "attempts.png" {
		t.Errorf("the same sweep charting another metric left the charts %v, want attempts.png alone", charts)
	}
}
