package calibrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"stormsim/calibrate/fit"
	"stormsim/calibrate/measured"
	"stormsim/calibrate/report"
	"stormsim/config"
	"stormsim/gateway/storm"
	"stormsim/internal/outdir"
	"stormsim/models"
	"stormsim/sim"
)

// syntheticRun has every kind of observation the fit needs: backlogged
// claims, first attempts and rejected retries with their decisions,
// admitted ones with their claims.
func syntheticRun(run int, seed uint64) *measured.Run {
	r := &measured.Run{Run: run, Seed: seed}
	for i := range 10 {
		r.Claims = append(r.Claims, measured.Claim{DecidedMs: 10, DoneMs: 10 + float64(i+1)})
		out, gw := 5.0+float64(i), float64(i+1)
		r.Handshakes = append(r.Handshakes, measured.Handshake{Attempt: 1, Status: 101, SentMs: 5 - float64(i), LatencyMs: 30, OutMs: &out, GatewayMs: &gw})
	}
	for i := range 6 {
		first, retry := 3.0+float64(i), 8.0+float64(i)
		r.Handshakes = append(r.Handshakes,
			measured.Handshake{Attempt: 1, Status: 429, SentMs: float64(i), LatencyMs: 10, OutMs: &first},
			measured.Handshake{Attempt: 2, Status: 429, SentMs: 250 + float64(i), LatencyMs: 12 + float64(i), OutMs: &retry, LagMs: 1})
		r.RejectsMs = append(r.RejectsMs, float64(i)+first, 250+float64(i)+retry)
	}
	return r
}

