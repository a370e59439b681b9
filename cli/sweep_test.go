package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// smallSweep is a 2 x 3 sweep of a 30-client storm with 2 replications.
const smallSweep = `name: small
replications: 2
scenario:
  name: small
  seed: 2
  clients: 30
  admission: {kind: slots, slot: 10ms, per_slot: 3}
  policies:
    - {name: full, base: 50ms, cap: 800ms}
axes:
  policies[0].base: [25ms, 100ms]
  admission.per_slot: {from: 1, to: 9, steps: 3}
metrics: [convergence_ms]
`

func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		out[e.Name()], _ = os.ReadFile(filepath.Join(dir, e.Name()))
	}
	return out
}

func TestSweepCommandShardsAndMerge(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "sweep.yaml")
	os.WriteFile(cfg, []byte(smallSweep), 0o644)
	whole := filepath.Join(t.TempDir(), "whole")
	code, stdout, stderr := stormsim("sweep", "-c", cfg, "-o", whole, "--progress", "none", "--workers", "1")
	if code != ExitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if want := "small: 6 points, 2 replications per policy: wrote sweep.json, sweep.ndjson, sweep.csv, report.html in " + whole + ", and 2 chart files\n"; stdout != want {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
	want := readDir(t, whole)
	var names []string
	for n := range want {
		names = append(names, n)
	}
	slices.Sort(names)
	if strings.Join(names, " ") != "convergence_ms.png convergence_ms.svg report.html sweep.csv sweep.json sweep.ndjson" {
		t.Errorf("files %v", names)
	}
	var shards []string
	for _, s := range []string{"0/3", "1/3", "2/3"} {
		d := filepath.Join(t.TempDir(), "shard")
		code, _, stderr := stormsim("sweep", "-c", cfg, "-o", d, "--shard", s, "--progress", "plain")
		lines := strings.Split(stderr, "\n")
		if code != ExitOK || len(lines) != 3 || !strings.HasPrefix(lines[0], "small: 4 storms (2 replications of 1 policy a point) of up to 30 clients: at least <1s of computing on ") ||
			!strings.HasPrefix(lines[1], "sweep: 2/2 points (shard of 6), 4/4 storms, ") {
			t.Fatalf("shard %s: exit %d, stderr %q", s, code, stderr)
		}
		shards = append(shards, d)
	}
	merged := filepath.Join(t.TempDir(), "merged")
	code, _, stderr = stormsim(append(append([]string{"merge"}, shards...), "-o", merged)...)
	if code != ExitOK {
		t.Fatalf("merge: exit %d %s", code, stderr)
	}
	got := readDir(t, merged) // report.html among them: the same page
	if len(got) != len(want) {
		t.Fatalf("merged %d files, unsharded %d", len(got), len(want))
	}
	for n, data := range want {
		if !bytes.Equal(got[n], data) {
			t.Errorf("%s differs between the merged and the unsharded sweep", n)
		}
	}
	// Resuming into the directory of another sweep is bad input.
	other := strings.Replace(smallSweep, "seed: 2", "seed: 3", 1)
	os.WriteFile(cfg, []byte(other), 0o644)
	code, _, stderr = stormsim("sweep", "-c", cfg, "-o", whole, "--resume", "--progress", "none")
	if code != ExitUsage || !strings.Contains(stderr, "was written by another sweep") {
		t.Errorf("foreign resume: exit %d, stderr %q", code, stderr)
	}
}

func TestSweepUsageErrors(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "sweep.yaml")
	os.WriteFile(cfg, []byte(smallSweep), 0o644)
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte(strings.Replace(smallSweep, "[convergence_ms]", "[convergense_ms]", 1)), 0o644)
	noModel := filepath.Join(t.TempDir(), "nomodel.yaml")
	os.WriteFile(noModel, []byte(strings.Replace(smallSweep, "[convergence_ms]", "[database.peak_rows_per_s]", 1)), 0o644)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no config", []string{"sweep", "-o", "x"}, "stormsim sweep: -c SWEEP.yaml and -o DIR are required"},
		{"bad shard", []string{"sweep", "-c", cfg, "-o", "x", "--shard", "3/3"}, `stormsim sweep: --shard must be I/N with 0 <= I < N, e.g. 0/4, or auto in a batch array (got "3/3")`},
		{"bad progress", []string{"sweep", "-c", cfg, "-o", "x", "--progress", "loud"}, `stormsim sweep: --progress must be auto, plain or none (got "loud")`},
		{"misspelt metric", []string{"sweep", "-c", bad, "-o", "x"}, bad + ":13: metrics: convergense_ms: unknown metric; did you mean convergence_ms?"},
		{"metric whose model is off", []string{"sweep", "-c", noModel, "-o", filepath.Join(t.TempDir(), "x")},
			noModel + ":13: metrics: database.peak_rows_per_s: no point of the sweep has data for it: it comes from the database: model, which is off\n"},
		{"merge without dirs", []string{"merge", "-o", "x"}, "stormsim merge: give the shard directories and -o OUT"},
		{"merge of nothing", []string{"merge", t.TempDir(), "-o", "x"}, "merge: open "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := stormsim(tt.args...)
			if code != ExitUsage || stdout != "" || !strings.HasPrefix(stderr, tt.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2, stderr %q", code, stdout, stderr, tt.want)
			}
		})
	}
}
