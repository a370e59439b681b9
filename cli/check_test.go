package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"stormsim/check"
	"stormsim/config"
)

// goldenDir holds the whole result of each shipped scenario config,
// series included, as stormsim run --format json writes it.
const goldenDir = "../testdata/golden"

// TestShippedConfigGoldens runs every shipped scenario config once and
// pins its summary table (testdata/NAME.table.golden) and its whole result
// (goldenDir/NAME.json), byte for byte; then it runs stormsim check
// --baseline-dir over every shipped config, as CI does, which compares
// every metric and every series value by value, runs the sweep files'
// corner points, and solves the solve files (with their check:
// replications) against their solve.json in goldenDir, the answer and
// every probe. A change in any number shows up as a drift naming it.
// go test ./cli -run Golden -update rewrites every kind of golden. With
// the race detector the solve files are only validated: their storms
// take ten times as long, and .ci/run checks them against their goldens
// without it, right after.
func TestShippedConfigGoldens(t *testing.T) {
	files, err := filepath.Glob("../configs/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no configs: %v", err)
	}
	var solves []string
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		if strings.HasPrefix(name, "solve-") {
			solves = append(solves, f)
			continue
		}
		if strings.HasPrefix(name, "sweep-") {
			if _, err := os.Stat(filepath.Join(goldenDir, name+".json")); err == nil {
				t.Errorf("%s: a sweep file has a result golden", name)
			}
			continue
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			code, stdout, stderr := stormsim("run", "-c", f, "-o", dir, "--charts=false", "--progress", "none")
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			golden(t, name+".table.golden", stdout)
			got, err := os.ReadFile(filepath.Join(dir, ResultFile))
			if err != nil {
				t.Fatal(err)
			}
			goldenResult(t, filepath.Join(goldenDir, name+".json"), got)
		})
	}
	if *update && len(solves) > 0 {
		if code, stdout, stderr := stormsim(append([]string{"check", "--baseline-dir", goldenDir, "--update-baseline"}, solves...)...); code != ExitOK {
			t.Fatalf("writing the solve goldens: exit %d\n%s%s", code, stdout, stderr)
		}
	}
	checked := files
	if raceDetector {
		checked = slices.DeleteFunc(slices.Clone(files), func(f string) bool { return slices.Contains(solves, f) })
		for _, f := range solves {
			if code, _, stderr := stormsim("validate", "-c", f); code != ExitOK {
				t.Errorf("validate %s: exit %d: %s", f, code, stderr)
			}
		}
		solves = nil
	}
	code, stdout, stderr := stormsim(append([]string{"check", "--baseline-dir", goldenDir}, checked...)...)
	if code != ExitOK {
		t.Fatalf("exit %d (go test ./cli -run Golden -update refreshes the goldens after a deliberate change)\n%s%s", code, stdout, stderr)
	}
	for _, f := range checked {
		if !strings.Contains(stdout, "["+f+"]") && !strings.Contains(stdout, "PASS "+f+": sweep of ") {
			t.Errorf("%s not checked:\n%s", f, stdout)
		}
	}
	if n := strings.Count(stdout, " probes within 0% "); n != len(solves) {
		t.Errorf("%d solve baselines compared, want %d:\n%s", n, len(solves), stdout)
	}
	if n := strings.Count(stdout, " series within 0%"); n != len(checked)-len(solves)-strings.Count(stdout, ": sweep of ") {
		t.Errorf("%d baselines compared their series, want every scenario's:\n%s", n, stdout)
	}
}

// goldenResult compares a result document with its golden file (or
// writes it, with -update). A difference is reported as check reports a
// drift: each metric and series that changed, with its values.
func goldenResult(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./cli -run Golden -update writes it)", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	wantDoc, err1 := check.ParseDocument(path, want)
	gotDoc, err2 := check.ParseDocument("this run", got)
	if err1 != nil || err2 != nil {
		t.Fatalf("result differs from %s, and cannot be compared: %v %v", path, err1, err2)
	}
	var lines []string
	cmp := check.Compare(wantDoc, gotDoc, check.Tolerance{})
	for _, d := range cmp.Drifts {
		lines = append(lines, "drift "+d.String())
	}
	for _, d := range cmp.SeriesDrifts {
		lines = append(lines, "drift "+d.String())
	}
	if len(lines) == 0 {
		lines = append(lines, "no number drifted; "+firstDifference(want, got))
	}
	t.Errorf("result differs from %s (go test ./cli -run Golden -update refreshes it after a deliberate change):\n  %s", path, strings.Join(lines, "\n  "))
}