// TestModelsHaveTheirRoles: with --model, the simulations are predicted,
// calibrated, pooled and uncalibrated, in that order and by role;
// predicted has the model files' sections (replication r taking file r
// mod K's), calibrated each run's own fit, pooled exactly what
// calibrated.yaml holds, uncalibrated the config's own.
func TestModelsHaveTheirRoles(t *testing.T) {
	s, err := config.Load("../configs/seed-lab.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	runs := []*measured.Run{syntheticRun(1, 1), syntheticRun(2, 2)}
	runs[1].Claims = append(runs[1].Claims, measured.Claim{DecidedMs: 10, DoneMs: 30}) // a slower claim: run 2's own fit differs
	f, err := fit.Runs(runs)
	if err != nil {
		t.Fatal(err)
	}
	var others []fit.Model
	var files []string
	for i, rate := range []float64{123.4, 234.5} {
		m := f.Model
		m.Capacity.AdmitPerS = rate
		others = append(others, m)
		files = append(files, filepath.Join(t.TempDir(), fmt.Sprintf("run-%d.yaml", i)))
		if err := os.WriteFile(files[i], config.Echo(m.Apply(s)), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	c, err := prepare(s, Options{OutDir: t.TempDir(), Models: files, Replications: 4}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	c.rep.Real, c.rep.Fit = runs, f
	if err := c.simulate(context.Background()); err != nil {
		t.Fatal(err)
	}
	var roles []report.Role
	for _, sm := range c.rep.Simulations {
		roles = append(roles, sm.Role)
	}
	if !slices.Equal(roles, []report.Role{report.Predicted, report.Calibrated, report.Pooled, report.Uncalibrated}) {
		t.Fatalf("roles %v", roles)
	}
	models := func(sm report.Simulation) []fit.Model {
		var out []fit.Model
		for _, sec := range sm.Sections {
			out = append(out, fit.Model{Capacity: *sec.Capacity, Network: *sec.Network, Detection: *sec.Detection})
		}
		return out
	}
	if got := models(c.rep.Simulations[0]); !reflect.DeepEqual(got, others) {
		t.Errorf("predicted %+v, want the model files'", got)
	}
	// What a model simulates is its file as written: the fit to
	// report.YAMLDigits digits, read back.
	fromFile := func(name string) fit.Model {
		s, err := config.Parse(name, c.files[name], nil)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, c.files[name])
		}
		m, err := fit.FromScenario(s)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	near := func(written, fitted fit.Model) bool {
		close := func(a, b float64) bool { return math.Abs(a-b) <= 5e-4*math.Abs(b) }
		return close(written.Capacity.AdmitPerS, fitted.Capacity.AdmitPerS) && close(written.Capacity.DecidePerS, fitted.Capacity.DecidePerS) &&
			close(float64(written.Detection.Delay.Value), float64(fitted.Detection.Delay.Value))
	}
	if got := models(c.rep.Simulations[1]); len(got) != 2 || !reflect.DeepEqual(got[0], fromFile("calibrated-run-1.yaml")) ||
		!reflect.DeepEqual(got[1], fromFile("calibrated-run-2.yaml")) || !near(got[0], *f.Runs[0].Model) || !near(got[1], *f.Runs[1].Model) ||
		reflect.DeepEqual(got[0], got[1]) {
		t.Errorf("calibrated %+v, want each run's own fit as its file holds it", got)
	}
	written := fromFile(CalibratedFile)
	if got := models(c.rep.Simulations[2]); len(got) != 1 || !reflect.DeepEqual(got[0], written) || !near(got[0], f.Model) {
		t.Errorf("pooled %+v, calibrated.yaml %+v, the fit %+v", got, written.Capacity, f.Model.Capacity)
	}
	if u := c.rep.Simulations[3].Sections; len(u) != 1 || u[0].Capacity != nil || u[0].Network != nil {
		t.Errorf("uncalibrated has fitted sections: %+v", u)
	}
}

// TestPredictionTakesTheLabsNoticesHere: a model fitted elsewhere
// predicts these runs with the clients' notices these runs measured (the
// lab's client process at this count: 3i ms at percent i in both) and
// the legs these runs fitted, its capacity as fitted, and the report says
// what it borrowed.
func TestPredictionTakesTheLabsNoticesHere(t *testing.T) {
	s, err := config.Load("../configs/seed-lab.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	runs := []*measured.Run{syntheticRun(1, 1), syntheticRun(2, 2)}
	f, err := fit.Runs(runs) // no notices kept: a fixed delay
	if err != nil {
		t.Fatal(err)
	}
	if f.Model.Detection.Delay.Dist != models.DistFixed {
		t.Fatalf("fitted without notices: %+v", f.Model.Detection.Delay)
	}
	// Fitted elsewhere: legs these runs do not have.
	f.Model.Network.OutLeg = &models.Distribution{Dist: models.DistFixed, Value: 123 * time.Millisecond}
	f.Model.Network.BackLeg = &models.Distribution{Dist: models.DistFixed, Value: 45 * time.Millisecond}
	f.Model.Network.FirstOutLeg = &models.Distribution{Dist: models.DistFixed, Value: 114 * time.Millisecond}
	file := filepath.Join(t.TempDir(), "elsewhere.yaml")
	if err := os.WriteFile(file, config.Echo(f.Model.Apply(s)), 0o644); err != nil {
		t.Fatal(err)
	}
	notices := make([]float64, measured.NoticePoints)
	for i := range notices {
		notices[i] = 3 * float64(i)
	}
	for _, r := range runs {
		r.NoticePointsMs = notices
	}
	c, err := prepare(s, Options{OutDir: t.TempDir(), Models: []string{file}, Replications: 2}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	c.rep.Real = runs
	if c.rep.Fit, err = fit.Runs(runs); err != nil {
		t.Fatal(err)
	}
	if err := c.simulate(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, sm := range c.rep.Simulations[:2] { // predicted, and calibrated on these runs
		d := sm.Sections[0].Detection.Delay
		if d.Dist != models.DistEmpirical || len(d.Points) != measured.NoticePoints || d.Points[100] != 300*time.Millisecond || d.Points[1] != 3*time.Millisecond {
			t.Errorf("%s: detection.delay %+v, want the runs' notices, 3i ms at percent i", sm.Role, d)
		}
	}
	pred := c.rep.Simulations[0]
	if got := *pred.Sections[0].Capacity; got.AdmitPerS != f.Model.Capacity.AdmitPerS || got.DecidePerS != f.Model.Capacity.DecidePerS {
		t.Errorf("predicted capacity %+v, want the model file's", got)
	}
	if !strings.Contains(pred.Borrowed, "detection.delay") {
		t.Errorf("predicted borrows %q, want detection.delay named", pred.Borrowed)
	}
	// Every leg is these runs' too: the retries' and the first attempts'
	// (the onset less the notices), the lab's client process at this count.
	here := c.rep.Fit.Model.Network
	if here.OutLeg.Dist == models.DistFixed || reflect.DeepEqual(here.FirstOutLeg, f.Model.Network.FirstOutLeg) {
		t.Fatalf("these runs' out leg %+v, first out %+v: the test needs them unlike the file's", here.OutLeg, here.FirstOutLeg)
	}
	if got := pred.Sections[0].Network; !reflect.DeepEqual(got.OutLeg, here.OutLeg) || !reflect.DeepEqual(got.BackLeg, here.BackLeg) ||
		!reflect.DeepEqual(got.FirstOutLeg, here.FirstOutLeg) || !reflect.DeepEqual(got.FirstBackLeg, here.FirstBackLeg) ||
		!strings.Contains(pred.Borrowed, "network.out, back, first_out and first_back") {
		t.Errorf("predicted network %+v, borrowed %q; want these runs' legs, named", got, pred.Borrowed)
	}
}

// TestPredictionRestartsAsTheLabDid: a deploy lab predicted from a model
// fitted elsewhere restarts its gateways as its own runs measured (back
// 100, 130 and 160 ms after each drain's last close: the median 130 ms),
// not as the config's 400 ms start-up says, and says so; its capacity is
// the model file's.
func TestPredictionRestartsAsTheLabDid(t *testing.T) {
	lab, err := config.Load("../configs/seed-lab.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := fit.Runs([]*measured.Run{syntheticRun(1, 1), syntheticRun(2, 2)})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "elsewhere.yaml")
	if err := os.WriteFile(file, config.Echo(f.Model.Apply(lab)), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := config.Load("../configs/deploy-lab.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Deploy.Startup != 400*time.Millisecond {
		t.Fatalf("deploy-lab.yaml's start-up %v, want 400 ms (this test's premise)", s.Deploy.Startup)
	}
	c, err := prepare(s, Options{OutDir: t.TempDir(), Models: []string{file}, Replications: 2}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	run := &measured.Run{Run: 1, Seed: 1, Deploy: &storm.DeploySummary{Drains: []storm.DeployDrain{
		{Gateway: 0, StartMs: 0, LastCloseMs: 50, ExitMs: 60, BackMs: 150},
		{Gateway: 1, StartMs: 1150, LastCloseMs: 1200, ExitMs: 1220, BackMs: 1330},
		{Gateway: 2, StartMs: 2330, LastCloseMs: 2400, ExitMs: 2420, BackMs: 2560},
	}}}
	c.rep.Real = []*measured.Run{run}
	c.rep.FitError = "a rolling deploy has no crash storm to fit the gateway on"
	ms, err := c.models()
	if err != nil {
		t.Fatal(err)
	}
	pred := ms[0]
	if pred.role != report.Predicted || len(pred.scenarios) != 1 {
		t.Fatalf("first model %s with %d scenarios, want the predicted one", pred.role, len(pred.scenarios))
	}
	p := pred.scenarios[0]
	if p.Deploy.Startup != 130*time.Millisecond || p.Deploy.Pause != s.Deploy.Pause || s.Deploy.Startup != 400*time.Millisecond {
		t.Errorf("predicted deploy %+v (the config's %+v), want start-up 130 ms, the rest as written", p.Deploy, s.Deploy)
	}
	if p.Capacity.AdmitPerS != f.Model.Capacity.AdmitPerS {
		t.Errorf("predicted capacity %+v, want the model file's", p.Capacity)
	}
	if !strings.Contains(pred.borrowed, "deploy.startup 130ms") || !strings.Contains(pred.borrowed, "the config's 400ms") {
		t.Errorf("predicted borrows %q, want deploy.startup named with both values", pred.borrowed)
	}
}

// TestUnfittedRunsArePredictedWithTheirLab: a skip storm nobody is
// refused in cannot be fitted whole (no rejected retries), but its runs
// measured the lab: the clients' notices, the survivor knowing of a
// departure 0-100 ms after it (i ms at percent i), and a first wave
// decided from 180 ms with the first notice at 40 ms. The predicted model
// takes network.gone and first_out (140 ms) from them, and says so; the
// calibrated one is that prediction with the run's own claim rate (10
// claims 1 ms apart: 1,000/s). It was once the model file as written,
// with none of this run's lab.
func TestUnfittedRunsArePredictedWithTheirLab(t *testing.T) {
	s, err := config.Load("../configs/metastable-lab-skip.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := prepare(s, Options{OutDir: t.TempDir(), Models: []string{labModel}, Replications: 2}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	run := syntheticRun(1, 1)
	run.Handshakes = nil
	run.GonePointsMs = make([]float64, measured.NoticePoints)
	run.NoticePointsMs = make([]float64, measured.NoticePoints)
	for i := range run.GonePointsMs {
		run.GonePointsMs[i], run.NoticePointsMs[i] = float64(i), 40+float64(i)
	}
	c.rep.Real = []*measured.Run{run}
	c.rep.Fit = fit.Fit{FirstWave: fit.FirstWave{Runs: []fit.WaveRun{{Run: 1}}, OnsetMs: 180, NoticeMs: 40}}
	c.rep.FitError = "network: fewer than 3 rejected retries"
	ms, err := c.models()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) < 2 || ms[0].role != report.Predicted || ms[1].role != report.Calibrated {
		t.Fatalf("models %v, want predicted then calibrated", ms)
	}
	for _, m := range ms[:2] {
		for _, p := range m.scenarios {
			g, f := p.Network.GoneLeg, p.Network.FirstOutLeg
			if g == nil || g.Dist != models.DistEmpirical || g.Points[100] != 100*time.Millisecond {
				t.Errorf("%s: network.gone %+v, want the run's, 100 ms at 100 %%", m.role, g)
			}
			if f == nil || f.Dist != models.DistFixed || f.Value != 140*time.Millisecond {
				t.Errorf("%s: network.first_out %+v, want fixed 140 ms", m.role, f)
			}
			if p.Detection.Delay.Dist != models.DistEmpirical || p.Detection.Delay.Points[0] != 40*time.Millisecond {
				t.Errorf("%s: detection.delay %+v, want the run's notices", m.role, p.Detection.Delay)
			}
		}
	}
	if cal := ms[1].scenarios; len(cal) != 1 || cal[0].Capacity.AdmitPerS != 1000 {
		t.Errorf("calibrated: %d scenarios, want one at the run's 1,000 claims/s", len(cal))
	}
	for _, want := range []string{"network.gone (3 of 3 files)", "network.first_out (3 of 3 files)"} {
		if !strings.Contains(ms[0].borrowed, want) {
			t.Errorf("predicted borrows %q, want %q named", ms[0].borrowed, want)
		}
	}
}

// TestARunThatCannotBeFittedAloneIsLeftOut: the calibrated model takes
// each run's own fit; run 2 cannot be fitted alone (no rejected retry), so
// the calibrated model takes run 1's and says so, rather than the pooled
// model standing in under the calibrated label; with no run that can, it
// is an error naming them.
func TestARunThatCannotBeFittedAloneIsLeftOut(t *testing.T) {
	s, err := config.Load("../configs/seed-lab.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	noRetries := func(r *measured.Run) *measured.Run {
		r.Handshakes = slices.DeleteFunc(r.Handshakes, func(h measured.Handshake) bool { return h.Attempt > 1 })
		return r
	}
	simulate := func(runs ...*measured.Run) (*calibration, error) {
		all := append([]*measured.Run{syntheticRun(9, 9)}, runs...) // the pooled fit needs retries from somewhere
		f, err := fit.Runs(all)
		if err != nil {
			t.Fatal(err)
		}
		f.Runs = f.Runs[1:] // only the runs under test were compared
		c, err := prepare(s, Options{OutDir: t.TempDir(), Replications: 4}.withDefaults())
		if err != nil {
			t.Fatal(err)
		}
		c.rep.Real, c.rep.Fit = runs, f
		return c, c.simulate(context.Background())
	}
	c, err := simulate(syntheticRun(1, 1), noRetries(syntheticRun(2, 2)))
	if err != nil {
		t.Fatal(err)
	}
	cal := c.rep.Simulations[0]
	if cal.Role != report.Calibrated || !slices.Equal(cal.Runs, []int{1}) || len(cal.Sections) != 1 ||
		asJSON(t, cal.Sections[0]) == asJSON(t, c.rep.Simulations[1].Sections[0]) {
		t.Errorf("calibrated from runs %v with %d sets (the pooled one's: %v); want run 1's own fit alone",
			cal.Runs, len(cal.Sections), asJSON(t, cal.Sections[0]) == asJSON(t, c.rep.Simulations[1].Sections[0]))
	}
	var table strings.Builder
	for _, tb := range c.rep.Tables() {
		fmt.Fprintln(&table, tb.Title)
		for _, row := range tb.Rows {
			fmt.Fprintln(&table, strings.Join(row, " | "))
		}
	}
	if !strings.Contains(table.String(), "fitted on runs [1], each alone") || !strings.Contains(table.String(), "not fitted alone: network: fewer than 3 rejected retries") {
		t.Errorf("the tables do not say which runs the calibrated model took and why run 2 is not one:\n%s", table.String())
	}
	_, err = simulate(noRetries(syntheticRun(1, 1)), noRetries(syntheticRun(2, 2)))
	var ue *UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "run 1:") || !strings.Contains(err.Error(), "run 2:") {
		t.Errorf("no run fitted alone: err = %v, want a usage error naming runs 1 and 2", err)
	}
}

// TestModelFileErrors: a --model that is not a config, or a config
// without a fitted model, is bad input naming the file.
func TestModelFileErrors(t *testing.T) {
	s, err := config.Load("../configs/seed-lab.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ file, want string }{
		{"../configs/seed-lab.yaml", "--model ../configs/seed-lab.yaml: capacity: missing"},
		{"no-such.yaml", "no-such.yaml"},
	} {
		if _, err := prepare(s, Options{OutDir: "x", Models: []string{c.file}}.withDefaults()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--model %s: err = %v, want %q", c.file, err, c.want)
		}
	}
}

// TestARealZeroAgainstASimulatedSomeIsWritten: a real bucket storm that
// wasted no claim, against a predicted model that wastes some, as the
// bucket lab gives on a fast machine. The relative error of wasted claims
// against 0 has no value: calibration.json must still be written whole,
// with it null and the absolute error beside it, and the charts drawn.
// (It once failed here with "json: unsupported value: +Inf", losing the
// measured storm.) No database: the real run is made up.
func TestARealZeroAgainstASimulatedSomeIsWritten(t *testing.T) {
	s, err := config.Load("../configs/metastable-lab-bucket.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	c, err := prepare(s, Options{OutDir: out, Models: []string{labModel}, Replications: 6}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	accepts := make([]int64, 30)
	for w := range accepts {
		accepts[w] = int64(2000 / len(accepts))
	}
	accepts[0] += 2000 % int64(len(accepts))
	c.rep.Real = []*measured.Run{{Run: 1, Seed: 1,
		Crash:     storm.Summary{Clients: 2000, Attempts: 7000, Rejected: 5000, ConvergenceMs: 7500, AllReconnected: true},
		Decisions: measured.Series{Attempts: slices.Repeat([]int64{7000 / 30}, 30), Accepts: accepts},
		Outcome: &measured.Outcome{Outcome: "converged", Converged: true, HorizonMs: 10000, Connected: 2000, Useful: 2000,
			GoodputSeries: accepts, WastedSeries: make([]int64, 30)},
		Claims: syntheticRun(1, 1).Claims}} // a backlog to measure claim rates on
	c.rep.FitError = "network: fewer than 3 rejected retries" // as a made-up run without handshakes has
	if err := c.simulate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c.write(); err != nil {
		t.Fatalf("writing the calibration: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(out, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Simulations []struct {
			Label   string `json:"label"`
			Metrics []struct {
				Metric   string   `json:"metric"`
				Real     float64  `json:"real"`
				SimMean  float64  `json:"sim_mean"`
				RelError *float64 `json:"rel_error"`
				AbsError float64  `json:"abs_error"`
			} `json:"metrics"`
		} `json:"simulations"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("calibration.json: %v", err)
	}
	if len(doc.Simulations) == 0 || doc.Simulations[0].Label != "predicted" {
		t.Fatalf("simulations %+v: want the predicted model first", doc.Simulations)
	}
	found := false
	for _, m := range doc.Simulations[0].Metrics {
		if m.Metric != "wasted_per_s" {
			continue
		}
		found = true
		if m.SimMean <= 0 {
			t.Fatalf("the predicted model wastes no claim here (%v/s): the test no longer sets a real 0 against a model's some", m.SimMean)
		}
		if m.Real != 0 || m.RelError != nil || m.AbsError != m.SimMean {
			t.Errorf("wasted_per_s: real %v, rel_error %v, abs_error %v; want 0, null and %v", m.Real, m.RelError, m.AbsError, m.SimMean)
		}
	}
	if !found {
		t.Error("no wasted_per_s in the predicted model's metrics")
	}
	if _, err := os.Stat(filepath.Join(out, ChartsDir, "goodput.png")); err != nil {
		t.Errorf("charts: %v", err)
	}
}

// TestWhatWasMeasuredIsKept: once the real runs are measured, nothing
// that fails later loses them. Runs that cannot be fitted, without a
// model fitted elsewhere, are a usage error that names --model, with
// calibration.json already holding the runs and why; a failure while
// charting (here a file stands where the charts directory goes) leaves
// calibration.json with the runs, every model simulated and the failure
// named.
func TestWhatWasMeasuredIsKept(t *testing.T) {
	s, err := config.Load("../configs/seed-lab.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	read := func(dir string) report.Report {
		t.Helper()
		var rep report.Report
		data, err := os.ReadFile(filepath.Join(dir, ReportFile))
		if err == nil {
			err = json.Unmarshal(data, &rep)
		}
		if err != nil {
			t.Fatalf("calibration.json: %v", err)
		}
		return rep
	}

	out := t.TempDir()
	c, err := prepare(s, Options{OutDir: out, Replications: 4}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	unfittable := syntheticRun(1, 1)
	unfittable.Handshakes = slices.DeleteFunc(unfittable.Handshakes, func(h measured.Handshake) bool { return h.Attempt > 1 })
	unfittable.Load = measured.Load{OtherBeforeCores: 0.5, OtherDuringCores: 0.25}
	c.rep.Real = []*measured.Run{unfittable}
	c.rep.Checks = []measured.Check{{Run: 1, Name: "baseline routes", Pass: true}}
	// What an earlier calibration into the directory fitted goes: it
	// would contradict calibration.json.
	for _, f := range []string{CalibratedFile, "calibrated-run-1.yaml", filepath.Join(ChartsDir, "attempts.png")} {
		os.MkdirAll(filepath.Dir(filepath.Join(out, f)), 0o755)
		os.WriteFile(filepath.Join(out, f), nil, 0o644)
	}
	err = c.conclude(context.Background())
	var ue *UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--model") || !strings.Contains(err.Error(), filepath.Join(out, ReportFile)) {
		t.Errorf("unfittable runs: err = %v, want a usage error naming --model and %s", err, ReportFile)
	}
	if rep := read(out); len(rep.Real) != 1 || rep.FitError == "" || len(rep.Checks) != 1 || rep.Real[0].Load != unfittable.Load {
		t.Errorf("unfittable runs: calibration.json has %d runs, %d checks, load %+v, fit_error %q", len(rep.Real), len(rep.Checks), rep.Real[0].Load, rep.FitError)
	}
	if left, _ := os.ReadDir(out); len(left) != 1 {
		t.Errorf("beside calibration.json of runs that cannot be fitted: %v", left)
	}

	out = t.TempDir()
	if err := os.WriteFile(filepath.Join(out, ChartsDir), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err = prepare(s, Options{OutDir: out, Replications: 4}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	c.rep.Real = []*measured.Run{syntheticRun(1, 1), syntheticRun(2, 2)}
	err = c.conclude(context.Background())
	if err == nil || errors.As(err, &ue) || !strings.Contains(err.Error(), ReportFile) {
		t.Fatalf("charts cannot be written: err = %v, want an internal error pointing at %s", err, ReportFile)
	}
	rep := read(out)
	if len(rep.Real) != 2 || len(rep.Simulations) == 0 || rep.Error == "" || !strings.Contains(err.Error(), rep.Error) {
		t.Errorf("calibration.json after a failed chart: %d runs, %d simulations, error %q", len(rep.Real), len(rep.Simulations), rep.Error)
	}
}

// TestCutRecordKeepsWholeRuns: real.ndjson is cut at the marker that
// opens the first run not kept, or after its last whole line.
func TestCutRecordKeepsWholeRuns(t *testing.T) {
	lines := []string{
		`{"event":"run","client":-1,"run":1,"seed":1,"schema":"a"}`, `{"event":"attempt","client":3}`, `{"t_ms":5,"event":"gateway","client":-1,"run":1}`,
		`{"event":"run","client":-1,"run":2,"seed":2,"schema":"b"}`, `{"event":"attempt","client":4}`,
	}
	whole := strings.Join(lines, "\n") + "\n"
	for _, tt := range []struct {
		name, body string
		runs       int
		want       string
	}{
		{"the second run dropped", whole, 1, strings.Join(lines[:3], "\n") + "\n"},
		{"both kept", whole, 2, whole},
		{"a half-written line dropped", whole + `{"event":"att`, 2, whole},
		{"none kept", whole, 0, ""},
	} {
		path := filepath.Join(t.TempDir(), RecordFile)
		os.WriteFile(path, []byte(tt.body), 0o644)
		if err := cutRecord(path, tt.runs); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); string(got) != tt.want {
			t.Errorf("%s: got\n%s\nwant\n%s", tt.name, got, tt.want)
		}
	}
	if err := cutRecord(filepath.Join(t.TempDir(), "none"), 1); err != nil {
		t.Errorf("no record: %v", err)
	}
}

// TestStoppedKeepsTheFinishedRuns: a calibration stopped during run 2
// keeps run 1 in calibration.json (saying how it stopped) and in
// real.ndjson, drops run 2's record and logs; --resume takes run 1 back,
// with its checks, and refuses another scenario, policy or fewer runs.
func TestStoppedKeepsTheFinishedRuns(t *testing.T) {
	s, err := config.Load("../configs/seed-lab.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	c, err := prepare(s, Options{OutDir: out, Runs: 3, Replications: 4}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	c.rep.Real = []*measured.Run{syntheticRun(1, s.Seed)}
	c.rep.Real[0].Load.OtherBeforeCores = 0.25
	os.WriteFile(filepath.Join(out, RecordFile), []byte(`{"event":"run","client":-1,"run":1}`+"\n"+`{"event":"run","client":-1,"run":2}`+"\n"), 0o644)
	os.MkdirAll(filepath.Join(out, "logs", "run-2"), 0o755)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = c.stopped(ctx, &outdir.Dir{Path: out}, 2)
	var ie *InterruptedError
	if !errors.As(err, &ie) || ie.Kept != 1 || ie.During != "real run 2" || !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped: %v", err)
	}
	if want := "during real run 2: the real run that finished is kept in " + filepath.Join(out, ReportFile) + " and " + filepath.Join(out, RecordFile) +
		", and every process and schema it started is gone"; ie.What() != want {
		t.Errorf("what: %s\nwant  %s", ie.What(), want)
	}
	if got, _ := os.ReadFile(filepath.Join(out, RecordFile)); string(got) != `{"event":"run","client":-1,"run":1}`+"\n" {
		t.Errorf("record after the stop: %q", got)
	}
	if _, err := os.Stat(filepath.Join(out, "logs", "run-2")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("run 2's logs left: %v", err)
	}
	rep, err := report.Read(filepath.Join(out, ReportFile))
	if err != nil || len(rep.Real) != 1 || !strings.HasPrefix(rep.Incomplete, "stopped during real run 2: 1 of 3 real runs measured") || rep.Real[0].Load.OtherBeforeCores != 0.25 {
		t.Fatalf("calibration.json after the stop: %v %+v", err, rep)
	}

	resumed, err := prepare(s, Options{OutDir: out, Runs: 3, Replications: 4, Resume: true}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	if err := resumed.resume(); err != nil {
		t.Fatal(err)
	}
	if resumed.resumed != 1 || asJSON(t, resumed.rep.Real) != asJSON(t, c.rep.Real) || len(resumed.rep.Checks) == 0 {
		t.Errorf("resumed %d runs, %d checks; the run differs: %v", resumed.resumed, len(resumed.rep.Checks), asJSON(t, resumed.rep.Real) != asJSON(t, c.rep.Real))
	}
	other, _ := config.Load("../configs/seed-lab.yaml", []string{"clients=61"})
	two := t.TempDir()
	c.rep.Real = append(c.rep.Real, syntheticRun(2, s.Seed+1))
	if err := c.rep.WriteJSON(filepath.Join(two, ReportFile)); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		s    *sim.Scenario
		opt  Options
		want string
	}{
		{"another scenario", other, Options{OutDir: out, Runs: 3}, "is a calibration of another scenario or policy"},
		{"fewer runs", s, Options{OutDir: two, Runs: 1, Replications: 4}, "holds 2 real runs, more than --runs 1"},
		{"nothing to resume", s, Options{OutDir: t.TempDir(), Runs: 3}, "holds no calibration.json to go on from"},
	} {
		tt.opt.Resume = true
		c, err := prepare(tt.s, tt.opt.withDefaults())
		if err == nil {
			err = c.resume()
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}

// TestClaimOwnsCalibratesFiles: calibrate's outputs are its own in -o
// DIR, anything else is not.
func TestClaimOwnsCalibratesFiles(t *testing.T) {
	c := &calibration{rep: &report.Report{}}
	claim := c.claim()
	for name, want := range map[string]bool{ReportFile: true, RecordFile: true, CalibratedFile: true, "calibrated-run-12.yaml": true, ChartsDir: true, "logs": true,
		"calibrated-run-x.yaml": false, "calibrated-run-1.yaml.bak": false, "result.json": false, "notes.txt": false} {
		if got := claim.Owns(name); got != want {
			t.Errorf("owns %s: %v, want %v", name, got, want)
		}
	}
}
