package sweep

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"stormsim/config"
)

// maxFuzzPoints bounds the grids the fuzzer checks point by point, so
// that one input cannot take minutes.
const maxFuzzPoints = 200

// FuzzSweepFile feeds arbitrary sweep files to ParseSweep and the plan:
// never a panic; every error one line and a *config.Error; an accepted
// sweep has a stable hash, points that each resolve, and a manifest that
// reads back.
func FuzzSweepFile(f *testing.F) {
	shipped, _ := filepath.Glob("../configs/sweep-*.yaml")
	for _, file := range shipped {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:len(data)/2])
		f.Add([]byte(strings.Replace(string(data), "steps: ", "steps: 1", 1)))
	}
	for _, seed := range []string{
		small,
		strings.Replace(small, "[2, 4, 8]", "{from: 1, to: 1e400, steps: 3, scale: log}", 1),
		strings.Replace(small, "[2, 4, 8]", "{from: 0s, to: 1h, steps: 2}", 1),
		"scenario: {clients: 1}\naxes: {clients: [1, 2]}\nmetrics: [p99(attempts)]\n",
		"name: lab\nseed: 1\nclients: 60\n",
		"scenario: &s {clients: 1}\naxes: {x: [*s]}\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sf, err := config.ParseSweep("fuzz/s.yaml", data)
		if err == nil {
			var p *Plan
			if p, err = open(sf, 0); err == nil && p.Size <= maxFuzzPoints {
				if err = p.Check(nil); err == nil {
					checkPlan(t, p)
				}
			}
		}
		if err != nil {
			if strings.ContainsAny(err.Error(), "\r\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			var ce *config.Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %q is %T, want a *config.Error", err, err)
			}
		}
	})
}

func checkPlan(t *testing.T, p *Plan) {
	for i := range p.Size {
		pt, err := p.Point(i)
		if err != nil || pt.Index != i || pt.Scenario == nil {
			t.Fatalf("point %d of a checked plan: %v", i, err)
		}
	}
	hash := p.Hash
	p.checked = false
	if err := p.Check(nil); err != nil || p.Hash != hash {
		t.Fatalf("checked twice: %v, hash %s then %s", err, hash, p.Hash)
	}
	data, err := p.Manifest().JSON()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, ManifestFile), data, 0o644)
	if _, _, err := readManifest(dir); err != nil {
		t.Fatalf("the manifest does not read back: %v", err)
	}
}

// FuzzSweepDirectory feeds arbitrary sweep.json and sweep.ndjson files to
// merge and finalize, as a user's directories may hold anything: never a
// panic, every error on one line.
func FuzzSweepDirectory(f *testing.F) {
	p := planOf(f, small)
	good := f.TempDir()
	if _, err := p.Run(Options{Dir: good, NoCharts: true}); err != nil {
		f.Fatal(err)
	}
	manifest, _ := os.ReadFile(filepath.Join(good, ManifestFile))
	lines, _ := os.ReadFile(filepath.Join(good, PointsFile))
	f.Add(manifest, lines)
	f.Add(manifest, lines[:len(lines)/2])
	f.Add(manifest, []byte(strings.Replace(string(lines), `"runs":[[`, `"runs":[[1e999,`, 1)))
	f.Add(manifest, []byte(strings.Replace(string(lines), `"index":1`, `"index":-1`, 1)))
	f.Add([]byte(strings.Replace(string(manifest), `"points": 6`, `"points": 60000000000`, 1)), lines)
	f.Add([]byte(`{"schema_version": 2}`), []byte("{}\n"))
	f.Fuzz(func(t *testing.T, manifest, lines []byte) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, ManifestFile), manifest, 0o644)
		os.WriteFile(filepath.Join(dir, PointsFile), lines, 0o644)
		for _, run := range []func() error{
			func() error { _, err := Finalize(dir, false); return err },
			func() error { _, err := Merge(t.TempDir(), []string{dir}, false); return err },
		} {
			if err := run(); err != nil && strings.ContainsAny(err.Error(), "\r\n") {
				t.Fatalf("error spans lines: %q", err)
			}
		}
	})
}

// planOf is plan for a fuzz target's setup.
func planOf(tb testing.TB, yaml string) *Plan {
	tb.Helper()
	f, err := config.ParseSweep("s.yaml", []byte(yaml))
	if err != nil {
		tb.Fatal(err)
	}
	p, err := New(f, 0)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}
