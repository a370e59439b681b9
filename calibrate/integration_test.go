package calibrate

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"stormsim/calibrate/compare"
	"stormsim/calibrate/fit"
	"stormsim/calibrate/lab"
	"stormsim/calibrate/report"
	"stormsim/config"
	"stormsim/internal/pgtest"
	"stormsim/internal/syncbuf"
	"stormsim/sim"
)

// The short integration runs (30 clients, one real storm each) check the
// report's agreements with these tolerances: total attempts within
// compare.AttemptsTolerance of the simulated mean; the time until the last
// client is back (one client's draws decide it, so one real run varies as
// much as the model's runs do) inside the simulated spread, the min-max of
// the replications; attempts and accepts per window inside the simulated
// spread (the report's criterion: all but SeriesComparison.AllowedOutside
// windows, 1 for 200 replications). Each of these fails for an exact model
// now and then by construction (the spread 2/201 of the time, the series
// criterion under 5%). So a miss is logged and the whole storm run once
// more, fresh; only a second miss fails the test (well under 1 in 100 for
// an exact model; a model that is off misses both). A run that other work
// disturbed is replaced once by the calibration itself, each run waiting
// up to 20 s for the machine to be quiet first; one that stays disturbed
// measures that work, not the model: the report must say so and fail, and
// the test skips with the disturbance measured as its reason, never
// passing unjudged. The lab checks and the outputs must hold every time
// (a failed one fails the test even when it then skips). Measured over 10
// runs of the package on a 2-core machine (load 2.9-20): the short labs
// needed 1 rerun (a last client 147 ms outside the simulated spread) and
// skipped 1 of 10 sittings on a disturbed run.
const shortReps = 200

// shortRuns is the real runs of each short calibration. The time to all
// reconnected of 30 clients is one client's last backoff: on a slow
// machine one run's came at 1.5 s and the next's at 2.35 s, and a model
// judged on one run missed its 20 % in 1 run of the test in 2; the mean
// of 3 runs, each fitted alone for the calibrated model, is what the
// model is meant to agree with.
const shortRuns = 3

var gatewayOnce struct {
	sync.Once
	bin string
	err error
}

// gatewayBinary builds cmd/gateway once per test binary.
func gatewayBinary(t *testing.T) string {
	t.Helper()
	gatewayOnce.Do(func() {
		dir, err := os.MkdirTemp("", "calibrate-test-gateway-")
		if err != nil {
			gatewayOnce.err = err
			return
		}
		gatewayOnce.bin, gatewayOnce.err = lab.BuildGateway(context.Background(), dir)
	})
	if gatewayOnce.err != nil {
		t.Fatal(gatewayOnce.err)
	}
	return gatewayOnce.bin
}

var stormsimOnce struct {
	sync.Once
	bin string
	err error
}

// stormsimBinary builds cmd/stormsim once per test binary, without the race
// detector whatever the test binary was built with: the real storm's clients
// run in it, and race instrumentation would slow them several times over and
// distort the very timing the test compares with the model.
func stormsimBinary(t *testing.T) string {
	t.Helper()
	stormsimOnce.Do(func() {
		dir, err := os.MkdirTemp("", "calibrate-test-stormsim-")
		if err != nil {
			stormsimOnce.err = err
			return
		}
		stormsimOnce.bin, stormsimOnce.err = lab.BuildCommand(context.Background(), dir, "stormsim")
	})
	if stormsimOnce.err != nil {
		t.Fatal(stormsimOnce.err)
	}
	return stormsimOnce.bin
}

