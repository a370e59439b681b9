//go:build linux

package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"stormsim/internal/syncbuf"
)

// stopBound is the time from the signal to the exit that the interrupt
// tests accept: stormsim aims at under a second (InterruptGrace is the
// most a command that does not stop on its own gets), and the bound is
// generous so that a busy machine does not fail them. Each test logs the
// time it measured.
const stopBound = 5 * time.Second

// stormsimProcess is a stormsim process the test started (the test binary
// as stormsim, see TestMain), with its output collected.
type stormsimProcess struct {
	cmd            *exec.Cmd
	stdout, stderr *syncbuf.Buffer
	exited         chan struct{}
}

// startStormsim starts stormsim with args; stdout, if set, replaces the
// collected standard output.
func startStormsim(t *testing.T, stdout *os.File, args ...string) *stormsimProcess {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := &stormsimProcess{cmd: exec.Command(exe, args...), stdout: &syncbuf.Buffer{}, stderr: &syncbuf.Buffer{}, exited: make(chan struct{})}
	p.cmd.Env = batchEnv()
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if stdout != nil {
		p.cmd.Stdout = stdout
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.exited
	})
	return p
}

// waitUntil waits for ready to hold, failing the test if the process ends
// first or a minute passes.
func (p *stormsimProcess) waitUntil(t *testing.T, what string, ready func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !ready() {
		select {
		case <-p.exited:
			t.Fatalf("stormsim ended before %s: exit %d, stdout %q, stderr %q", what, p.cmd.ProcessState.ExitCode(), p.stdout.String(), p.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after a minute: stderr %q", what, p.stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// busy reports whether the process has used at least d of CPU: past its
// start, and so past installing its signal handlers, and at work.
func (p *stormsimProcess) busy(d time.Duration) func() bool {
	return func() bool {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
		if err != nil {
			return false
		}
		// Fields 14 and 15, after the command in parentheses, are user and
		// system time in clock ticks (100 a second on Linux).
		_, rest, _ := strings.Cut(string(data), ") ")
		f := strings.Fields(rest)
		if len(f) < 13 {
			return false
		}
		user, _ := strconv.ParseInt(f[11], 10, 64)
		sys, _ := strconv.ParseInt(f[12], 10, 64)
		return time.Duration(user+sys)*10*time.Millisecond >= d
	}
}

// interrupt sends sig and returns the time until the process ended, its
// exit code and its output.
func (p *stormsimProcess) interrupt(t *testing.T, sig os.Signal) (took time.Duration, code int, stdout, stderr string) {
	t.Helper()
	sent := time.Now()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.exited:
	case <-time.After(time.Minute):
		t.Fatalf("stormsim did not end within a minute of %v: stderr %q", sig, p.stderr.String())
	}
	took = time.Since(sent)
	t.Logf("%v: ended %v after the signal (bound %v), exit %d", sig, took.Round(time.Millisecond), stopBound, p.cmd.ProcessState.ExitCode())
	return took, p.cmd.ProcessState.ExitCode(), p.stdout.String(), p.stderr.String()
}

// checkInterrupted fails the test unless the process exited 130 within
// stopBound with one line on stderr that starts with want.
func checkInterrupted(t *testing.T, took time.Duration, code int, stderr, want string) {
	t.Helper()
	if code != ExitInterrupted || took > stopBound || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d %v after the signal, stderr %q; want exit 130 within %v and one line starting %q", code, took, stderr, stopBound, want)
	}
}

// longStorm is some 500 M attempts: 10,000 clients retrying every
// millisecond for one admission per 10 ms.
const longStorm = "clients: 10000\nadmission: {kind: slots, slot: 10ms, per_slot: 1}\npolicies: [{name: none, min_gap: 1ms}]\n"

// TestEveryCommandStopsOnASignal sends each command SIGINT or SIGTERM
// while it works, in a real process, and wants exit 130 within stopBound,
// one line on stderr, and nothing half-written.
func TestEveryCommandStopsOnASignal(t *testing.T) {
	cfg := writeConfig(t, longStorm)
	quick := writeConfig(t, checkConfig)
	grid := writeConfig(t, strings.Replace(smallSweep, "  admission.per_slot: {from: 1, to: 9, steps: 3}\n",
		"  admission.per_slot: {from: 1, to: 1000, steps: 1000}\n  admission.slot: {from: 1ms, to: 1s, steps: 500}\n", 1))
	sweepCfg := writeConfig(t, strings.Replace(strings.Replace(smallSweep, "  admission.per_slot: {from: 1, to: 9, steps: 3}\n",
		"  admission.per_slot: {from: 1, to: 400, steps: 400}\n", 1), "clients: 30", "clients: 400", 1))

	t.Run("run", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out")
		p := startStormsim(t, nil, "run", "-c", cfg, "-o", out, "--progress", "none")
		p.waitUntil(t, "the storm running", p.busy(300*time.Millisecond))
		took, code, stdout, stderr := p.interrupt(t, os.Interrupt)
		checkInterrupted(t, took, code, stderr, "stormsim run: interrupted after ")
		if _, err := os.Stat(out); stdout != "" || err == nil {
			t.Errorf("stdout %q, output directory left: %v", stdout, err == nil)
		}
	})
	// A storm of 6 x 10^7 clients spends seconds placing their first
	// attempts before it processes any: the stop must not wait for the
	// set-up to end (at 10^8 clients it took tens of seconds).
	t.Run("run during set-up", func(t *testing.T) {
		big := writeConfig(t, "clients: 60000000\ninitial_jitter: 10s\nhorizon: 1h\n"+
			"admission: {kind: token_bucket, rate: 500, burst: 100}\npolicies: [{name: full, base: 1s, cap: 30s}]\n")
		out := filepath.Join(t.TempDir(), "out")
		p := startStormsim(t, nil, "run", "-c", big, "-o", out, "--progress", "plain", "--max-time", "0")
		p.waitUntil(t, "a progress report", func() bool { return strings.Contains(p.stderr.String(), " storms done") })
		took, code, stdout, stderr := p.interrupt(t, os.Interrupt)
		t.Logf("stderr:\n%s", stderr)
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		last := lines[len(lines)-1]
		checkInterrupted(t, took, code, last+"\n", "stormsim run: interrupted after ")
		if len(lines) < 2 || !strings.Contains(lines[len(lines)-2], "; setting up: ") {
			t.Errorf("the last report before the signal was not the set-up's, so the test did not stop a set-up:\n%s", stderr)
		}
		if _, err := os.Stat(out); stdout != "" || err == nil {
			t.Errorf("stdout %q, output directory left: %v", stdout, err == nil)
		}
	})
	t.Run("solve", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "out")
		p := startStormsim(t, nil, "solve", "-c", writeConfig(t, longSolve), "-o", dir, "--progress", "none", "--charts=false", "--workers", "1")
		probes := filepath.Join(dir, "probes.ndjson")
		p.waitUntil(t, "a probe written", func() bool {
			data, _ := os.ReadFile(probes)
			return bytes.Contains(data, []byte("\n"))
		})
		took, code, _, stderr := p.interrupt(t, syscall.SIGTERM)
		checkInterrupted(t, took, code, stderr, "stormsim solve: interrupted: ")
		if data, _ := os.ReadFile(probes); len(data) == 0 || data[len(data)-1] != '\n' {
			t.Error("probes.ndjson does not end with a whole line")
		}
		if _, err := os.Stat(filepath.Join(dir, "solve.json")); err == nil {
			t.Error("an interrupted solve wrote solve.json")
		}
	})
	t.Run("check", func(t *testing.T) {
		p := startStormsim(t, nil, "check", quick, cfg, "--check", "attempts > 0")
		p.waitUntil(t, "the second config running", func() bool { return strings.Contains(p.stdout.String(), "PASS") && p.busy(300*time.Millisecond)() })
		took, code, _, stderr := p.interrupt(t, syscall.SIGTERM)
		checkInterrupted(t, took, code, stderr, "stormsim check: interrupted while running "+cfg+"; 2 checks passed and 0 failed before")
	})
	t.Run("sweep", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "out")
		p := startStormsim(t, nil, "sweep", "-c", sweepCfg, "-o", dir, "--progress", "none", "--charts=false", "--workers", "1")
		p.waitUntil(t, "a point written", func() bool {
			data, _ := os.ReadFile(filepath.Join(dir, "sweep.ndjson"))
			return bytes.Contains(data, []byte("\n"))
		})
		took, code, _, stderr := p.interrupt(t, os.Interrupt)
		checkInterrupted(t, took, code, stderr, "stormsim sweep: interrupted: ")
		if data, _ := os.ReadFile(filepath.Join(dir, "sweep.ndjson")); len(data) == 0 || data[len(data)-1] != '\n' {
			t.Error("sweep.ndjson does not end with a whole line")
		}
	})
	t.Run("validate", func(t *testing.T) {
		p := startStormsim(t, nil, "validate", "-c", grid)
		p.waitUntil(t, "the grid being checked", p.busy(300*time.Millisecond))
		took, code, stdout, stderr := p.interrupt(t, os.Interrupt)
		checkInterrupted(t, took, code, stderr, "stormsim validate: interrupted while checking the grid (")
		if stdout != "" {
			t.Errorf("stdout %q", stdout)
		}
	})
	// merge and plot block reading a FIFO nobody writes: they do not
	// stop on their own, and the process ends them after InterruptGrace.
	t.Run("merge", func(t *testing.T) {
		shard := filepath.Join(t.TempDir(), "shard")
		if code, _, stderr := stormsim("sweep", "-c", writeConfig(t, smallSweep), "-o", shard, "--shard", "0/2", "--progress", "none"); code != ExitOK {
			t.Fatalf("shard: exit %d: %s", code, stderr)
		}
		fifo := replaceWithFIFO(t, filepath.Join(shard, "sweep.ndjson"))
		out := filepath.Join(t.TempDir(), "merged")
		p := startStormsim(t, nil, "merge", shard, "-o", out)
		w := openFIFO(t, p, fifo)
		defer w.Close()
		took, code, _, stderr := p.interrupt(t, os.Interrupt)
		checkInterrupted(t, took, code, stderr, "stormsim merge: interrupted; ended ")
		if left, _ := filepath.Glob(filepath.Join(out, "sweep.*")); len(left) != 0 {
			t.Errorf("a merge stopped before it wrote left %v", left)
		}
	})
	t.Run("plot", func(t *testing.T) {
		fifo := filepath.Join(t.TempDir(), "result.json")
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Fatal(err)
		}
		p := startStormsim(t, nil, "plot", fifo, "-o", filepath.Join(t.TempDir(), "charts"))
		w := openFIFO(t, p, fifo)
		defer w.Close()
		took, code, _, stderr := p.interrupt(t, syscall.SIGTERM)
		checkInterrupted(t, took, code, stderr, "stormsim plot: interrupted; ended ")
	})
	// policies blocks writing to a full pipe nobody reads.
	t.Run("policies", func(t *testing.T) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		fillPipe(t, w)
		p := startStormsim(t, w, "policies")
		w.Close()
		p.waitUntil(t, "policies blocked writing", p.inSyscall(syscall.SYS_WRITE))
		took, code, _, stderr := p.interrupt(t, os.Interrupt)
		checkInterrupted(t, took, code, stderr, "stormsim policies: interrupted; ended ")
	})
}

