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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"stormsim/config"
	"stormsim/internal/pgtest"
	"stormsim/models"
)

// The short integration run (30 clients, one real storm) checks the
// report's agreements with these tolerances: total attempts within
// AttemptsTolerance of the simulated mean; the time until the last client
// is back (one client's draws decide it, so one real run varies as much as
// the model's runs do) inside the simulated spread, the min-max of the
// replications; attempts and accepts per window inside the simulated
// spread (the report's criterion: all but SeriesComparison.AllowedOutside
// windows, 1 for 200 replications). Each of these fails for an exact model
// now and then by construction (the spread 2/201 of the time, the series
// criterion under 5%); with the 95% interval for the last reconnect and
// 100 replications, 2 short runs in 23 missed one here. So a miss is
// logged and the whole storm run once more, fresh; only a second miss
// fails the test (well under 1 in 100 for an exact model; a model that is
// off misses both). The lab checks and the outputs must hold every time.
const shortReps = 200

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
		gatewayOnce.bin, gatewayOnce.err = buildGateway(context.Background(), dir)
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
		stormsimOnce.bin, stormsimOnce.err = buildCommand(context.Background(), dir, "stormsim")
	})
	if stormsimOnce.err != nil {
		t.Fatal(stormsimOnce.err)
	}
	return stormsimOnce.bin
}

// shortLabSets turn the seed lab into 30 clients with gw-b's bucket scaled
// alike (40/s and burst 10 per 60 devices: 20/s, burst 5).
var shortLabSets = []string{"clients=30", "admission={kind: token_bucket, rate: 20, burst: 5, retry_after: 1s}"}

