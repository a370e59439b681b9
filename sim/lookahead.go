package sim

// lookahead draws, on a second goroutine, the rtt of the next attempt of
// every client in the wheel's next bucket while the engine runs the
// current one: the costliest draw of a storm with network latency moves
// to another core. Draws are pure functions of (seed, client, attempt),
// so a draw made ahead is the one the engine would make; events that
// arrive in the bucket after the look began, or whose look found nothing,
// are drawn when they run. It then sorts the events it drew for, so that
// the engine only sorts those that came later and merges the two.
//
// Having sorted, it goes on drawing for the bucket after (its spare
// work), so that a look that finds the engine busy starts the next one
// early: buckets of unequal sizes then even out instead of leaving one
// side waiting for the other at every bucket.
type lookahead struct {
	on   bool
	min  int // the smallest bucket worth handing over
	st   *storm
	jobs chan *lookJob
	done chan struct{} // a job's sort is made
	idle chan struct{} // the goroutine has ended
	busy bool
	next [2]lookJob // alternate: a job's spare work may still run while the next is built
	sent int        // jobs sent

	offBits int         // the engine's: how events are sorted
	bucket  int64       // the ring bucket of the last look
	n       int         // how many of its events it took
	sorted  []paidEvent // those events sorted by time (read after wait)
	scratch [2][]paidEvent
	radix   radix // the sort's counts, the second goroutine's own
}

// lookJob is one look: the first events of one bucket's chunks, to draw
// for and sort, and those of the bucket after, to draw for when that is
// done.
type lookJob struct {
	look, spare []lookPart
	n           int // events in look
	sort        bool
}

// lookPart is the first n events of one chunk.
type lookPart struct {
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
	// One job may wait while the spare draws of the one before finish,
	// and a sort made while the engine is busy does not hold up the
	// spare draws that follow it.
	l.jobs, l.done, l.idle = make(chan *lookJob, 1), make(chan struct{}, 1), make(chan struct{})
	go func() {
		defer close(l.idle)
		for job := range l.jobs {
			l.look(job)
			l.done <- struct{}{}
			for _, p := range job.spare {
				l.draw(p.ch.events[:p.n])
			}
		}
	}()
}

// draw draws the next rtt of every event of evs not drawn for yet (0 is
// never a drawn value the engine keeps: it draws again).
func (l *lookahead) draw(evs []paidEvent) {
	st := l.st
	for i := range evs {
		if evs[i].ahead == 0 {
			evs[i].ahead = st.aheadRTT(evs[i].client, evs[i].attempts)
		}
	}
}

// look draws for every event of job's look and, when asked to, sorts
// them: the draw loop also takes the digit counts, and the first pass
// reads the chunks, so the events are read once before the scatter.
func (l *lookahead) look(job *lookJob) {
	n := job.n
	sort := job.sort && n >= 64
	if sort {
		l.radix.reset(l.offBits)
	}
	for _, p := range job.look {
		evs := p.ch.events[:p.n]
		l.draw(evs)
		if sort {
			countOffsets(&l.radix, evs)
		}
	}
	switch {
	case !job.sort:
	case !sort || !l.radix.plan(job.look[0].ch.events[0].off):
		k := 0
		for _, p := range job.look {
			k += copy(l.scratch[0][k:n], p.ch.events[:p.n])
		}
		l.sorted = insertionSort(l.scratch[0][:k])
	default:
		for _, p := range job.look {
			scatter(&l.radix, l.radix.order[0], p.ch.events[:p.n], l.scratch[0][:n])
		}
		l.sorted = finishPasses(&l.radix, l.scratch[0][:n], l.scratch[1][:n])
	}
}

// begin starts drawing for the n events now in ring bucket bi's chunks (a
// bucket of the engine's kind, which is paidEvent whenever the lookahead
// is on), then for the spareN now in the chunks of the bucket after. The
// engine goes on appending to both buckets' last chunks meanwhile, beyond
// the events handed over. The spare draws are made before any later job
// starts, and the bucket after is always looked at next (it holds at
// least as many events then), so its chunks are never freed while they
// are drawn for.
func (l *lookahead) begin(bi int64, chunks any, n int, spareChunks any, spareN int) {
	if !l.on || n < l.min {
		return
	}
	// The last job may still be in its spare draws; the one before it,
	// whose buffer this is, ended before the last one's sort was received
	// (wait), which precedes this begin.
	l.sent++
	job := &l.next[l.sent&1]
	job.look, job.spare = parts(job.look[:0], chunks, n), job.spare[:0]
	if spareN >= l.min {
		job.spare = parts(job.spare, spareChunks, spareN)
	}
	l.bucket, l.n, l.busy = bi, n, true
	job.n, job.sort = n, n <= maxSortAhead // larger ones are drawn ahead, sorted by the engine
	if !job.sort {
		l.n = 0
	} else if cap(l.scratch[0]) < n {
		l.scratch[0], l.scratch[1] = make([]paidEvent, n, n+n/4), make([]paidEvent, n, n+n/4)
	}
	l.jobs <- job
}

// parts appends the first n events of a bucket's chunks to ps.
func parts(ps []lookPart, chunks any, n int) []lookPart {
	for i, ch := range chunks.([]*chunk[paidEvent]) {
		ps = append(ps, lookPart{ch: ch, n: chunkFill(n, i)})
	}
	return ps
}

// sortedFor returns the sorted events of the last look if it was at ring
// bucket bi and is done, with how many of the bucket's events they are.
func (l *lookahead) sortedFor(bi int64) ([]paidEvent, bool) {
	if !l.on || l.n == 0 || l.bucket != bi {
		return nil, false
	}
	return l.sorted, true
}

// wait returns when the draws and sort begun last are made, and their
// events may be read.
func (l *lookahead) wait() {
	if l.busy {
		<-l.done
		l.busy = false
	}
}

// stop ends the goroutine once its work, spare draws included, is done.
func (l *lookahead) stop() {
	l.wait()
	close(l.jobs)
	<-l.idle
}
