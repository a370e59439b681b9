package report

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"stormsim/calibrate/compare"
	"stormsim/calibrate/fit"
	"stormsim/calibrate/measured"
	"stormsim/config"
	"stormsim/internal/atomicfile"
	"stormsim/models"
	"stormsim/results"
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

// TestSectionsInTheConfigsKeys: calibration.json writes the fitted model
// (fit.model, fit.runs[].model) and each simulation's sections in the
// config's keys and units, as calibrated.yaml beside it does, not in Go's
// field names with durations in nanoseconds; Read gets them back as they
// were.
func TestSectionsInTheConfigsKeys(t *testing.T) {
	s, err := config.Parse("model.yaml", []byte(`
clients: 10
admission: {kind: unlimited}
policies: [{name: fixed, base: 100ms}]
capacity: {admit_per_s: 691.6, decide: arrival, decide_per_s: 3659, goaway_per_s: 1320}
network:
  rtt: {dist: fixed, value: 0s}
  out: {dist: lognormal, median: 86.27ms, sigma: 0.7677, cap: 242.8ms}
  drain_first_out: {dist: empirical, points: [53.17ms, 69.18ms, 286.4ms]}
  shared_every: 2ms
detection: {kind: reset, delay: {dist: fixed, value: 114.3ms}}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := fit.FromScenario(s)
	if err != nil {
		t.Fatal(err)
	}
	rep := &Report{SchemaVersion: SchemaVersion, Name: "x", CalibratedConfig: config.Echo(s),
		Fit:         fit.Fit{Model: m, Runs: []fit.RunFit{{Run: 1, Model: &m}}},
		Simulations: []Simulation{{Role: Calibrated, Sections: []Sections{SectionsOf(s), {Capacity: s.Capacity}}}}}
	path := filepath.Join(t.TempDir(), "calibration.json")
	if err := rep.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, want := range []string{`"admit_per_s": 691.6`, `"median": "86.27ms"`, `"shared_every": "2ms"`,
		`"points": [`, `"53.17ms"`, `"drain_first_out": {`, `"network": null`} {
		if !strings.Contains(text, want) {
			t.Errorf("calibration.json lacks %s", want)
		}
	}
	for _, goName := range []string{"AdmitPerS", "OutLeg", "Median", "Points", "86270000"} {
		if strings.Contains(text, goName) {
			t.Errorf("calibration.json holds %s, a Go field name or a duration in nanoseconds", goName)
		}
	}
	back, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	// Read back, each section echoes as the one written: the same
	// values (a distribution's cached figures are filled in when first
	// drawn from).
	same := func(a, b any) bool { return string(config.EchoValue(a)) == string(config.EchoValue(b)) }
	if !same(back.Fit.Model, m) || !same(*back.Fit.Runs[0].Model, m) || back.Fit.Model.Network.OutLeg.Median != 86270*time.Microsecond {
		t.Errorf("fit.model read back as\n%+v\nwant\n%+v", back.Fit.Model, m)
	}
	if got := back.Simulations[0].Sections; !same(got[0], SectionsOf(s)) || got[1].Network != nil || got[1].Detection != nil || got[1].Capacity.AdmitPerS != 691.6 {
		t.Errorf("simulations[0].sections read back as %+v", got)
	}
	// A fit that failed part way is written as far as it got, and read
	// back all the same (--resume goes on from it).
	rep.Fit.Model = fit.Model{Capacity: models.CapacitySpec{AdmitPerS: 5}}
	if err := rep.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	if back, err := Read(path); err != nil || back.Fit.Model.Capacity.AdmitPerS != 5 {
		t.Errorf("a partial fit read back as %+v: %v", back, err)
	}
}

// TestReadsAVersion3ReportForResume: --resume goes on from a calibration
// an earlier stormsim wrote (schema 3, its sections in Go's field names):
// Read takes its runs and leaves out the fit and the simulations, which a
// resumed calibration recomputes. Any other version is refused by name.
func TestReadsAVersion3ReportForResume(t *testing.T) {
	dir := t.TempDir()
	v3 := filepath.Join(dir, "v3.json")
	old := `{"schema_version": 3, "name": "seed-lab-1000", "config_hash": "abc", "policy": "full",
"real": [{"run": 1}],
"fit": {"model": {"capacity": {"AdmitPerS": 691.6}, "network": {"OutLeg": {"Dist": "lognormal", "Median": 86271000}}, "detection": {"Kind": "reset"}}},
"simulations": [{"label": "calibrated", "sections": [{"capacity": {"AdmitPerS": 691.6}, "network": null, "detection": null}]}]}`
	if err := os.WriteFile(v3, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Read(v3)
	if err != nil {
		t.Fatalf("a version 3 report: %v", err)
	}
	if r.ConfigHash != "abc" || r.Policy != "full" || len(r.Real) != 1 || r.Real[0].Run != 1 || len(r.Simulations) != 0 || r.Fit.Model.Capacity.AdmitPerS != 0 {
		t.Errorf("read as %+v", r)
	}
	v2 := filepath.Join(dir, "v2.json")
	if err := os.WriteFile(v2, []byte(`{"schema_version": 2}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(v2); err == nil || !strings.Contains(err.Error(), "schema_version 2, this stormsim reads 4 (and 3 for --resume)") {
		t.Errorf("a version 2 report: %v", err)
	}
}

// TestSummaryOnsetIsTheMeasuredOne: the summary, the fit table and the
// runs table say when the first attempts began to be decided as the fit
// measured it (fit.FirstWave: the 2nd percentile of their decisions after
// the kill), also when the model spreads the notices and the first
// attempts' way over measured points, where no fixed part adds up to it.
// A fit of 2026-12-07 (seed-lab-1000) printed "0s" for a measured 92.6 ms.
func TestSummaryOnsetIsTheMeasuredOne(t *testing.T) {
	points := models.Distribution{Dist: models.DistEmpirical, Points: []time.Duration{9 * time.Millisecond, 150 * time.Millisecond}}
	model := fit.Model{Detection: models.DetectionSpec{Kind: models.DetectionReset, Delay: points}, Network: models.NetworkSpec{FirstOutLeg: &points}}
	r := &Report{Name: "onset", Clients: 1000, Policy: "full",
		Real: []*measured.Run{{Run: 1, Seed: 1}, {Run: 2, Seed: 2}},
		Fit: fit.Fit{Model: model, Runs: []fit.RunFit{{Run: 1, Model: &model}, {Run: 2, Model: &model}},
			FirstWave: fit.FirstWave{OnsetMs: 92.573, Runs: []fit.WaveRun{{Run: 1, OnsetMs: 158.04, SpanMs: 438.2}, {Run: 2, OnsetMs: 84.44, SpanMs: 476.1}}}}}
	var b strings.Builder
	if err := r.WriteSummary(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "first attempts decided from 92.6ms after the kill") {
		t.Errorf("summary does not give the measured onset:\n%s", b.String())
	}
	var fitted, runs results.Table
	for _, tb := range r.Tables() {
		switch {
		case strings.HasPrefix(tb.Title, "fit on"):
			fitted = tb
		case strings.HasPrefix(tb.Title, "runs"):
			runs = tb
		}
	}
	var firstWave string
	for _, row := range fitted.Rows {
		if row[0] == "first wave" {
			firstWave = row[1]
		}
	}
	if !strings.HasPrefix(firstWave, "first attempts decided from 92.6ms after the kill") {
		t.Errorf("fit table's first wave: %q", firstWave)
	}
	col := slices.Index(runs.Header, "onset")
	if col < 0 || len(runs.Rows) < 2 || runs.Rows[0][col] != "158ms" || runs.Rows[1][col] != "84.4ms" {
		t.Errorf("runs table's onsets: header %v, rows %v", runs.Header, runs.Rows)
	}
}

// TestFitTableSaysHowContentionIsModelled: a fit that measured its claims
// slowing beside the survivor's decisions (fit.Contention) says by how
// much and that the model takes it, or that it does not when the slope
// is not positive; one that could not measure it says nothing of it.
func TestFitTableSaysHowContentionIsModelled(t *testing.T) {
	row := func(c *fit.Contention) string {
		r := &Report{Real: []*measured.Run{{Run: 1}}, Fit: fit.Fit{Claims: fit.Claims{AdmitPerS: 1000, GapMs: 1, Gaps: 40, Contention: c}}}
		for _, tb := range r.Tables() {
			if !strings.HasPrefix(tb.Title, "fit on") {
				continue
			}
			for _, row := range tb.Rows {
				if strings.HasPrefix(row[1], "claims beside decisions") {
					return row[1]
				}
			}
		}
		return ""
	}
	got := row(&fit.Contention{BaseMs: 0.53, PerDecisionMs: 0.082, Windows: 40, MeanDecisions: 2.5})
	for _, want := range []string{"0.53ms + 0.082ms for each handshake decided beside it", "40 busy windows of 25 ms, 2.5 decisions per claim", "modelled: capacity.admit_per_s = 1 / the base"} {
		if !strings.Contains(got, want) {
			t.Errorf("fit table's contention row %q lacks %q", got, want)
		}
	}
	if got := row(&fit.Contention{BaseMs: 1.1, PerDecisionMs: -0.01, Windows: 40, MeanDecisions: 2.5}); !strings.Contains(got, "not modelled") {
		t.Errorf("a negative slope, yet the fit table says %q", got)
	}
	if got := row(nil); got != "" {
		t.Errorf("no contention measured, yet the fit table says %q", got)
	}
}
