package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seedSolve solves the seed's discrete backoff model as shipped, with
// exponential backoff (no jitter), for the least admission.per_slot:
// everyone back within 60 s needs 44 (the closed form 3,100 +
// (ceil(1000 / p) - 6) x 3,200 ms), at most PEAK admissions a 10 ms window
// allows per_slot <= PEAK.
var seedSolve = func() string {
	path, err := filepath.Abs("../configs/seed-backoff-model.yaml")
	if err != nil {
		panic(err)
	}
	return "name: seed-solve\nbase: " + path + `
vary: {key: admission.per_slot, min: 1, max: 500, goal: least, resolution: 1}
require:
  - results[exponential].convergence_ms <= 60s
  - results[exponential].peak_accepts_per_window <= PEAK
`
}()

func TestSolveExitCodes(t *testing.T) {
	found := writeConfig(t, strings.Replace(seedSolve, "PEAK", "100", 1))
	code, stdout, stderr := stormsim("solve", "-c", found, "--progress", "none")
	if code != ExitOK || stderr != "" || !strings.Contains(stdout, "\nANSWER: least admission.per_slot = 44 (bracket [43, 44], ") ||
		!strings.Contains(stdout, "feasible: admission.per_slot 44 to 100 (low end: results[exponential].convergence_ms <= 60s; high end: results[exponential].peak_accepts_per_window <= 100)") {
		t.Errorf("an answer: exit %d, stderr %q, stdout\n%s", code, stderr, stdout)
	}
	none := writeConfig(t, strings.Replace(seedSolve, "PEAK", "40", 1))
	code, stdout, stderr = stormsim("solve", "-c", none, "--progress", "none")
	if code != ExitCheckFailed || stderr != "stormsim solve: seed-solve: no value meets every requirement (see above: what fails, what came closest, what to relax)\n" ||
		!strings.Contains(stdout, "\nINFEASIBLE: no admission.per_slot in [1, 500] meets every requirement") ||
		!strings.Contains(stdout, "results[exponential].convergence_ms <= 60s holds from admission.per_slot = 44 up (fails at 43: 60.7s)") ||
		!strings.Contains(stdout, "results[exponential].peak_accepts_per_window <= 40 holds up to admission.per_slot = 40 (fails at 41: 41)") ||
		!strings.Contains(stdout, "results[exponential].convergence_ms <= 63.9s (+6.5%): met at admission.per_slot = 40, where every other requirement holds") {
		t.Errorf("infeasible: exit %d, stderr %q, stdout\n%s", code, stderr, stdout)
	}
	for _, tt := range []struct{ name, from, to, want string }{
		{"a key that cannot be varied", "key: admission.per_slot", "key: metrics.window_ms", ":3: vary.key: cannot be varied: no scenario key metrics.window_ms; did you mean metrics.window?"},
		{"min >= max", "min: 1, max: 500", "min: 500, max: 1", ":3: vary.min: must be below max (got min 500, max 1)"},
		{"a missing metric", "peak_accepts_per_window", "peak_accept_per_window", ":6: require: results[exponential].peak_accept_per_window: unknown metric; did you mean results[exponential].peak_accepts_per_window?"},
		{"a resolution finer than the unit", "resolution: 1}", "resolution: 0.1}", ":3: vary.resolution: want a percentage such as 1% or a width in the key's unit: admission.per_slot is a count: want a whole number >= 0 (got 0.1)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bad := writeConfig(t, strings.Replace(strings.Replace(seedSolve, "PEAK", "100", 1), tt.from, tt.to, 1))
			code, stdout, stderr := stormsim("solve", "-c", bad)
			if code != ExitUsage || stdout != "" || stderr != bad+tt.want+"\n" {
				t.Errorf("exit %d, stdout %q, stderr\n %q\nwant\n %q", code, stdout, stderr, bad+tt.want+"\n")
			}
		})
	}
	if code, _, stderr := stormsim("solve", "-c", found, "--resume"); code != ExitUsage || !strings.Contains(stderr, "give -o DIR") {
		t.Errorf("--resume without -o: exit %d, %q", code, stderr)
	}
}

// TestSolveShardsMerge solves an across key in two shards and merges
// them with stormsim merge into what one run writes, report.html among
// the files: the same page.
func TestSolveShardsMerge(t *testing.T) {
	cfg := writeConfig(t, strings.Replace(seedSolve, "PEAK", "100", 1)+"across: {key: clients, values: [500, 1000, 2000]}\n")
	whole := filepath.Join(t.TempDir(), "whole")
	if code, _, stderr := stormsim("solve", "-c", cfg, "-o", whole, "--progress", "none"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var shards []string
	for _, s := range []string{"0/2", "1/2"} {
		dir := filepath.Join(t.TempDir(), "shard")
		code, stdout, stderr := stormsim("solve", "-c", cfg, "-o", dir, "--shard", s, "--progress", "none")
		if code != ExitOK || !strings.Contains(stdout, "join the shards with stormsim merge") {
			t.Fatalf("shard %s: exit %d: %s%s", s, code, stdout, stderr)
		}
		shards = append(shards, dir)
	}
	merged := filepath.Join(t.TempDir(), "merged")
	code, stdout, stderr := stormsim(append([]string{"merge", "-o", merged}, shards...)...)
	if code != ExitOK || !strings.Contains(stdout, "least admission.per_slot") {
		t.Fatalf("merge: exit %d: %s%s", code, stdout, stderr)
	}
	got, want := readDir(t, merged), readDir(t, whole)
	if !bytes.Contains(want["report.html"], []byte(`<body class="solve">`)) || !bytes.Contains(got["report.html"], []byte(`<body class="solve">`)) {
		t.Error("solve -o or the merge of its shards wrote no solve report.html")
	}
	if len(got) != len(want) {
		t.Errorf("%d files merged, %d in one run", len(got), len(want))
	}
	os.Remove(filepath.Join(whole, "report.html"))
	if code, stdout, stderr := stormsim("report", whole); code != ExitOK || !strings.HasPrefix(stdout, "wrote "+filepath.Join(whole, "report.html")) {
		t.Errorf("stormsim report of a solve: exit %d: %s%s", code, stdout, stderr)
	} else if again, _ := os.ReadFile(filepath.Join(whole, "report.html")); !bytes.Equal(again, want["report.html"]) {
		t.Error("stormsim report wrote another page than solve -o")
	}
	for name, data := range want {
		if !bytes.Equal(got[name], data) {
			t.Errorf("%s differs between the merged shards and one run", name)
		}
	}
	sweepDir := filepath.Join(t.TempDir(), "sweep")
	os.MkdirAll(sweepDir, 0o755)
	if code, _, stderr := stormsim("merge", "-o", t.TempDir(), shards[0], sweepDir); code != ExitUsage || !strings.Contains(stderr, "hold a solve") {
		t.Errorf("a solve shard beside another directory: exit %d, %q", code, stderr)
	}
}
