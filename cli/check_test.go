package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"stormsim/config"
)

// goldenDir holds a result per shipped config: stormsim check compares
// every metric of a fresh run with it, so a change in model outputs is a
// visible diff. go test ./cli -run Golden -update rewrites them (as does
// stormsim check --baseline-dir testdata/golden configs/*.yaml --update-baseline
// from the repository root).
const goldenDir = "../testdata/golden"

func TestShippedConfigGoldens(t *testing.T) {
	files, err := filepath.Glob("../configs/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no configs: %v", err)
	}
	args := append([]string{"check", "--baseline-dir", goldenDir}, files...)
	if *update {
		args = append(args, "--update-baseline")
	}
	code, stdout, stderr := stormsim(args...)
	if code != ExitOK {
		t.Fatalf("exit %d (go test ./cli -run Golden -update refreshes the goldens after a deliberate change)\n%s%s", code, stdout, stderr)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		sweep := strings.HasPrefix(name, "sweep-")
		if _, err := os.Stat(filepath.Join(goldenDir, name+".json")); (err == nil) == sweep {
			t.Errorf("%s: golden present %v, want it only for scenarios", name, err == nil)
		}
		if !strings.Contains(stdout, "["+f+"]") && !strings.Contains(stdout, "PASS "+f+": sweep of ") {
			t.Errorf("%s not checked:\n%s", f, stdout)
		}
	}
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
			"PASS results[full].accepted == 20: observed 20\nFAIL results[full].reclaim.reclaim_ms < 5000: no data", ""},
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
		if !strings.Contains(stdout, "note: the baseline ran config ") {
			t.Errorf("--set %s: the config change is not noted\n%s", tt.set, stdout)
		}
	}
	// A generous tolerance passes the same change.
	if code, stdout, _ := stormsim("check", "-c", cfg, "--baseline", baseline, "--tolerance", "1000%", "--set", "admission.per_slot=4"); code != ExitOK {
		t.Errorf("tolerance 1000%%: exit %d\n%s", code, stdout)
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
