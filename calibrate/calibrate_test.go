package calibrate

import (
	"errors"
	"fmt"
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
	if got := models(c.rep.Simulations[1]); len(got) != 2 || !reflect.DeepEqual(got[0], *f.Runs[0].Model) || !reflect.DeepEqual(got[1], *f.Runs[1].Model) ||
		reflect.DeepEqual(got[0], got[1]) {
		t.Errorf("calibrated %+v, want each run's own fit", got)
	}
	yaml, err := config.Parse(CalibratedFile, c.rep.ScenarioYAML("2 runs", c.rep.CalibratedConfig), nil)
	if err != nil {
		t.Fatal(err)
	}
	written, err := fit.FromScenario(yaml)
	if err != nil {
		t.Fatal(err)
	}
	if got := models(c.rep.Simulations[2]); len(got) != 1 || !reflect.DeepEqual(got[0], written) || !reflect.DeepEqual(got[0], f.Model) {
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
	c.rep.WriteTable(&table)
	if !strings.Contains(table.String(), "fitted on runs [1], each alone") || !strings.Contains(table.String(), "not fitted alone: network: fewer than 3 rejected retries") {
		t.Errorf("the table does not say which runs the calibrated model took and why run 2 is not one:\n%s", table.String())
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
