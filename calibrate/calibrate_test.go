package calibrate

import (
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

	"stormsim/calibrate/fit"
	"stormsim/calibrate/measured"
	"stormsim/calibrate/report"
	"stormsim/config"
	"stormsim/gateway/storm"
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
	if err := c.simulate(); err != nil {
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
		return c, c.simulate()
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
	if err := c.simulate(); err != nil {
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
	c.rep.Real = []*measured.Run{unfittable}
	err = c.conclude()
	var ue *UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--model") {
		t.Errorf("unfittable runs: err = %v, want a usage error naming --model", err)
	}
	if rep := read(out); len(rep.Real) != 1 || rep.FitError == "" {
		t.Errorf("unfittable runs: calibration.json has %d runs, fit_error %q", len(rep.Real), rep.FitError)
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
	err = c.conclude()
	if err == nil || errors.As(err, &ue) || !strings.Contains(err.Error(), ReportFile) {
		t.Fatalf("charts cannot be written: err = %v, want an internal error pointing at %s", err, ReportFile)
	}
	rep := read(out)
	if len(rep.Real) != 2 || len(rep.Simulations) == 0 || rep.Error == "" || !strings.Contains(err.Error(), rep.Error) {
		t.Errorf("calibration.json after a failed chart: %d runs, %d simulations, error %q", len(rep.Real), len(rep.Simulations), rep.Error)
	}
}