// replaceWithFIFO replaces the file at path with a FIFO.
func replaceWithFIFO(t *testing.T, path string) string {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// openFIFO opens fifo for writing, which returns once p has opened it to
// read: p is then blocked reading it.
func openFIFO(t *testing.T, p *stormsimProcess, fifo string) *os.File {
	t.Helper()
	opened := make(chan *os.File, 1)
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			f = nil
		}
		opened <- f
	}()
	select {
	case f := <-opened:
		if f == nil {
			t.Fatal("cannot open the FIFO")
		}
		return f
	case <-p.exited:
		t.Fatalf("stormsim ended before reading the FIFO: exit %d, stderr %q", p.cmd.ProcessState.ExitCode(), p.stderr.String())
	case <-time.After(time.Minute):
		t.Fatal("stormsim did not open the FIFO within a minute")
	}
	return nil
}

// fillPipe writes to w until its buffer is full.
func fillPipe(t *testing.T, w *os.File) {
	t.Helper()
	fd := int(w.Fd())
	if err := syscall.SetNonblock(fd, true); err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 4096)
	for {
		if _, err := syscall.Write(fd, chunk); err != nil {
			if errors.Is(err, syscall.EAGAIN) {
				break
			}
			t.Fatal(err)
		}
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		t.Fatal(err)
	}
}

// inSyscall reports whether one of p's threads is in system call nr.
func (p *stormsimProcess) inSyscall(nr int) func() bool {
	return func() bool {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/syscall", p.cmd.Process.Pid))
		for _, task := range tasks {
			data, err := os.ReadFile(task)
			if err == nil && strings.HasPrefix(string(data), strconv.Itoa(nr)+" ") {
				return true
			}
		}
		return false
	}
}
