package sweep

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"stormsim/internal/human"
)

// Progress reports a sweep on one writer (stderr): as a line rewritten in
// place on a terminal (live), or as a new line every few seconds for logs.
// A nil *Progress reports nothing.
//
// The time left is the work left over the rate of work done so far, work
// counted in client-storms (each storm weighs its clients), so that an ETA
// holds when the grid's later points are larger than its first.
type Progress struct {
	w     io.Writer
	live  bool
	every time.Duration
	now   func() time.Time

	mu        sync.Mutex // one line at a time
	onScreen  bool       // a live line is waiting for its newline
	lastCheck time.Time
	checkSeen bool // a checking line was shown

	grid, points, resumed int
	storms, work          int64 // storms and client-storms to run
	pointsDone            atomic.Int64
	stormsDone, workDone  atomic.Int64
	started               time.Time
	stop                  chan struct{}
	wg                    sync.WaitGroup
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
	return &Progress{w: w, live: live, every: every, now: time.Now}
}

// Say writes one line of its own (an announcement), after the live line
// if one is showing.
func (p *Progress) Say(format string, args ...any) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.newline()
	fmt.Fprintf(p.w, format+"\n", args...)
}

// Checking reports the plan's check of its points, titled by what is
// checked: nothing for a check done within one report interval (a small
// grid), then a line now and then, and the last count.
func (p *Progress) Checking(title string, done, total int) {
	if p == nil {
		return
	}
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lastCheck.IsZero() {
		p.lastCheck = now
		return
	}
	if done == total && !p.checkSeen || done < total && now.Sub(p.lastCheck) < p.every {
		return
	}
	p.lastCheck, p.checkSeen = now, true
	line := fmt.Sprintf("%s; checking every point: %s/%s", title, human.Count(int64(done)), human.Count(int64(total)))
	p.show(line, done == total)
}

func (p *Progress) begin(grid, points, resumed int, storms, work int64) {
	if p == nil {
		return
	}
	p.grid, p.points, p.resumed, p.storms, p.work = grid, points, resumed, storms, work
	p.started = p.now()
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

// stormDone counts a finished storm of clients clients.
func (p *Progress) stormDone(clients int64) {
	if p != nil {
		p.stormsDone.Add(1)
		p.workDone.Add(clients)
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
	p.mu.Lock()
	defer p.mu.Unlock()
	p.show(p.line(last), last)
}

// line is the progress line: "sweep: 12/24 points (2 resumed), 36/72
// storms, 4s, about 8s left".
func (p *Progress) line(last bool) string {
	points, storms := p.pointsDone.Load()+int64(p.resumed), p.stormsDone.Load()
	elapsed := p.now().Sub(p.started)
	var notes []string
	if p.resumed > 0 {
		notes = append(notes, human.Count(int64(p.resumed))+" resumed")
	}
	if p.points < p.grid {
		notes = append(notes, "shard of "+human.Count(int64(p.grid)))
	}
	line := fmt.Sprintf("sweep: %s/%s points", human.Count(points), human.Count(int64(p.points)))
	if len(notes) > 0 {
		line += " (" + strings.Join(notes, ", ") + ")"
	}
	line += fmt.Sprintf(", %s/%s storms, %s", human.Count(storms), human.Count(p.storms), human.Duration(elapsed))
	if left, ok := p.left(elapsed); ok && !last {
		line += ", about " + human.Duration(left) + " left"
	}
	return line
}

// left is the time left at the rate of work so far; ok is false until
// there is a rate to go by.
func (p *Progress) left(elapsed time.Duration) (time.Duration, bool) {
	done := p.workDone.Load()
	if done <= 0 || done >= p.work || elapsed < time.Second {
		return 0, false
	}
	return time.Duration(float64(elapsed) * float64(p.work-done) / float64(done)), true
}

// show writes line: in place when live, with a newline when last or plain.
func (p *Progress) show(line string, last bool) {
	switch {
	case p.live:
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		p.onScreen = true
		if last {
			p.newline()
		}
	default:
		fmt.Fprintln(p.w, line)
	}
}

func (p *Progress) newline() {
	if p.onScreen {
		fmt.Fprintln(p.w)
		p.onScreen = false
	}
}
