package calibrate

import (
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
// calibrated and uncalibrated, in that order and by role; predicted has
// the model file's sections, calibrated exactly what calibrated.yaml
// holds (the one fit on all the runs, whatever a single run gives alone),
// uncalibrated the config's own.
func TestModelsHaveTheirRoles(t *testing.T) {
	s, err := config.Load("../configs/seed-lab.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	runs := []*measured.Run{syntheticRun(1, 1), syntheticRun(2, 2)}
	runs[1].Handshakes = slices.DeleteFunc(runs[1].Handshakes, func(h measured.Handshake) bool { return h.Attempt > 1 }) // cannot be fitted alone
	f, err := fit.Runs(runs)
	if err != nil {
		t.Fatal(err)
	}
	other := f.Model
	other.Capacity.AdmitPerS, other.Capacity.DecidePerS = 123.4, 5678
	modelFile := filepath.Join(t.TempDir(), "a.yaml")
	if err := os.WriteFile(modelFile, config.Echo(other.Apply(s)), 0o644); err != nil {
		t.Fatal(err)
	}

	c, err := prepare(s, Options{OutDir: t.TempDir(), Model: modelFile, Replications: 4}.withDefaults())
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
	if !slices.Equal(roles, []report.Role{report.Predicted, report.Calibrated, report.Uncalibrated}) {
		t.Fatalf("roles %v", roles)
	}
	sections := func(sm report.Simulation) fit.Model {
		return fit.Model{Capacity: *sm.Capacity, Network: *sm.Network, Detection: *sm.Detection}
	}
	if got := sections(c.rep.Simulations[0]); !reflect.DeepEqual(got, other) {
		t.Errorf("predicted %+v, want the model file's %+v", got.Capacity, other.Capacity)
	}
	yaml, err := config.Parse(CalibratedFile, c.rep.CalibratedYAML(), nil)
	if err != nil {
		t.Fatal(err)
	}
	written, err := fit.FromScenario(yaml)
	if err != nil {
		t.Fatal(err)
	}
	if got := sections(c.rep.Simulations[1]); !reflect.DeepEqual(got, written) || !reflect.DeepEqual(got, f.Model) {
		t.Errorf("calibrated %+v, calibrated.yaml %+v, the fit %+v", got.Capacity, written.Capacity, f.Model.Capacity)
	}
	if u := c.rep.Simulations[2]; u.Capacity != nil || u.Network != nil {
		t.Errorf("uncalibrated has fitted sections: %+v", u)
	}
	if f.Runs[1].Model != nil || !strings.Contains(f.Runs[1].Error, "retries") {
		t.Errorf("run 2 alone: %+v, want the reason it cannot be fitted", f.Runs[1])
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
		if _, err := prepare(s, Options{OutDir: "x", Model: c.file}.withDefaults()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--model %s: err = %v, want %q", c.file, err, c.want)
		}
	}
}
