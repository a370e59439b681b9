package outdir

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"stormsim/internal/outdir/outdirtest"
)

func TestPrepareCreatesAndAbandonRemovesOnlyWhatItMade(t *testing.T) {
	base := t.TempDir()
	path := filepath.Join(base, "a", "b", "c")
	d, err := Prepare(path)
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
	d, err := Prepare(path)
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
	if _, err := Prepare(filepath.Join(file, "sub")); err == nil || err.Error() != "-o "+filepath.Join(file, "sub")+": "+file+" is a file, not a directory" {
		t.Errorf("under a file: %v", err)
	}
	if _, err := Prepare(file); err == nil {
		t.Error("a file as the directory: no error")
	}
	ro := outdirtest.UnwritableDir(t)
	if _, err := Prepare(ro); err == nil || err.Error() != "-o "+ro+": cannot write there: permission denied" {
		t.Errorf("read-only: %v", err)
	}
	if _, err := Prepare(filepath.Join(ro, "new")); err == nil {
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
