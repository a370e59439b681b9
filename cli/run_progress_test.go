package cli

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"stormsim/sim"
)

func TestRunProgressLine(t *testing.T) {
	clock := time.Unix(1000, 0)
	p := &runProgress{now: func() time.Time { return clock }, running: map[int]sim.Progress{}, storms: 3, started: clock}
	clock = clock.Add(12 * time.Second)
	if got := p.line(); got != "run: 0/3 storms done, 12s" {
		t.Errorf("nothing reported yet: %q", got)
	}
	p.report(0, sim.Progress{Now: 192 * time.Second, Horizon: 24 * time.Hour, Attempts: 12_345_678, Connected: 4521, Clients: 10_000}, false)
	p.report(1, sim.Progress{Now: 300 * time.Second, Horizon: 24 * time.Hour, Attempts: 1, Connected: 9, Clients: 10_000}, false)
	p.report(2, sim.Progress{}, true)
	// Attempts and connections add up; the time is the storm furthest behind.
	want := "run: 1/3 storms done, 12s; running: simulated 192s of a 24h0m0s horizon, 12,345,679 attempts, 4,530/20,000 connected"
	if got := p.line(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	// A storm still placing its first attempts is said apart.
	p.report(3, sim.Progress{Horizon: 24 * time.Hour, Clients: 100_000_000, Placed: 1_234_567}, false)
	if got := p.line(); got != want+"; setting up: 1,234,567/100,000,000 clients placed" {
		t.Errorf("setting up: %q", got)
	}
	// A storm with a decision share runs again: which run is said, since
	// its simulated time starts again at each.
	q := &runProgress{now: func() time.Time { return clock }, running: map[int]sim.Progress{}, storms: 1, started: clock}
	q.report(0, sim.Progress{Now: 2 * time.Second, Horizon: 10 * time.Second, Attempts: 7, Connected: 3, Clients: 5, Pass: 2}, false)
	if got, want := q.line(), "run: 0/1 storms done, <1s; running: simulated 2s of a 10s horizon (run 2 of at most 16 of its storm: capacity.decision_share), 7 attempts, 3/5 connected"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestRunProgressWaitsThenReports pins that a run says nothing for its
// quiet time, then reports, and that a live line is ended with a newline.
func TestRunProgressWaitsThenReports(t *testing.T) {
	var b bytes.Buffer
	p := &runProgress{w: &b, live: true, every: time.Millisecond, quiet: 20 * time.Millisecond, now: time.Now, running: map[int]sim.Progress{}}
	p.begin(1)
	p.report(0, sim.Progress{Now: time.Second, Horizon: time.Hour, Attempts: 5, Connected: 1, Clients: 2}, false)
	p.mu.Lock()
	early := b.String()
	p.mu.Unlock()
	time.Sleep(60 * time.Millisecond)
	p.end()
	if early != "" {
		t.Errorf("reported before the quiet time: %q", early)
	}
	out := b.String()
	if !strings.HasPrefix(out, "\r\033[Krun: 0/1 storms done, ") || !strings.HasSuffix(out, "1/2 connected\n") {
		t.Errorf("output %q", out)
	}
	var none *runProgress
	none.begin(1)
	none.report(0, sim.Progress{}, true)
	none.end()
}

// TestRunSaysWhenTheHorizonStoppedIt pins the note on stderr for a storm
// its horizon cut before everyone was back (60 clients at 40 a second
// cannot all connect in half a second).
func TestRunSaysWhenTheHorizonStoppedIt(t *testing.T) {
	code, stdout, stderr := stormsim("run", "-c", ownConfigs[1], "--set", "horizon=500ms")
	re := regexp.MustCompile(`^stormsim: full stopped at its horizon, 500ms of simulated time, without converging \(unfinished\): (\d+) of 60 clients connected; a longer horizon \(the config's horizon:\) looks further\n$`)
	if code != ExitOK || !re.MatchString(withoutWarnings(stderr)) || !strings.Contains(stdout, "unfinished") {
		t.Errorf("exit %d, stderr %q, stdout\n%s", code, stderr, stdout)
	}
	if code, _, stderr := stormsim("run", "-c", ownConfigs[1]); code != ExitOK || withoutWarnings(stderr) != "" {
		t.Errorf("a storm that converges: exit %d, stderr %q", code, stderr)
	}
}
