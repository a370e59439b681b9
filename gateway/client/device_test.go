package client

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFileCounterSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "attempt")
	c, err := OpenFileCounter(path)
	if err != nil {
		t.Fatal(err)
	}
	for want := int64(1); want <= 3; want++ {
		if got, err := c.Next(); got != want || err != nil {
			t.Fatalf("Next = %d, %v; want %d", got, err, want)
		}
	}
	again, err := OpenFileCounter(path)
	if err != nil {
		t.Fatal(err)
	}
	if again.Value() != 3 {
		t.Errorf("reopened counter = %d, want 3", again.Value())
	}
	if got, _ := again.Next(); got != 4 {
		t.Errorf("Next after reopen = %d, want 4", got)
	}
	if b, _ := os.ReadFile(path); string(b) != "4\n" {
		t.Errorf("file holds %q, want \"4\\n\"", b)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("directory holds %d files, want only the counter (no temporaries left)", len(entries))
	}
}

func TestFileCounterRejectsGarbage(t *testing.T) {
	for _, content := range []string{"x\n", "-3\n", "1 2\n"} {
		path := filepath.Join(t.TempDir(), "attempt")
		os.WriteFile(path, []byte(content), 0o600)
		if _, err := OpenFileCounter(path); err == nil {
			t.Errorf("OpenFileCounter accepted %q", content)
		}
	}
}

func TestMemoryCounterStartsAfterStart(t *testing.T) {
	c := NewMemoryCounter(41)
	if got, _ := c.Next(); got != 42 || c.Value() != 42 {
		t.Errorf("Next = %d, Value = %d; want 42, 42", got, c.Value())
	}
	var zero MemoryCounter
	if got, _ := zero.Next(); got != 1 {
		t.Errorf("zero counter's first Next = %d, want 1", got)
	}
}
