package calibrate

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOutputFilesAreReadableByAll: calibration.json and calibrated.yaml
// are written 0644, as stormsim run writes result.json, whatever the
// temporary file they are renamed from was created with.
func TestOutputFilesAreReadableByAll(t *testing.T) {
	dir := t.TempDir()
	rep := &Report{Name: "x"}
	report, yaml := filepath.Join(dir, ReportFile), filepath.Join(dir, CalibratedFile)
	if err := writeReport(report, rep); err != nil {
		t.Fatal(err)
	}
	if err := writeAtomic(yaml, []byte("name: x\n")); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{report, yaml} {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Mode().Perm(); got != 0o644 {
			t.Errorf("%s: mode %v, want -rw-r--r--", filepath.Base(path), got)
		}
	}
}
