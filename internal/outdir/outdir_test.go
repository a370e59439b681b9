package outdir

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"stormsim/internal/outdir/outdirtest"
)

func TestPrepareCreatesAndAbandonRemovesOnlyWhatItMade(t *testing.T) {
	base := t.TempDir()
	path := filepath.Join(base, "a", "b", "c")
	d, err := Prepare(path, Claim{})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		t.Fatalf("not created: %v", err)
	}
	if entries, _ := os.ReadDir(path); len(entries) != 0 {
		t.Errorf("the write probe was left behind: %v", entries)
	}
	d.Abandon()
	if _, err := os.Stat(filepath.Join(base, "a")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a/b/c made by Prepare is still there: %v", err)
	}
	if _, err := os.Stat(base); err != nil {
		t.Errorf("the existing parent was removed: %v", err)
	}
}

func TestAbandonKeepsADirectoryWithFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out")
	d, err := Prepare(path, Claim{})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(path, "result.json"), []byte("{}"), 0o644)
	d.Abandon()
	if _, err := os.Stat(filepath.Join(path, "result.json")); err != nil {
		t.Errorf("a directory with a file was removed: %v", err)
	}
}

func TestPrepareRefusesWhatItCannotUse(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o644)
	if _, err := Prepare(filepath.Join(file, "sub"), Claim{}); err == nil || err.Error() != "-o "+filepath.Join(file, "sub")+": "+file+" is a file, not a directory" {
		t.Errorf("under a file: %v", err)
	}
	if _, err := Prepare(file, Claim{}); err == nil {
		t.Error("a file as the directory: no error")
	}
	ro := outdirtest.UnwritableDir(t)
	if _, err := Prepare(ro, Claim{}); err == nil || err.Error() != "-o "+ro+": cannot write there: permission denied" {
		t.Errorf("read-only: %v", err)
	}
	if _, err := Prepare(filepath.Join(ro, "new"), Claim{}); err == nil {
		t.Error("a new directory under a read-only one: no error")
	}
}

func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"result.json", "attempts.png", "reclaim.png", "reclaim.svg", "notes.txt"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	os.Mkdir(filepath.Join(dir, "database.png"), 0o755) // not a regular file: kept
	d := &Dir{Path: dir}
	known := []string{"result.json", "attempts.png", "reclaim.png", "reclaim.svg", "database.png", "connected.png"}
	if err := d.RemoveStale(known, []string{filepath.Join(dir, "result.json"), "attempts.png"}); err != nil {
		t.Fatal(err)
	}
	var left []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if want := []string{"attempts.png", "database.png", "notes.txt", "result.json"}; !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
}

// TestPrepareRefusesWhatItDoesNotOwn pins when an existing directory is
// refused: files the command does not write, another run's outputs, its
// own files without the marker that names the run, or a marker stormsim
// did not write; a rerun of the same config, an empty directory and what
// stormsim leaves when stopped mid-write are fine, and --overwrite
// allows everything.
func TestPrepareRefusesWhatItDoesNotOwn(t *testing.T) {
	claim := Claim{Command: "run", Owns: func(n string) bool { return n == "result.json" || n == "attempts.png" || n == "charts" },
		Marker: "result.json", Key: "config_hash", ID: "sha256:aaaaaaaaaaaaaaaaaaaa"}
	mine := `{"schema_version": 1, "tool": "stormsim 0.1.0", "config_hash": "sha256:aaaaaaaaaaaaaaaaaaaa", "results": []}`
	other := `{"schema_version": 1, "tool": "stormsim 0.1.0", "config_hash": "sha256:bbbbbbbbbbbbbbbbbbbb", "results": []}`
	for _, tt := range []struct {
		name  string
		files map[string]string
		want  string // "" for allowed; else the problem
	}{
		{"empty", nil, ""},
		{"a rerun of the same config", map[string]string{"result.json": mine, "attempts.png": ""}, ""},
		{"a rerun, with a charts directory and a temporary file left", map[string]string{"result.json": mine, "charts/": "", ".result.json.123.tmp": ""}, ""},
		{"another run's result", map[string]string{"result.json": other, "attempts.png": ""},
			"holds what another stormsim run wrote (its result.json has config_hash sha256:bbbbbbbbbbbb, this one sha256:aaaaaaaaaaaa): give another -o DIR, or --overwrite to replace them"},
		{"a result.json stormsim did not write", map[string]string{"result.json": `{"config_hash": "sha256:aaaaaaaaaaaaaaaaaaaa"}`},
			"its result.json was not written by stormsim run: give another -o DIR, or --overwrite to replace them"},
		{"not JSON at all", map[string]string{"result.json": "my notes"},
			"its result.json was not written by stormsim run: give another -o DIR, or --overwrite to replace them"},
		{"charts without a result", map[string]string{"attempts.png": ""},
			"holds attempts.png but no result.json: not the outputs of a stormsim run; give another -o DIR, or --overwrite to replace them"},
		{"another run's result beside files this run does not write", map[string]string{"result.json": other, "attempts.png": "", "latency.png": ""},
			"holds what another stormsim run wrote (its result.json has config_hash sha256:bbbbbbbbbbbb, this one sha256:aaaaaaaaaaaa): give another -o DIR, or --overwrite to replace them"},
		{"files the command does not write", map[string]string{"result.json": mine, "notes.txt": "", "sweep.json": "", "a": "", "b": ""},
			"holds files stormsim run does not write (a, b, notes.txt and 1 more): give another -o DIR, or --overwrite to write beside them (they stay)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range tt.files {
				if d, ok := strings.CutSuffix(name, "/"); ok {
					os.Mkdir(filepath.Join(dir, d), 0o755)
					continue
				}
				os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644)
			}
			_, err := Prepare(dir, claim)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want != "" && (err == nil || err.Error() != "-o "+dir+": "+tt.want):
				t.Errorf("got %v\nwant -o %s: %s", err, dir, tt.want)
			}
			over := claim
			over.Overwrite = true
			if _, err := Prepare(dir, over); err != nil {
				t.Errorf("--overwrite refused: %v", err)
			}
		})
	}
}