// firstDifference names the first line where got differs from want.
func firstDifference(want, got []byte) string {
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := range max(len(w), len(g)) {
		if i >= len(w) || i >= len(g) || w[i] != g[i] {
			line := func(lines []string) string {
				if i < len(lines) {
					return fmt.Sprintf("%.200q", lines[i])
				}
				return "(none)"
			}
			return fmt.Sprintf("line %d is %s in the golden, %s now", i+1, line(w), line(g))
		}
	}
	return "the bytes differ"
}

// checkConfig is a small scenario whose checks: block holds one passing
// and (by line 7) one misspelt threshold.
const checkConfig = `name: c
seed: 3
clients: 20
admission: {kind: slots, slot: 10ms, per_slot: 5}
policies: [{name: full, base: 100ms, cap: 400ms}]
checks:
  - results[full].accepted == 20
`

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCheckExitCodes(t *testing.T) {
	good := writeConfig(t, checkConfig)
	misspelt := writeConfig(t, checkConfig+"  - results[full].convergance_ms < 5s\n")
	noData := writeConfig(t, checkConfig+"  - results[full].reclaim.reclaim_ms < 5s\n")
	bare := writeConfig(t, checkConfig+"  - results[full].convergence_ms < 60\n")
	nothing := writeConfig(t, strings.Split(checkConfig, "checks:")[0])
	huge := writeConfig(t, checkConfig+"# "+strings.Repeat("x", config.MaxFileBytes)+"\n")
	baseDir := t.TempDir()
	asFile := filepath.Join(baseDir, "file")
	os.WriteFile(asFile, nil, 0o644)
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string // prefix
		wantStderr string // prefix of stderr
	}{
		{"file checks pass", []string{"check", "-c", good}, ExitOK, "PASS results[full].accepted == 20: observed 20\n", ""},
		{"positional file", []string{"check", good}, ExitOK, "PASS results[full].accepted == 20: observed 20\n", ""},
		{"flag check fails", []string{"check", "-c", good, "--check", "results[full].attempts < 1"},
			ExitCheckFailed, "PASS results[full].accepted == 20: observed 20\nFAIL results[full].attempts < 1: observed ", "stormsim check: 1 of 2 checks failed"},
		{"no data fails", []string{"check", "-c", noData}, ExitCheckFailed,
			"PASS results[full].accepted == 20: observed 20\nFAIL results[full].reclaim.reclaim_ms < 5s: no data", ""},
		{"a time without a unit in the file", []string{"check", "-c", bare}, ExitUsage, "",
			bare + ":8: checks[1]: results[full].convergence_ms is a time: 60 needs a unit, such as 60ms or 60s\n"},
		{"a time without a unit in a flag", []string{"check", "-c", good, "--check", "connect_ms.p99 < 3000"}, ExitUsage, "",
			`--check "connect_ms.p99 < 3000": connect_ms.p99 is a time: 3000 needs a unit, such as 3000ms or 3000s` + "\n"},
		{"a time in the unit written", []string{"check", "-c", good, "--check", "connect_ms.p99 < 3s"}, ExitOK,
			"PASS results[full].accepted == 20: observed 20\nPASS results[full].connect_ms.p99 < 3s: observed 0.", ""},
		{"misspelt metric in the file", []string{"check", "-c", misspelt}, ExitUsage, "",
			misspelt + ":8: checks[1]: results[full].convergance_ms: unknown metric; did you mean results[full].convergence_ms?\n"},
		{"misspelt metric in a flag", []string{"check", "-c", good, "--check", "results[full].atempts < 3"}, ExitUsage, "",
			`--check "results[full].atempts < 3": results[full].atempts: unknown metric; did you mean results[full].attempts?`},
		{"misspelt policy", []string{"check", "-c", good, "--check", "results[ful].attempts < 3"}, ExitUsage, "",
			`--check "results[ful].attempts < 3": results[ful].attempts: no policy labelled ful (the config has full); did you mean results[full].attempts?`},
		{"bad grammar", []string{"check", "-c", good, "--check", "attempts is small"}, ExitUsage, "", `--check "attempts is small": want METRIC OP NUMBER`},
		{"statistic without replications", []string{"check", "-c", good, "--check", "p95(attempts) < 3"}, ExitUsage, "",
			`--check "p95(attempts) < 3": p95(attempts): statistics over replications need replications >= 2 (got 1); use attempts`},
		{"statistic with replications", []string{"check", "-c", good, "--replications", "3", "--check", "p95(attempts) > 3"}, ExitOK,
			"PASS results[full].accepted == 20: observed 20\nPASS p95(results[full].attempts) > 3: observed ", ""},
		{"nothing to check", []string{"check", "-c", nothing}, ExitUsage, "", nothing + ": nothing to check"},
		{"no config", []string{"check"}, ExitUsage, "", "stormsim check: give a config"},
		{"bad config", []string{"check", "-c", "testdata/bad/zero-slot.yaml"}, ExitUsage, "", "testdata/bad/zero-slot.yaml:"},
		{"config too large to be one", []string{"check", "-c", huge}, ExitUsage, "",
			huge + ": cannot read config: larger than 16 MiB; is it a config?\n"},
		{"missing baseline", []string{"check", "-c", good, "--baseline", filepath.Join(baseDir, "none.json")}, ExitUsage, "",
			"--baseline: " + filepath.Join(baseDir, "none.json") + ": cannot read: no such file or directory (write it with --update-baseline)\n"},
		{"missing baseline in a directory names that flag", []string{"check", "-c", good, "--baseline-dir", baseDir}, ExitUsage, "",
			"--baseline-dir: " + filepath.Join(baseDir, "c.json") + ": cannot read: no such file or directory (write it with --update-baseline)\n"},
		{"bad tolerance", []string{"check", "-c", good, "--tolerance", "lots"}, ExitUsage, "", "stormsim check: --tolerance must be"},
		{"baseline for several configs", []string{"check", good, good, "--baseline", "x.json"}, ExitUsage, "", "stormsim check: --baseline names one result"},
		{"cannot write the baseline", []string{"check", "-c", good, "--baseline", filepath.Join(asFile, "b.json"), "--update-baseline"}, ExitInternal,
			"PASS results[full].accepted == 20: observed 20\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := stormsim(tt.args...)
			if code != tt.wantCode || !strings.HasPrefix(stdout, tt.wantStdout) || !strings.HasPrefix(stderr, tt.wantStderr) {
				t.Errorf("exit %d, stdout\n%s\nstderr\n%s\nwant exit %d, stdout prefix\n%s\nstderr prefix\n%s", code, stdout, stderr, tt.wantCode, tt.wantStdout, tt.wantStderr)
			}
			if tt.wantCode == ExitUsage && stdout != "" {
				t.Errorf("a config error ran something: %q", stdout)
			}
		})
	}
}