// shortLabSets turn the seed lab into 30 clients with gw-b's bucket scaled
// alike (40/s and burst 10 per 60 devices: 20/s, burst 5), their first
// attempts within 10 ms rather than 100: each calibration fits its runs,
// which needs 3 claims that waited for another, and on a quick machine
// (claims at 1,500/s) 30 first attempts spread over 100 ms gave only 2-6
// (one run in five could not be fitted), over 10 ms 11-14. The first
// retries then fall due 200 ms (the floor) after rejections within the
// first ~20 ms; over 30 ms they reached within a few ms of the first
// window's end, and one run in about 25 missed it twice in a row.
//
// Both short storms count in windows of 350 ms, not the seed's 250: the
// 200 ms floor makes the retries sharp waves, due 200 and 400 ms after
// the first wave plus its delay, and that delay is the machine's from
// one run to the next (the first attempts decided 2-17 ms after the kill
// on one CI machine, their 30 decisions 17-25 ms apart), which a model's
// fixed first_out cannot follow. Cut at 250 ms, a wave 20-30 ms late
// moved 14 of the first window's 50 attempts into the next: a slow
// machine's predicted storm missed two windows of 20 on two runs in a
// row. At 350 ms both waves lie inside a window for any delay up to
// 75 ms (the simulated first window holds 50 attempts for first_out
// 8.6-50 ms; at 250 ms it falls to 36 at 30 ms).
var shortLabSets = []string{"clients=30", "admission={kind: token_bucket, rate: 20, burst: 5, retry_after: 1s}", "initial_jitter=10ms", shortWindow}

// shortPredictSets are another storm of the same 30 clients: half the
// bucket's rate and twice its burst.
var shortPredictSets = []string{"clients=30", "admission={kind: token_bucket, rate: 10, burst: 10, retry_after: 1s}", "initial_jitter=10ms", shortWindow}

// shortWindow is the short storms' window (see shortLabSets).
const shortWindow = "metrics.window=350ms"

// shortWiderSets are the seed lab as written, twice the short lab's
// clients and bucket, its first attempts within 100 ms (12-18 claims
// waited): the carry of a fit across client counts. (Within 10 ms, 60
// clients' first retries reached the gateway up to 30 ms late, and one
// run in 15 put a third of them past the first window, twice in a row.)
var shortWiderSets = []string{"clients=60", "admission={kind: token_bucket, rate: 40, burst: 10, retry_after: 1s}"}