// shortLab is that scenario, for the tests that call Run in process.
func shortLab(t *testing.T) *config.Document {
	t.Helper()
	data, err := os.ReadFile("../configs/seed-lab.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := config.ParseDocument("seed-lab.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range shortLabSets {
		if err := doc.SetArg(set); err != nil {
			t.Fatal(err)
		}
	}
	return doc
}

// TestCalibrateShortLab runs the whole calibration, `stormsim calibrate` as
// a user runs it, against real PostgreSQL and real gateway processes: the
// seed lab's checks must hold on the real run, and the calibrated model
// must agree with it.
func TestCalibrateShortLab(t *testing.T) {
	misses := calibrateShortLab(t)
	if len(misses) == 0 {
		return
	}
	t.Logf("first run missed the agreement, running the storm again:\n%s", strings.Join(misses, "\n"))
	for _, m := range calibrateShortLab(t) {
		t.Error(m)
	}
}

// calibrateShortLab runs the short calibration, checks the lab and the outputs
// (errors on t) and returns the calibrated model's missed agreements.
func calibrateShortLab(t *testing.T) (misses []string) {
	url := pgtest.URL(t)
	out := t.TempDir()
	args := []string{"calibrate", "-c", "../configs/seed-lab.yaml", "-o", out, "--runs", "1",
		"--replications", strconv.Itoa(shortReps), "--database-url", url, "--gateway-bin", gatewayBinary(t), "--timeout", "1m"}
	for _, set := range shortLabSets {
		args = append(args, "--set", set)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, stormsimBinary(t), args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) } // lets it stop its gateways
	cmd.WaitDelay = 10 * time.Second
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) { // 1: a check or agreement failed, judged below
		t.Fatalf("stormsim calibrate: %v\n%s", err, stderr.String())
	}
	var rep Report
	data, err := os.ReadFile(filepath.Join(out, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rep); err != nil || len(rep.Real) != 1 || len(rep.Simulations) == 0 {
		t.Fatalf("%s unreadable: %v", ReportFile, err)
	}
	var table strings.Builder
	rep.WriteTable(&table)
	t.Log("\n" + table.String())

	for _, c := range rep.Checks {
		if !c.Pass {
			t.Errorf("lab check %q: expected %s, observed %s", c.Name, c.Expected, c.Observed)
		}
	}
	cal := rep.Simulations[0]
	if cal.Label != LabelCalibrated {
		t.Fatalf("first simulation is %s", cal.Label)
	}
	for _, m := range cal.Metrics {
		switch m.Metric {
		case "attempts":
			if !*m.Pass {
				misses = append(misses, fmt.Sprintf("attempts: sim mean %.1f vs real %.0f (%+.1f%%), want within %.0f%%",
					m.SimMean, m.Real, 100*m.RelError, 100*AttemptsTolerance))
			}
		case "convergence_ms":
			if m.Real < m.SimMin || m.Real > m.SimMax {
				misses = append(misses, fmt.Sprintf("last client back after %.0f ms, outside the simulated spread [%.0f, %.0f] ms",
					m.Real, m.SimMin, m.SimMax))
			}
		}
	}
	for _, c := range cal.Series {
		if c.Pass != nil && !*c.Pass {
			misses = append(misses, fmt.Sprintf("%s per window: %d of %d windows outside the simulated spread (allowed %d)\nreal %v\nmin  %v\nmax  %v",
				c.Series, c.Windows-c.WindowsInsideEnvelope, c.Windows, c.AllowedOutside, c.Real, c.SimMin, c.SimMax))
		}
	}

	// The outputs: the record holds the storm and the harness's signals,
	// the calibrated config loads, the charts exist.
	events := recordEvents(t, filepath.Join(out, RecordFile))
	if events["attempt"] < int(rep.Real[0].Crash.Attempts) || events["harness"] < 2 || events["run"] != 1 || events["gateway"] < 5 {
		t.Errorf("record events %v", events)
	}
	if c, err := config.Load(filepath.Join(out, CalibratedFile), nil); err != nil || c.Network == nil || c.Capacity == nil || c.Capacity.Decide != models.DecideOnArrival {
		t.Errorf("%s does not load with the fitted capacity and network: %v", CalibratedFile, err)
	}
	for _, name := range []string{"attempts.png", "connected.png", "reclaim.png", "band-attempts.png", "band-accepts.png"} {
		if _, err := os.Stat(filepath.Join(out, ChartsDir, name)); err != nil {
			t.Errorf("chart: %v", err)
		}
	}
	return misses
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
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
	s, err := shortLab(t).Scenario()
	if err != nil {
		t.Fatal(err)
	}
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
	for !strings.Contains(readFile(filepath.Join(out, "logs", "run-1", gatewaySurvivor+".log")), `"listening"`) {
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
	if after := calibSchemas(t, url); len(after) > len(before) {
		t.Errorf("schemas left: before %v, after %v", before, after)
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

// TestUnreachableDatabase: a closed port is a one-line error within the
// connect timeout, not a hang; a remote host is refused before connecting.
func TestUnreachableDatabase(t *testing.T) {
	port, err := freeLoopbackPort()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		url, want string
	}{
		{"postgres://postgres@127.0.0.1:" + strconv.Itoa(port) + "/x?sslmode=disable", "is not reachable"},
		{"postgres://postgres@db.example.com/x", "not loopback"},
	}
	for _, c := range cases {
		began := time.Now()
		_, err := OpenDatabase(context.Background(), c.url)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err = %v, want one line with %q", c.url, err, c.want)
		}
		if took := time.Since(began); took > dbConnectTimeout+time.Second {
			t.Errorf("%s: took %v", c.url, took)
		}
	}
}

// TestThrowawayCluster starts and removes a cluster of its own (skipped
// where PostgreSQL's server binaries are not installed: the cluster is the
// fallback, not a requirement).
func TestThrowawayCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster")
	}
	if _, err := postgresBinDir(); err != nil {
		t.Skip(err)
	}
	if _, err := clusterUser(); err != nil {
		t.Skip(err)
	}
	t.Setenv("DATABASE_URL", "")
	db, err := OpenDatabase(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if db.Source != "throwaway cluster" || checkLoopbackURL(db.URL) != nil {
		t.Errorf("database %+v", db)
	}
	if err := ping(context.Background(), db.URL); err != nil {
		t.Errorf("cluster does not answer: %v", err)
	}
	dir := db.cluster.dir
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("cluster directory %s left: %v", dir, err)
	}
	if err := ping(context.Background(), db.URL); err == nil {
		t.Error("cluster still answers after Close")
	}
}
