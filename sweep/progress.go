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

// Progress reports a sweep's points, or a solve's probes, on one writer
// (stderr): as a line rewritten in place on a terminal (live), or as a
// new line every few seconds for logs. A nil *Progress reports nothing.
//
// The time left is the work left over the rate of work done so far, work
// counted in client-storms (each storm weighs its clients), so that an ETA
// holds when the grid's later points are larger than its first. A job
// whose size is known only as it goes (a solve's probes) revises its
// totals, and its line says they are estimates.
type Progress struct {
	w     io.Writer
	live  bool
	every time.Duration
	now   func() time.Time

	mu        sync.Mutex // one line at a time
	onScreen  bool       // a live line is waiting for its newline
	lastCheck time.Time
	checkSeen bool // a checking line was shown

	totals               Totals
	pointsDone           atomic.Int64
	stormsDone, workDone atomic.Int64
	started              time.Time
	stop                 chan struct{}
	wg                   sync.WaitGroup
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

// Totals are what a progress line counts towards.
type Totals struct {
	Title   string // what runs: "sweep", "solve"
	Unit    string // what it counts: "points", "probes"
	Units   int    // units this process runs, resumed ones included
	Whole   int    // units of the whole job (> Units for a shard)
	Resumed int    // units found done
	// Storms and Work are the storms and client-storms to run.
	Storms, Work int64
	// Estimated: Units, Storms and Work are estimates, revised as the
	// job goes (Revise).
	Estimated bool
}

// Begin starts reporting towards t, a line every report interval until
// End.
func (p *Progress) Begin(t Totals) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.totals = t
	p.mu.Unlock()
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

// Revise replaces an estimated job's totals: units to run in all
// (resumed ones included), and the storms and client-storms.
func (p *Progress) Revise(units int, storms, work int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.totals.Units, p.totals.Storms, p.totals.Work = units, storms, work
	p.mu.Unlock()
}

// StormDone counts a finished storm of clients clients.
func (p *Progress) StormDone(clients int64) {
	if p != nil {
		p.stormsDone.Add(1)
		p.workDone.Add(clients)
	}
}

// UnitDone counts a finished point or probe.
func (p *Progress) UnitDone() {
	if p != nil {
		p.pointsDone.Add(1)
	}
}

// End stops the reports after a last line.
func (p *Progress) End() {
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
// storms, 4s, about 8s left"; for estimated totals "solve: 9 of about 23
// probes, ...".
func (p *Progress) line(last bool) string {
	t := p.totals
	units, storms := p.pointsDone.Load()+int64(t.Resumed), p.stormsDone.Load()
	elapsed := p.now().Sub(p.started)
	var notes []string
	if t.Resumed > 0 {
		notes = append(notes, human.Count(int64(t.Resumed))+" resumed")
	}
	if t.Units < t.Whole {
		notes = append(notes, "shard of "+human.Count(int64(t.Whole)))
	}
	of := "/"
	if t.Estimated && !last {
		of = " of about "
	}
	line := fmt.Sprintf("%s: %s%s%s %s", t.Title, human.Count(units), of, human.Count(int64(max(t.Units, int(units)))), t.Unit)
	if last && t.Estimated {
		line = fmt.Sprintf("%s: %s %s", t.Title, human.Count(units), t.Unit)
	}
	if len(notes) > 0 {
		line += " (" + strings.Join(notes, ", ") + ")"
	}
	if last && t.Estimated {
		line += fmt.Sprintf(", %s storms, %s", human.Count(storms), human.Duration(elapsed))
		return line
	}
	line += fmt.Sprintf(", %s%s%s storms, %s", human.Count(storms), of, human.Count(max(t.Storms, storms)), human.Duration(elapsed))
	if left, ok := p.left(elapsed, t.Work); ok && !last {
		line += ", about " + human.Duration(left) + " left"
	}
	return line
}

// left is the time left at the rate of work so far; ok is false until
// there is a rate to go by.
func (p *Progress) left(elapsed time.Duration, work int64) (time.Duration, bool) {
	done := p.workDone.Load()
	if done <= 0 || done >= work || elapsed < time.Second {
		return 0, false
	}
	return time.Duration(float64(elapsed) * float64(work-done) / float64(done)), true
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