// shortLab is the short lab's scenario, for the tests that call Run in
// process.
func shortLab(t *testing.T) *sim.Scenario {
	t.Helper()
	s, err := config.Load("../configs/seed-lab.yaml", shortLabSets)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCalibrateAndPredictShortLab runs three calibrations, `stormsim
// calibrate` as a user runs it, against real PostgreSQL and real gateway
// processes: the short lab, whose calibrated model must agree with its
// real run; then another storm (half the rate, twice the burst) with
// --model the first one's calibrated-run-*.yaml, whose predicted model,
// fitted on nothing of this storm, must agree with its real run too; then
// twice the clients and the bucket, predicted the same way: a fit carried
// across client counts. Each predicted model is A's with the lab's
// client process as its own storm's run measured it (its notices).
func TestCalibrateAndPredictShortLab(t *testing.T) {
	url := pgtest.URL(t)
	dirA := t.TempDir()
	judge(t, "calibrated", func() (*report.Report, []string) {
		return calibrateShort(t, url, dirA, shortLabSets, "", report.Calibrated)
	})
	modelA := filepath.Join(dirA, "calibrated-run-*.yaml")
	files, err := filepath.Glob(modelA)
	if err != nil || len(files) == 0 || len(files) > shortRuns {
		t.Fatalf("per-run files %v (%v), want one a run that could be fitted alone, %d at most", files, err, shortRuns)
	}
	var a []*sim.Scenario
	for _, f := range files {
		s, err := config.Load(f, nil)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		a = append(a, s)
	}
	dirB := t.TempDir()
	rep := judge(t, "predicted", func() (*report.Report, []string) {
		return calibrateShort(t, url, dirB, shortPredictSets, modelA, report.Predicted)
	})
	if rep == nil {
		return
	}
	// The predicted model is A's, not refitted on B's run.
	if roles := rolesOf(rep); !slices.Equal(roles, []report.Role{report.Predicted, report.Calibrated, report.Pooled, report.Uncalibrated}) {
		t.Errorf("simulations %v, want predicted, calibrated, pooled, uncalibrated", roles)
	}
	// Its detection and legs are the lab's clients as B's run measured
	// them.
	want := asJSON(t, withLabOfEach(t, a, rep))
	if p := rep.Simulations[0].Sections; asJSON(t, p) != want {
		t.Errorf("predicted sections differ from %v's with B's notices and legs:\n%s\n%s", files, asJSON(t, p), want)
	}
	if !slices.Equal(rep.Models, files) || asJSON(t, rep.Simulations[1].Sections) == want {
		t.Errorf("report models %q; calibrated %s (must be B's own fit)", rep.Models, asJSON(t, rep.Simulations[1].Sections[0]))
	}
	// The fit at 30 clients carries to 60: the first wave's rate (clients
	// / decide_per_s) and the claims are the gateway's, the notices and
	// every leg (the onset's first way included) the lab's clients' as
	// measured on this storm's run.
	dirC := t.TempDir()
	wider := judge(t, "predicted at 60 clients", func() (*report.Report, []string) {
		return calibrateShort(t, url, dirC, shortWiderSets, modelA, report.Predicted)
	})
	if wider == nil {
		return
	}
	if wider.Clients != 60 || len(wider.Real) != shortRuns || wider.Real[0].Crash.Clients != 60 {
		t.Errorf("the wider storm ran %d clients (real %v), want 60", wider.Clients, wider.Real)
	}
	if p := wider.Simulations[0].Sections; asJSON(t, p) != asJSON(t, withLabOfEach(t, a, wider)) {
		t.Errorf("predicted sections at 60 clients differ from %v's with their runs' notices and legs: %s", files, asJSON(t, p))
	}
}

// withLabOfEach is withLabOf for each of the model files' scenarios.
func withLabOfEach(t *testing.T, a []*sim.Scenario, rep *report.Report) []report.Sections {
	t.Helper()
	var out []report.Sections
	for _, s := range a {
		out = append(out, withLabOf(t, s, rep))
	}
	return out
}

// withLabOf is the sections of scenario a's model with the lab's client
// process as rep's real runs measured it: their notices (fit.Model.WithLab),
// which they must have kept, their drains' goaways' way where they drained
// (fit.Model.WithGoawaysOf), and their legs as fitted (fit.Model.WithLegsOf).
func withLabOf(t *testing.T, a *sim.Scenario, rep *report.Report) report.Sections {
	t.Helper()
	m, err := fit.FromScenario(a)
	if err != nil {
		t.Fatal(err)
	}
	lab := fit.LabOf(rep.Real)
	m, ok := m.WithLab(lab)
	if !ok {
		t.Errorf("the real runs kept no notices of the kill")
	}
	if len(rep.Real) > 0 && rep.Real[0].Drain != nil {
		if m, ok = m.WithGoawaysOf(lab); !ok {
			t.Errorf("the real runs drained, and their goaways' way was not measured")
		}
	}
	if m, ok = m.WithLegsOf(rep.Fit.Model); !ok {
		t.Errorf("the real runs' fit has no retries' legs: %s", rep.FitError)
	}
	return report.Sections{Capacity: &m.Capacity, Network: &m.Network, Detection: &m.Detection}
}

// judge runs a short calibration, and once more when its checked model
// missed an agreement; only a second miss is an error. It returns the last
// report (nil when none could be read).
func judge(t *testing.T, what string, calibrate func() (*report.Report, []string)) *report.Report {
	t.Helper()
	rep, misses := calibrate()
	if len(misses) == 0 {
		return rep
	}
	t.Logf("%s: the first run missed the agreement, running the storm again:\n%s", what, strings.Join(misses, "\n"))
	rep, misses = calibrate()
	for _, m := range misses {
		t.Errorf("%s: %s", what, m)
	}
	return rep
}

// asJSON is v's JSON: what a model's sections are once written, without
// the caches a validated distribution keeps.
func asJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func rolesOf(rep *report.Report) []report.Role {
	var out []report.Role
	for _, sm := range rep.Simulations {
		out = append(out, sm.Role)
	}
	return out
}

// calibrateShort runs `stormsim calibrate` with one real run of the seed
// lab changed by sets (and --model model, if set) into out, checks the lab
// and the outputs (errors on t) and returns the report and the misses of
// model role's agreement.
func calibrateShort(t *testing.T, url, out string, sets []string, model string, role report.Role) (*report.Report, []string) {
	args := []string{"calibrate", "-c", "../configs/seed-lab.yaml", "-o", out, "--runs", strconv.Itoa(shortRuns),
		"--replications", strconv.Itoa(shortReps), "--database-url", url, "--gateway-bin", gatewayBinary(t), "--timeout", "2m",
		"--wait-quiet", "20s"}
	for _, set := range sets {
		args = append(args, "--set", set)
	}
	if model != "" {
		args = append(args, "--model", model)
	}
	rep, stdout, stderr, err := runCalibrate(t, out, args)
	var exit *exec.ExitError
	errors.As(err, &exit)
	for _, c := range rep.Checks {
		if !c.Pass {
			t.Errorf("lab check %q: expected %s, observed %s", c.Name, c.Expected, c.Observed)
		}
	}
	// The outputs: the record holds the storm and the harness's signals,
	// the calibrated config loads, the charts exist.
	events := recordEvents(t, filepath.Join(out, RecordFile))
	if events["attempt"] < int(rep.Real[0].Crash.Attempts) || events["harness"] < 2 || events["run"] != shortRuns+len(rep.Replaced) || events["gateway"] < 5 {
		t.Errorf("record events %v", events)
	}
	if c, err := config.Load(filepath.Join(out, CalibratedFile), nil); err != nil || c.Network == nil || c.Capacity == nil || c.Capacity.DecidePerS <= 0 {
		t.Errorf("%s does not load with the fitted capacity and network: %v", CalibratedFile, err)
	}
	for _, name := range []string{"attempts.png", "connected.png", "reclaim.png", "band-attempts.png", "band-accepts.png"} {
		if _, err := os.Stat(filepath.Join(out, ChartsDir, name)); err != nil {
			t.Errorf("chart: %v", err)
		}
	}
	if d := rep.Disturbed(); len(d) > 0 {
		// Not a measurement of the model: it must not pass, and must say why.
		if exit == nil || !strings.Contains(stdout.String(), "DISTURBED") || !strings.Contains(stderr.String(), "disturbed") {
			t.Errorf("runs %v disturbed, yet exit %v and no word of it", d, err)
		}
		t.Skipf("runs %v stayed disturbed by other work (%s): the agreement is not judged", d, disturbance(rep))
	}
	return &rep, misses(rep, role)
}

// runCalibrate runs stormsim with args, a calibration into out, and
// returns its report, its output and its error: nil, or an exit 1 (a check
// or an agreement failed, for the caller to judge); anything else fails
// the test.
func runCalibrate(t *testing.T, out string, args []string) (rep report.Report, stdout, stderr *strings.Builder, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, stormsimBinary(t), args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) } // lets it stop its gateways
	cmd.WaitDelay = 10 * time.Second
	stdout, stderr = &strings.Builder{}, &strings.Builder{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		t.Fatalf("stormsim calibrate: %v\n%s", err, stderr.String())
	}
	t.Log("\n" + stdout.String())
	data, rerr := os.ReadFile(filepath.Join(out, ReportFile))
	if rerr != nil {
		t.Fatal(rerr)
	}
	if jerr := json.Unmarshal(data, &rep); jerr != nil || len(rep.Real) == 0 || len(rep.Simulations) == 0 {
		t.Fatalf("%s unreadable: %v", ReportFile, jerr)
	}
	return rep, stdout, stderr, err
}