func TestCheckBaselineDrift(t *testing.T) {
	cfg := writeConfig(t, checkConfig)
	baseline := filepath.Join(t.TempDir(), "golden", "c.json")
	if code, stdout, stderr := stormsim("check", "-c", cfg, "--baseline", baseline, "--update-baseline"); code != ExitOK || !strings.Contains(stdout, "wrote baseline "+baseline) {
		t.Fatalf("update: exit %d %s %s", code, stdout, stderr)
	}
	code, stdout, _ := stormsim("check", "-c", cfg, "--baseline", baseline)
	if code != ExitOK || !strings.Contains(stdout, "PASS baseline "+baseline+": ") {
		t.Errorf("unchanged run: exit %d\n%s", code, stdout)
	}
	// Faster admission: fewer attempts, earlier convergence (drift down);
	// slower: more of both (drift up). Either fails at 5%.
	for _, tt := range []struct{ set, sign string }{{"admission.per_slot=20", "-"}, {"admission.per_slot=1", "+"}} {
		code, stdout, _ := stormsim("check", "-c", cfg, "--baseline", baseline, "--tolerance", "5%", "--set", tt.set)
		if code != ExitCheckFailed || !strings.Contains(stdout, "FAIL baseline "+baseline+": ") ||
			!strings.Contains(stdout, "  drift results[full].convergence_ms: ") || !strings.Contains(stdout, "% now ("+tt.sign) && !strings.Contains(stdout, " now ("+tt.sign) {
			t.Errorf("--set %s: exit %d\n%s", tt.set, code, stdout)
		}
		if !strings.Contains(stdout, "\n  config: admission.per_slot: 5 -> "+strings.TrimPrefix(tt.set, "admission.per_slot=")+"\n") {
			t.Errorf("--set %s: the config change is not named\n%s", tt.set, stdout)
		}
	}
	// A generous tolerance passes the same change.
	if code, stdout, _ := stormsim("check", "-c", cfg, "--baseline", baseline, "--tolerance", "1000%", "--set", "admission.per_slot=4"); code != ExitOK {
		t.Errorf("tolerance 1000%%: exit %d\n%s", code, stdout)
	}
}

