package sim

// lookahead draws, on a second goroutine, the rtt of the next attempt of
// every client in the wheel's next bucket while the engine runs the
// current one: the costliest draw of a storm with network latency moves
// to another core. Draws are pure functions of (seed, client, attempt),
// so a draw made ahead is the one the engine would make; events that
// arrive in the bucket after the look began, or whose look found nothing,
// are drawn when they run.
type lookahead struct {
	on   bool
	min  int // the smallest bucket worth handing over
	st   *storm
	jobs chan []lookJob
	done chan struct{}
	busy bool
	next []lookJob // reused between looks
}

// lookJob is the first n events of one chunk.
type lookJob struct {
	ch *chunk[paidEvent]
	n  int
}

// minLook is the smallest bucket worth handing over: below it the hand-over
// costs more than the draws.
const minLook = 64

// start starts the drawing goroutine for st, to look at buckets of at
// least min events.
func (l *lookahead) start(st *storm, min int) {
	l.on, l.st, l.min = true, st, min
	l.jobs, l.done = make(chan []lookJob), make(chan struct{})
	go func() {
		for jobs := range l.jobs {
			for _, j := range jobs {
				for i := range j.ch.events[:j.n] {
					ev := &j.ch.events[i]
					ev.ahead = st.aheadRTT(ev.client, ev.attempts)
				}
			}
			l.done <- struct{}{}
		}
	}()
}

// begin starts drawing for the n events now in chunks (a bucket of the
// engine's kind, which is paidEvent whenever the lookahead is on). The
// engine goes on appending to the bucket's last chunk meanwhile, beyond
// the events handed over.
func (l *lookahead) begin(chunks any, n int) {
	if !l.on || n < l.min {
		return
	}
	l.next = l.next[:0]
	for _, ch := range chunks.([]*chunk[paidEvent]) {
		l.next = append(l.next, lookJob{ch: ch, n: ch.n})
	}
	l.busy = true
	l.jobs <- l.next
}

// wait returns when the draws begun last are made, and their events may
// be read.
func (l *lookahead) wait() {
	if l.busy {
		<-l.done
		l.busy = false
	}
}

func (l *lookahead) stop() {
	l.wait()
	close(l.jobs)
}
