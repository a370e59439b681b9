package sweep

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Progress reports a running sweep on one writer (stderr): as a line
// rewritten in place on a terminal (live), or as a new line every few
// seconds for logs. A nil *Progress reports nothing.
type Progress struct {
	w     io.Writer
	live  bool
	every time.Duration

	grid, points, resumed, runs int // grid size, this run's points (resumed ones included), storms to run
	pointsDone, runsDone        atomic.Int64
	started                     time.Time
	stop                        chan struct{}
	wg                          sync.WaitGroup
}

// Report intervals: often enough to look alive on a terminal, rarely
// enough not to flood a CI log.
const (
	LiveEvery  = 200 * time.Millisecond
	PlainEvery = 5 * time.Second
)

// NewProgress reports to w, live (rewriting one line with \r) or plain.
func NewProgress(w io.Writer, live bool) *Progress {
	every := PlainEvery
	if live {
		every = LiveEvery
	}
	return &Progress{w: w, live: live, every: every}
}

func (p *Progress) begin(grid, points, resumed, runs int) {
	if p == nil {
		return
	}
	p.grid, p.points, p.resumed, p.runs = grid, points, resumed, runs
	p.started = time.Now()
	p.stop = make(chan struct{})
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		tick := time.NewTicker(p.every)
		defer tick.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-tick.C:
				p.print(false)
			}
		}
	}()
}

func (p *Progress) runDone() {
	if p != nil {
		p.runsDone.Add(1)
	}
}

func (p *Progress) pointDone() {
	if p != nil {
		p.pointsDone.Add(1)
	}
}

func (p *Progress) end() {
	if p == nil || p.stop == nil {
		return
	}
	close(p.stop)
	p.wg.Wait()
	p.print(true)
}

// print writes the progress line; the last one ends with a newline.
func (p *Progress) print(last bool) {
	points, runs := p.pointsDone.Load()+int64(p.resumed), p.runsDone.Load()
	elapsed := time.Since(p.started)
	var notes []string
	if p.resumed > 0 {
		notes = append(notes, fmt.Sprintf("%d resumed", p.resumed))
	}
	if p.points < p.grid {
		notes = append(notes, fmt.Sprintf("shard of %d", p.grid))
	}
	line := fmt.Sprintf("sweep: %d/%d points", points, p.points)
	if len(notes) > 0 {
		line += " (" + strings.Join(notes, ", ") + ")"
	}
	line += fmt.Sprintf(", %d/%d runs, %s", runs, p.runs, elapsed.Round(100*time.Millisecond))
	if !last && runs > 0 && runs < int64(p.runs) {
		left := time.Duration(float64(elapsed) / float64(runs) * float64(int64(p.runs)-runs))
		line += fmt.Sprintf(", about %s left", left.Round(time.Second))
	}
	switch {
	case p.live && last:
		fmt.Fprintf(p.w, "\r\033[K%s\n", line)
	case p.live:
		fmt.Fprintf(p.w, "\r\033[K%s", line)
	default:
		fmt.Fprintln(p.w, line)
	}
}
