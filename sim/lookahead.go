package sim

// lookahead draws, on a second goroutine, the rtt of the next attempt of
// every client in the wheel's next bucket while the engine runs the
// current one: the costliest draw of a storm with network latency moves
// to another core. Draws are pure functions of (seed, client, attempt),
// so a draw made ahead is the one the engine would make; events that
// arrive in the bucket after the look began, or whose look found nothing,
// are drawn when they run. It then sorts the events it drew for, so that
// the engine only sorts those that came later and merges the two.
type lookahead struct {
	on   bool
	min  int // the smallest bucket worth handing over
	st   *storm
	jobs chan []lookJob
	done chan struct{}
	busy bool
	next []lookJob // reused between looks

	offBits int         // the engine's: how events are sorted
	bucket  int64       // the ring bucket of the last look
	n       int         // how many of its events it took
	sorted  []paidEvent // those events sorted by time (read after wait)
	scratch [2][]paidEvent
	radix   radix // the sort's counts, the second goroutine's own
}

// lookJob is the first n events of one chunk.
type lookJob struct {
	ch *chunk[paidEvent]
	n  int
}

// maxSortAhead is the largest bucket sorted ahead: the copies it takes
// stay within a storm's fixed overhead (2 x 1.25 x 2^16 events of 20 bytes,
// 3.3 MB), whereas a bucket can hold nearly every client (everyone refused
// at once retries together).
const maxSortAhead = 1 << 16

// minLook is the smallest bucket worth handing over: below it the hand-over
// costs more than the draws.
const minLook = 64

// start starts the drawing goroutine for st, to look at buckets of at
// least min events.
func (l *lookahead) start(st *storm, min, offBits int) {
	l.on, l.st, l.min, l.offBits = true, st, min, offBits
	l.jobs, l.done = make(chan []lookJob), make(chan struct{})
	go func() {
		for jobs := range l.jobs {
			l.look(jobs)
			l.done <- struct{}{}
		}
	}()
}

// look draws the next rtt of every event of jobs and, when asked to
// (l.n > 0), sorts them: the draw loop also takes the digit counts, and
// the first pass reads the chunks, so the events are read once before
// the scatter.
func (l *lookahead) look(jobs []lookJob) {
	st, sort := l.st, l.n > 0
	if sort {
		sort = l.n >= 64
		l.radix.reset(l.offBits)
	}
	for _, j := range jobs {
		evs := j.ch.events[:j.n]
		for i := range evs {
			evs[i].ahead = st.aheadRTT(evs[i].client, evs[i].attempts)
		}
		if sort {
			countOffsets(&l.radix, evs)
		}
	}
	switch {
	case l.n == 0:
	case !sort || !l.radix.plan(jobs[0].ch.events[0].off):
		k := 0
		for _, j := range jobs {
			k += copy(l.scratch[0][k:l.n], j.ch.events[:j.n])
		}
		l.sorted = insertionSort(l.scratch[0][:k])
	default:
		for _, j := range jobs {
			scatter(&l.radix, l.radix.order[0], j.ch.events[:j.n], l.scratch[0][:l.n])
		}
		l.sorted = finishPasses(&l.radix, l.scratch[0][:l.n], l.scratch[1][:l.n])
	}
}

// begin starts drawing for the n events now in ring bucket bi's chunks (a
// bucket of the engine's kind, which is paidEvent whenever the lookahead
// is on). The engine goes on appending to the bucket's last chunk
// meanwhile, beyond the events handed over.
func (l *lookahead) begin(bi int64, chunks any, n int) {
	if !l.on || n < l.min {
		return
	}
	l.next = l.next[:0]
	for i, ch := range chunks.([]*chunk[paidEvent]) {
		l.next = append(l.next, lookJob{ch: ch, n: chunkFill(n, i)})
	}
	l.bucket, l.n, l.busy = bi, n, true
	if n > maxSortAhead {
		l.n = 0 // drawn ahead, sorted by the engine
	} else if cap(l.scratch[0]) < n {
		l.scratch[0], l.scratch[1] = make([]paidEvent, n, n+n/4), make([]paidEvent, n, n+n/4)
	}
	l.jobs <- l.next
}

// sortedFor returns the sorted events of the last look if it was at ring
// bucket bi and is done, with how many of the bucket's events they are.
func (l *lookahead) sortedFor(bi int64) ([]paidEvent, bool) {
	if !l.on || l.n == 0 || l.bucket != bi {
		return nil, false
	}
	return l.sorted, true
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