// misses are role's missed agreements in rep (see shortReps).
func misses(rep report.Report, role report.Role) []string {
	var out []string
	i := slices.IndexFunc(rep.Simulations, func(sm report.Simulation) bool { return sm.Role == role })
	if i < 0 {
		return []string{fmt.Sprintf("no %s simulation", role)}
	}
	sm := rep.Simulations[i]
	for _, m := range sm.Metrics {
		switch m.Metric {
		case "attempts":
			if !*m.Pass {
				out = append(out, fmt.Sprintf("attempts: sim mean %.1f vs real %.0f (%+.1f), want within %.0f%%",
					m.SimMean, m.Real, m.AbsError, 100*compare.AttemptsTolerance))
			}
		case "convergence_ms":
			if m.Real < m.SimMin || m.Real > m.SimMax {
				out = append(out, fmt.Sprintf("last client back after %.0f ms, outside the simulated spread [%.0f, %.0f] ms",
					m.Real, m.SimMin, m.SimMax))
			}
		}
	}
	for _, c := range sm.Series {
		if c.Pass != nil && !*c.Pass {
			out = append(out, fmt.Sprintf("%s per window: %d of %d windows outside the simulated spread (allowed %d)\nreal %v\nmin  %v\nmax  %v",
				c.Series, c.Windows-c.WindowsInsideEnvelope, c.Windows, c.AllowedOutside, c.Real, c.SimMin, c.SimMax))
		}
	}
	return out
}

