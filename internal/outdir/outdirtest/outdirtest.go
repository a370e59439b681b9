// Package outdirtest holds test helpers for output directories.
package outdirtest

import (
	"os"
	"path/filepath"
	"testing"
)

// UnwritableDir returns an existing directory in which the test process
// cannot create files: a read-only temporary directory, or for root (who
// writes anywhere a mode allows) /sys. It skips the test when there is
// none.
func UnwritableDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "read-only")
	if err := os.Mkdir(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, "/sys"} {
		f, err := os.CreateTemp(d, "probe")
		if err != nil {
			return d
		}
		f.Close()
		os.Remove(f.Name())
	}
	t.Skip("no directory here refuses writes")
	return ""
}
