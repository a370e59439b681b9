package calibrate

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"stormsim/calibrate/fit"
	"stormsim/calibrate/report"
	"stormsim/internal/pgtest"
	"stormsim/sim"
)

// TestDrainAndDeployLabsRun runs the drain lab (its reserved-hint way)
// and the rolling-deploy lab, 30 clients and one real run each, as a user
// runs them, predicted from the seed lab's fit at 1,000 clients
// (testdata/seed-lab-1000): every lab check holds (the drain invariant at
// every drain, everyone back at head), and the report judges what each
// lab is judged on: the paced drain's attempts, time and series; the
// deploy's handshakes, reconnects per client, duration and series. Whether
// a 30-client run agrees with a model fitted at 1,000 is not asked here;
// the labs' figures at 1,000 are in docs/calibration.md.
func TestDrainAndDeployLabsRun(t *testing.T) {
	url := pgtest.URL(t)
	model := filepath.Join("testdata", "seed-lab-1000", "calibrated-run-*.yaml")
	for _, c := range []struct {
		name, config string
		sets         []string
		judged       []string
	}{
		{"drain lab, reserved hints", "drain-lab", []string{"clients=30", "drain.reconnect_hint={kind: reserved}"},
			[]string{"drain.attempts", "drain.convergence_ms", "drain.attempts per window", "drain.accepts per window"}},
		{"rolling deploy of 3 gateways", "deploy-lab", []string{"clients=30"},
			[]string{"deploy.attempts", "deploy.duration_ms", "deploy.reconnects_per_client", "deploy.attempts per window"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			args := []string{"calibrate", "-c", "../configs/" + c.config + ".yaml", "-o", out, "--runs", "1",
				"--replications", strconv.Itoa(shortReps), "--database-url", url, "--gateway-bin", gatewayBinary(t), "--timeout", "2m",
				"--wait-quiet", "20s", "--model", model}
			for _, set := range c.sets {
				args = append(args, "--set", set)
			}
			rep, _, _, _ := runCalibrate(t, out, args)
			if len(rep.Checks) == 0 {
				t.Fatal("no lab checks in the report")
			}
			for _, check := range rep.Checks {
				if !check.Pass {
					t.Errorf("lab check %q: expected %s, observed %s", check.Name, check.Expected, check.Observed)
				}
			}
			judged := map[string]bool{}
			for _, a := range rep.Agreement {
				if a.Model == "predicted" {
					judged[a.Name] = true
				}
			}
			for _, name := range c.judged {
				if !judged[name] {
					t.Errorf("the predicted model is not judged on %s (judged: %v)", name, judged)
				}
			}
			if c.config == "deploy-lab" {
				restartsAsMeasured(t, rep)
			}
		})
	}
}

// restartsAsMeasured checks that a deploy lab's runs kept each drain's
// last close read, and that its prediction restarts the gateways as they
// measured (fit.Lab.Restarts) and says so.
func restartsAsMeasured(t *testing.T, rep report.Report) {
	t.Helper()
	if len(rep.Real) == 0 || rep.Real[0].Deploy == nil || len(rep.Real[0].Deploy.Drains) != 3 {
		t.Fatalf("real runs %v: want a deploy of 3 drains", rep.Real)
	}
	for _, d := range rep.Real[0].Deploy.Drains {
		if d.LastCloseMs < d.StartMs || d.LastCloseMs > d.BackMs {
			t.Errorf("drain %+v: its last close read outside its drain", d)
		}
	}
	l := fit.LabOf(rep.Real)
	if l.StartupMs <= 0 || len(rep.Simulations) == 0 {
		t.Fatalf("no start-up measured (%+v) or no simulation", l)
	}
	pred := rep.Simulations[0]
	restarted, _ := l.Restarts(&sim.Scenario{Deploy: &sim.DeploySpec{}})
	if want := fmt.Sprintf("deploy.startup %v:", restarted.Deploy.Startup); pred.Role != report.Predicted || !strings.Contains(pred.Borrowed, want) {
		t.Errorf("%s borrows %q, want %q", pred.Role, pred.Borrowed, want)
	}
}
