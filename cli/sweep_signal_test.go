//go:build unix

package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSweepCtrlCSaysHowToResume sends the process SIGINT while a sweep
// runs: it must exit 130 with whole lines and the --resume command, and
// that command must finish the sweep into exactly what an uninterrupted
// run writes.
func TestSweepCtrlCSaysHowToResume(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "long.yaml")
	long := strings.Replace(smallSweep, "  admission.per_slot: {from: 1, to: 9, steps: 3}\n", "  admission.per_slot: {from: 1, to: 200, steps: 200}\n", 1)
	long = strings.Replace(long, "clients: 30", "clients: 200", 1)
	os.WriteFile(cfg, []byte(long), 0o644)
	whole := filepath.Join(t.TempDir(), "whole")
	if code, _, stderr := stormsim("sweep", "-c", cfg, "-o", whole, "--progress", "none", "--charts=false"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	dir := filepath.Join(t.TempDir(), "cut")
	args := []string{"sweep", "-c", cfg, "-o", dir, "--progress", "none", "--charts=false", "--workers", "1"}
	points := filepath.Join(dir, "sweep.ndjson")
	o := interruptOnceWritten(t, args, points)
	want := "stormsim sweep: interrupted: "
	tail := " of 400 points are in " + points + ", each line whole; continue with: stormsim " + strings.Join(args, " ") + " --resume\n"
	if o.code != ExitInterrupted || !strings.HasPrefix(o.stderr, want) || !strings.HasSuffix(o.stderr, tail) {
		t.Fatalf("exit %d, stderr %q; want exit 130 and %q...%q", o.code, o.stderr, want, tail)
	}
	if data, _ := os.ReadFile(points); len(data) == 0 || data[len(data)-1] != '\n' {
		t.Error("sweep.ndjson does not end with a whole line")
	}
	if code, _, stderr := stormsim(append(args, "--resume")...); code != ExitOK {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	got, want2 := readDir(t, dir), readDir(t, whole)
	for _, n := range []string{"sweep.ndjson", "sweep.csv", "sweep.json"} {
		if !bytes.Equal(got[n], want2[n]) {
			t.Errorf("%s after the resume differs from an uninterrupted sweep's", n)
		}
	}
}

// outcome is how an interrupted command ended.
type outcome struct {
	code   int
	stderr string
}

// interruptOnceWritten runs stormsim with args and sends the process
// SIGINT once file holds a whole line, when the command's handler is
// surely installed.
func interruptOnceWritten(t *testing.T, args []string, file string) outcome {
	t.Helper()
	done := make(chan outcome)
	go func() {
		code, _, stderr := stormsim(args...)
		done <- outcome{code, stderr}
	}()
	for {
		if data, _ := os.ReadFile(file); bytes.Contains(data, []byte("\n")) {
			break
		}
		select {
		case o := <-done:
			t.Fatalf("%s ended before it could be interrupted: exit %d %s", args[0], o.code, o.stderr)
		default:
		}
		time.Sleep(time.Millisecond)
	}
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	return <-done
}

// TestRunCtrlCStopsTheStorm sends SIGINT during a long storm (some 500 M
// attempts: 10,000 clients retrying every millisecond for one admission
// per 10 ms): it must stop within a few seconds, exit 130, say so in one
// line and leave no output directory.
func TestRunCtrlCStopsTheStorm(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "long.yaml")
	os.WriteFile(cfg, []byte("clients: 10000\nadmission: {kind: slots, slot: 10ms, per_slot: 1}\npolicies: [{name: none, min_gap: 1ms}]\n"), 0o644)
	out := filepath.Join(t.TempDir(), "out")
	type outcome struct {
		code           int
		stdout, stderr string
	}
	done := make(chan outcome)
	go func() {
		code, stdout, stderr := stormsim("run", "-c", cfg, "-o", out, "--progress", "none")
		done <- outcome{code, stdout, stderr}
	}()
	// The output directory exists once the run has started, its signal
	// handler installed.
	for {
		if _, err := os.Stat(out); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	sent := time.Now()
	var o outcome
	select {
	case o = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the run did not stop within 20 s of SIGINT")
	}
	want := "stormsim run: interrupted after "
	tail := "; nothing was written (a run has no --resume; the scenario's horizon: bounds how far it simulates)\n"
	if o.code != ExitInterrupted || o.stdout != "" || !strings.HasPrefix(o.stderr, want) || !strings.HasSuffix(o.stderr, tail) || strings.Count(o.stderr, "\n") != 1 {
		t.Errorf("exit %d, stdout %q, stderr %q", o.code, o.stdout, o.stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("an interrupted run left its output directory")
	}
	t.Logf("stopped %v after SIGINT", time.Since(sent).Round(time.Millisecond))
}

// longSolve is a solve long enough to interrupt: the seed model's
// admission.per_slot over 10 to 1000, 8 replications a probe.
var longSolve = strings.Replace(strings.Replace(seedSolve, "PEAK", "1000", 1), "min: 1, max: 500", "min: 10, max: 1000", 1) + "replications: 8\n"

// TestSolveCtrlCKeepsItsProbes sends SIGINT while a solve runs: it must
// exit 130 with the probes finished kept, each line whole, and the
// --resume command, which must finish the solve into exactly what an
// uninterrupted run writes.
func TestSolveCtrlCKeepsItsProbes(t *testing.T) {
	cfg := writeConfig(t, longSolve)
	whole := filepath.Join(t.TempDir(), "whole")
	if code, _, stderr := stormsim("solve", "-c", cfg, "-o", whole, "--progress", "none", "--charts=false"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	dir := filepath.Join(t.TempDir(), "cut")
	args := []string{"solve", "-c", cfg, "-o", dir, "--progress", "none", "--charts=false", "--workers", "1"}
	probes := filepath.Join(dir, "probes.ndjson")
	o := interruptOnceWritten(t, args, probes)
	want := "stormsim solve: interrupted: "
	tail := " probes are in " + probes + ", each line whole; continue with: stormsim " + strings.Join(args, " ") + " --resume\n"
	if o.code != ExitInterrupted || !strings.HasPrefix(o.stderr, want) || !strings.HasSuffix(o.stderr, tail) {
		t.Fatalf("exit %d, stderr %q; want exit 130 and %q...%q", o.code, o.stderr, want, tail)
	}
	if data, _ := os.ReadFile(probes); len(data) == 0 || data[len(data)-1] != '\n' {
		t.Error("probes.ndjson does not end with a whole line")
	}
	if _, err := os.Stat(filepath.Join(dir, "solve.json")); err == nil {
		t.Error("an interrupted solve wrote solve.json")
	}
	if code, _, stderr := stormsim(append(args, "--resume")...); code != ExitOK {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	got, want2 := readDir(t, dir), readDir(t, whole)
	for _, n := range []string{"probes.ndjson", "probes.json", "solve.json", "solve.csv"} {
		if !bytes.Equal(got[n], want2[n]) {
			t.Errorf("%s after the resume differs from an uninterrupted solve's", n)
		}
	}
}
