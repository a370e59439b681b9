package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"stormsim/calibrate/compare"
	"stormsim/calibrate/measured"
	"stormsim/config"
	"stormsim/internal/atomicfile"
)

// TestOutputFilesAreReadableByAll: calibration.json and calibrated.yaml
// are written 0644, as stormsim run writes result.json, whatever the
// temporary file they are renamed from was created with.
func TestOutputFilesAreReadableByAll(t *testing.T) {
	dir := t.TempDir()
	s, err := config.Load("../../configs/seed-lab.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	rep := &Report{Name: "x", CalibratedConfig: config.Echo(s)}
	report, yaml := filepath.Join(dir, "calibration.json"), filepath.Join(dir, "calibrated.yaml")
	if err := rep.WriteJSON(report); err != nil {
		t.Fatal(err)
	}
	data, err := ScenarioYAML("x", "1 real run", rep.CalibratedConfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.Write(yaml, data); err != nil {
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

// TestFailures: the verdict names each reason not to pass: a failed lab
// check, a failed agreement of a checked model (the pooled and the
// uncalibrated ones' do not count), a compared run that other work
// disturbed.
func TestFailures(t *testing.T) {
	quiet := &measured.Run{Run: 1, Load: measured.Load{Measured: true}}
	busy := &measured.Run{Run: 2, Load: measured.Load{Measured: true, OtherDuringCores: 0.9, Disturbed: true}}
	base := func() *Report {
		return &Report{Real: []*measured.Run{quiet}, Checks: []measured.Check{{Run: 1, Name: "baseline routes", Pass: true}},
			Simulations: []Simulation{{Role: Predicted}, {Role: Calibrated}, {Role: Pooled}, {Role: Uncalibrated}},
			Agreement: []compare.Agreement{{Model: "predicted", Name: "attempts", Pass: true}, {Model: "calibrated", Name: "attempts", Pass: true},
				{Model: "pooled", Name: "attempts", Pass: false}, {Model: "uncalibrated", Name: "attempts", Pass: false}}}
	}
	if f := base().Failures(); len(f) != 0 {
		t.Errorf("passing report: failures %v", f)
	}
	cases := []struct {
		name   string
		break_ func(r *Report)
		want   string
	}{
		{"lab check", func(r *Report) { r.Checks[0].Pass = false }, "lab check"},
		{"predicted", func(r *Report) { r.Agreement[0].Pass = false }, "predicted model"},
		{"calibrated", func(r *Report) { r.Agreement[1].Pass = false }, "calibrated model"},
		{"disturbed run kept", func(r *Report) { r.Real = append(r.Real, busy) }, "disturbed"},
	}
	for _, c := range cases {
		r := base()
		c.break_(r)
		if f := r.Failures(); len(f) != 1 || !strings.Contains(f[0], c.want) {
			t.Errorf("%s: failures %v, want one about %q", c.name, f, c.want)
		}
	}
	r := base()
	r.Replaced = []*measured.Run{busy}
	if f := r.Failures(); len(f) != 0 {
		t.Errorf("a disturbed run replaced, not compared: failures %v", f)
	}
}
