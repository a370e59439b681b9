package htmlreport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCalibrationPageOfTheSavedCalibration: the saved seed-lab
// calibration (testdata/calibration, as stormsim calibrate writes it)
// makes a page without Chromium too, its fit section showing the fitted
// claim rate (capacity.admit_per_s 41.7 in the file's fit.model); a
// document of another schema_version is refused by its version, before
// its sections are read.
func TestCalibrationPageOfTheSavedCalibration(t *testing.T) {
	dir := filepath.Join("testdata", "calibration")
	p, err := calibrationFromDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var fit *Section
	for i := range p.Sections {
		if p.Sections[i].ID == "fit" {
			fit = &p.Sections[i]
		}
	}
	if fit == nil {
		t.Fatalf("no fit section in %d sections", len(p.Sections))
	}
	var cells []string
	for _, tb := range fit.Tables {
		for _, row := range tb.Rows {
			for _, c := range row {
				cells = append(cells, c.Text)
			}
		}
	}
	if !strings.Contains(strings.Join(cells, "|"), "41.7") {
		t.Errorf("the fit section does not show the claim rate 41.7/s: %q", cells)
	}
	data, err := os.ReadFile(filepath.Join(dir, CalibrationFile))
	if err != nil {
		t.Fatal(err)
	}
	old := strings.Replace(string(data), `"schema_version": 4`, `"schema_version": 3`, 1)
	old = strings.Replace(old, `"admit_per_s"`, `"AdmitPerS"`, 1)
	if _, err := CalibrationPage([]byte(old), nil); err == nil || err.Error() != "schema_version 3, this stormsim reads 4" {
		t.Errorf("a version 3 document: %v", err)
	}
}
