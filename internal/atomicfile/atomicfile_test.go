package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	if err := Write(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	st, _ := os.Stat(path)
	if string(got) != "new" || st.Mode().Perm() != 0o644 {
		t.Errorf("content %q mode %v", got, st.Mode())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d entries, want 1 (no temporary file)", len(entries))
	}
}

type failingWriter struct{}

func (failingWriter) WriteTo(w io.Writer) (int64, error) {
	w.Write([]byte("half"))
	return 4, errors.New("disk on fire")
}

func TestWriteFromFailureLeavesTheOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	Write(path, []byte("old"))
	if err := WriteFrom(path, failingWriter{}); err == nil {
		t.Fatal("no error")
	}
	got, _ := os.ReadFile(path)
	if entries, _ := os.ReadDir(dir); string(got) != "old" || len(entries) != 1 {
		t.Errorf("content %q, %d entries; want the old file alone", got, len(entries))
	}
}