// recordEvents counts real.ndjson's lines per event.
func recordEvents(t *testing.T, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	counts := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l struct{ Event string }
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("record line %q: %v", sc.Text(), err)
		}
		counts[l.Event]++
	}
	return counts
}

// TestInterruptLeavesNothing cancels a calibration (as Ctrl-C does) once
// the gateways run: Run returns promptly, and no gateway process and no
// schema of the run is left.
func TestInterruptLeavesNothing(t *testing.T) {
	url := pgtest.URL(t)
	s := shortLab(t)
	bin := gatewayBinary(t)
	before := calibSchemas(t, url)
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, s, Options{OutDir: out, DatabaseURL: url, GatewayBin: bin, Replications: 10, Timeout: time.Minute})
		done <- err
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(readFile(filepath.Join(out, "logs", "run-1", lab.GatewaySurvivor+".log")), `"listening"`) {
		if time.Now().After(deadline) {
			t.Fatal("gw-b never listened")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run = %v, want context.Canceled", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Run did not return within 15 s of the interrupt")
	}
	if pids := processesOf(bin); len(pids) > 0 {
		t.Errorf("gateway processes left: %v", pids)
	}
	if left := schemasLeft(t, url, before); len(left) > 0 {
		t.Errorf("schemas left: before %v, still there a minute after: %v", before, left)
	}
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// processesOf lists the pids whose executable is bin.
func processesOf(bin string) []string {
	var pids []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		if exe, err := os.Readlink(filepath.Join(d, "exe")); err == nil && exe == bin {
			pids = append(pids, filepath.Base(d))
		}
	}
	return pids
}

