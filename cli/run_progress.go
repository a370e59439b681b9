package cli

import (
	"fmt"
	"io"
	"sync"
	"time"

	"stormsim/internal/human"
	"stormsim/sim"
)

// Run progress: a run says nothing for its first RunQuietFor (most runs
// end by then), then reports on stderr as a sweep does, in place on a
// terminal (every LiveEvery) or a line every PlainEvery for logs.
const (
	RunQuietFor   = 2 * time.Second
	RunLiveEvery  = 200 * time.Millisecond
	RunPlainEvery = 5 * time.Second
)

// runProgress reports the storms of one run: how many are done and where
// the running ones stand in simulated time, attempts and connections.
type runProgress struct {
	w     io.Writer
	live  bool
	every time.Duration
	quiet time.Duration
	now   func() time.Time

	mu       sync.Mutex
	storms   int
	done     int
	running  map[int]sim.Progress
	started  time.Time
	onScreen bool
	stop     chan struct{}
	wg       sync.WaitGroup
}

// newRunProgress reports on w in the --progress mode (auto, plain or
// none: nil).
func newRunProgress(e *env, cmd, mode string) (*runProgress, error) {
	p := &runProgress{w: e.stderr, every: RunPlainEvery, quiet: RunQuietFor, now: time.Now, running: map[int]sim.Progress{}}
	switch mode {
	case "auto":
		p.live = isTerminal(e.stderr)
	case "plain":
	case "none":
		return nil, nil
	default:
		return nil, usageErrorf("stormsim %s: --progress must be auto, plain or none (got %q)", cmd, mode)
	}
	if p.live {
		p.every = RunLiveEvery
	}
	return p, nil
}

func (p *runProgress) begin(storms int) {
	if p == nil {
		return
	}
	p.storms, p.started = storms, p.now()
	p.stop = make(chan struct{})
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		select {
		case <-time.After(p.quiet):
		case <-p.stop:
			return
		}
		p.print()
		tick := time.NewTicker(p.every)
		defer tick.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-tick.C:
				p.print()
			}
		}
	}()
}

// report is runner.Options.Progress.
func (p *runProgress) report(storm int, pr sim.Progress, finished bool) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if finished {
		delete(p.running, storm)
		p.done++
		return
	}
	p.running[storm] = pr
}

// end stops the reports; a line left on a terminal gets its newline.
func (p *runProgress) end() {
	if p == nil || p.stop == nil {
		return
	}
	close(p.stop)
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.onScreen {
		fmt.Fprintln(p.w)
		p.onScreen = false
	}
}

func (p *runProgress) print() {
	p.mu.Lock()
	defer p.mu.Unlock()
	line := p.line()
	if p.live {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		p.onScreen = true
		return
	}
	fmt.Fprintln(p.w, line)
}

// line is "run: 1/2 storms done, 12s; running: simulated 3m12s of 24h,
// 12,345,678 attempts, 4,521/10,000 connected". With several storms
// running, attempts and connections add up and the simulated time is the
// one furthest behind. Storms still placing their clients' first
// attempts are said apart: "setting up: 1,234,567/100,000,000 clients
// placed".
func (p *runProgress) line() string {
	line := fmt.Sprintf("run: %d/%d storms done, %s", p.done, p.storms, human.Duration(p.now().Sub(p.started)))
	var attempts, connected, clients, placed, placing int64
	first := true
	var behind sim.Progress
	for _, pr := range p.running {
		if pr.Attempts == 0 && pr.Placed < pr.Clients {
			placed += int64(pr.Placed)
			placing += int64(pr.Clients)
			continue
		}
		attempts += pr.Attempts
		connected += pr.Connected
		clients += int64(pr.Clients)
		if first || pr.Now < behind.Now {
			behind, first = pr, false
		}
	}
	if !first {
		line += fmt.Sprintf("; running: simulated %s of a %s horizon", human.Millis(ms(behind.Now)), human.Millis(ms(behind.Horizon)))
		if behind.Pass > 0 {
			line += fmt.Sprintf(" (run %d of at most %d of its storm: capacity.decision_share)", behind.Pass, sim.MaxSharePasses)
		}
		line += fmt.Sprintf(", %s attempts, %s/%s connected", human.Count(attempts), human.Count(connected), human.Count(clients))
	}
	if placing > 0 {
		line += fmt.Sprintf("; setting up: %s/%s clients placed", human.Count(placed), human.Count(placing))
	}
	return line
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