// TestCheckDriftReportGuides pins the shape of a drift report from a
// baseline with series: the verdict, the config key that changed, at
// most 10 drifts with the count of the rest, and the command that
// accepts the change. A rerun of the baseline's config passes, trailing
// empty windows and all.
func TestCheckDriftReportGuides(t *testing.T) {
	cfg := writeConfig(t, "name: g\nseed: 1\nclients: 3000\ninitial_jitter: 1s\nadmission: {kind: token_bucket, rate: 130, burst: 10, retry_after: 1s}\n"+
		"policies: [{name: full, base: 1s, cap: 30s, honor_retry_after: true}]\nmetrics: {window: 1s}\nfailure: {kind: crash}\n"+
		"gateways: {count: 5, balancer: least_connections, health_check: 2s, connections: 3000}\n")
	code, stdout, stderr := stormsim("run", "-c", cfg, "--format", "json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	baseline := filepath.Join(t.TempDir(), "base.json")
	os.WriteFile(baseline, []byte(stdout), 0o644)
	if code, stdout, _ := stormsim("check", "-c", cfg, "--baseline", baseline, "--tolerance", "5%"); code != ExitOK {
		t.Errorf("the baseline's own config: exit %d\n%s", code, stdout)
	}
	args := []string{"check", "-c", cfg, "--set", "admission.rate=125", "--baseline", baseline, "--tolerance", "5%"}
	code, stdout, _ = stormsim(args...)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if code != ExitCheckFailed || len(lines) < 4 {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	drifts := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "  drift ") {
			drifts++
		}
	}
	accept := "  if the change is meant, accept it: stormsim " + strings.Join(args, " ") + " --update-baseline (it keeps no series; stormsim run -c FILE --format json > BASELINE keeps them)"
	if !strings.HasPrefix(lines[0], "FAIL baseline "+baseline+": ") || lines[1] != "  config: admission.rate: 130 -> 125" ||
		drifts < 1 || drifts > 10 || lines[len(lines)-1] != accept {
		t.Errorf("report:\n%s", stdout)
	}
	if more := lines[len(lines)-2]; drifts == 10 && !strings.HasPrefix(more, "  and ") {
		t.Errorf("10 drifts shown and no count of the rest:\n%s", stdout)
	}
}

// TestCheckRunsASweepsCorners pins that check runs a sweep file on a
// small grid, its corners, and fails when a charted metric has no value
// at one of them.
func TestCheckRunsASweepsCorners(t *testing.T) {
	code, stdout, stderr := stormsim("check", "../configs/sweep-backoff.yaml")
	if code != ExitOK || stdout != "PASS ../configs/sweep-backoff.yaml: sweep of 90 points x 5 replications, every point valid; its 8 corner points run with 2 replications, every metric has data\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// The lease is off at the first value of the axis: the reclaim has a
	// value at half the corners, which passes and is said.
	yaml := strings.Replace(smallSweep, "  admission.per_slot: {from: 1, to: 9, steps: 3}\n", "  lease: [null, {duration: 1s}]\n", 1)
	toggled := writeConfig(t, strings.Replace(yaml, "metrics: [convergence_ms]", "metrics: [convergence_ms, reclaim.reclaim_ms]", 1))
	code, stdout, stderr = stormsim("check", toggled)
	if code != ExitOK || stdout != "PASS "+toggled+": sweep of 4 points x 2 replications, every point valid; its 4 corner points run with 2 replications, every metric has data (results[full].reclaim.reclaim_ms at 2 of 4)\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// A crash has no drain: a drain metric would chart nothing.
	crash := strings.Replace(smallSweep, "  policies:\n", "  failure: {kind: crash}\n  policies:\n", 1)
	noDrain := writeConfig(t, strings.Replace(crash, "metrics: [convergence_ms]", "metrics: [drain.drain_ms]", 1))
	code, stdout, stderr = stormsim("check", noDrain)
	if code != ExitCheckFailed || stdout != "FAIL "+noDrain+": sweep of 6 points x 2 replications, every point valid; its 4 corner points run with 2 replications: metric results[full].drain.drain_ms has no value at any of the 4 points run\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