// calibSchemas lists the schemas a calibration creates.
func calibSchemas(t *testing.T, url string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT nspname FROM pg_namespace WHERE nspname LIKE 'calib\_%' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// schemasLeft are the calibration schemas found now but not before that
// are still there a minute later. The database is shared: another
// calibration running meanwhile makes schemas of its own and drops them
// when its run ends, while one this test's calibration left behind stays.
func schemasLeft(t *testing.T, url string, before []string) []string {
	t.Helper()
	var extra []string
	for _, s := range calibSchemas(t, url) {
		if !slices.Contains(before, s) {
			extra = append(extra, s)
		}
	}
	for deadline := time.Now().Add(time.Minute); len(extra) > 0 && time.Now().Before(deadline); time.Sleep(time.Second) {
		now := calibSchemas(t, url)
		extra = slices.DeleteFunc(extra, func(s string) bool { return !slices.Contains(now, s) })
	}
	return extra
}

// TestCtrlCKeepsFinishedRunsAndResumes interrupts `stormsim calibrate`
// (SIGINT, as Ctrl-C sends) during its second real run, against real
// PostgreSQL and gateway processes: it must exit 130 within a few seconds
// with the way to go on, run 1 kept whole in calibration.json and
// real.ndjson, run 2's logs gone, and no gateway process or schema left.
// The command it prints, with --resume, then runs only run 2 and keeps
// run 1 as it was.
func TestCtrlCKeepsFinishedRunsAndResumes(t *testing.T) {
	url := pgtest.URL(t)
	bin := gatewayBinary(t)
	before := calibSchemas(t, url)
	out := filepath.Join(t.TempDir(), "out")
	args := []string{"calibrate", "-c", "../configs/seed-lab.yaml", "-o", out, "--runs", "2", "--replace", "0", "--replications", "10",
		"--database-url", url, "--gateway-bin", bin, "--timeout", "3m"}
	for _, set := range shortLabSets {
		args = append(args, "--set", set)
	}
	cmd := exec.Command(stormsimBinary(t), args...)
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	defer func() { cmd.Process.Kill(); <-exited }()
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(stderr.String(), "calibrate: run 2: ") {
		select {
		case <-exited:
			t.Fatalf("calibrate ended before run 2: %v\n%s", cmd.ProcessState, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("run 2 did not start within 2 minutes:\n%s", stderr.String())
		}
	}
	sent := time.Now()
	cmd.Process.Signal(os.Interrupt)
	select {
	case <-exited:
	case <-time.After(time.Minute):
		t.Fatal("calibrate did not end within a minute of SIGINT")
	}
	took := time.Since(sent)
	t.Logf("SIGINT during run 2: ended %v after the signal (bound %v)", took.Round(time.Millisecond), stopBound)
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	last := lines[len(lines)-1]
	want := "stormsim calibrate: interrupted during real run 2: the real run that finished is kept in " + filepath.Join(out, ReportFile) + " and " +
		filepath.Join(out, RecordFile) + ", and every process and schema it started is gone; continue with: "
	printed, ok := strings.CutPrefix(last, want)
	if code := cmd.ProcessState.ExitCode(); code != 130 || took > stopBound || !ok || !strings.HasPrefix(printed, "stormsim calibrate ") || !strings.HasSuffix(printed, " --resume") {
		t.Errorf("exit %d %v after SIGINT, last line\n%s\nwant exit 130 within %v and\n%s...--resume", code, took, last, stopBound, want)
	}
	if pids := processesOf(bin); len(pids) > 0 {
		t.Errorf("gateway processes left: %v", pids)
	}
	if left := schemasLeft(t, url, before); len(left) > 0 {
		t.Errorf("schemas left: before %v, still there a minute after: %v", before, left)
	}
	stopped, err := report.Read(filepath.Join(out, ReportFile))
	if err != nil || len(stopped.Real) != 1 || stopped.Real[0].Run != 1 || !strings.HasPrefix(stopped.Incomplete, "stopped during real run 2: 1 of 2 real runs measured") {
		t.Fatalf("calibration.json after the interrupt: %v, %+v", err, stopped)
	}
	if events := recordEvents(t, filepath.Join(out, RecordFile)); events["run"] != 1 || events["attempt"] < int(stopped.Real[0].Crash.Attempts) {
		t.Errorf("real.ndjson after the interrupt: %v", events)
	}
	if _, err := os.Stat(filepath.Join(out, lab.LogsDir, "run-2")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("run 2's logs left: %v", err)
	}

	// The command as printed, run by a shell.
	resume := exec.Command("sh", "-c", "'"+stormsimBinary(t)+"'"+strings.TrimPrefix(printed, "stormsim"))
	var resumed strings.Builder
	resume.Stderr = &resumed
	if err := resume.Run(); err != nil && resume.ProcessState.ExitCode() != 1 {
		t.Fatalf("--resume: %v\n%s", err, resumed.String())
	}
	if !strings.Contains(resumed.String(), "calibrate: resuming: 1 real run(s) kept from ") || strings.Contains(resumed.String(), "calibrate: run 1: ") {
		t.Errorf("--resume ran run 1 again, or did not say it kept it:\n%s", resumed.String())
	}
	done, err := report.Read(filepath.Join(out, ReportFile))
	if err != nil || len(done.Real) != 2 || done.Incomplete != "" || len(done.Simulations) == 0 || asJSON(t, done.Real[0]) != asJSON(t, stopped.Real[0]) {
		t.Errorf("calibration.json after --resume: %v, %d runs, incomplete %q, run 1 kept as it was: %v", err, len(done.Real), done.Incomplete,
			err == nil && asJSON(t, done.Real[0]) == asJSON(t, stopped.Real[0]))
	}
	if events := recordEvents(t, filepath.Join(out, RecordFile)); events["run"] != 2 {
		t.Errorf("real.ndjson after --resume: %v", events)
	}
}

// stopBound is the time from SIGINT to the exit the test accepts: the
// aim is under a second, and the bound is generous for a busy machine.
const stopBound = 5 * time.Second
