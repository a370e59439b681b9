package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"stormsim/budget"
	"stormsim/internal/atomicfile"
	"stormsim/results"
	"stormsim/runner"
	"stormsim/sim"
)

// Options say how a plan runs. None of them changes a byte of what it
// writes: points are written in grid order whatever the worker count, a
// resumed sweep ends as a fresh one would, and merged shards equal an
// unsharded run.
type Options struct {
	Dir      string          // output directory, created if missing
	Workers  int             // storms run at once; 0 means runtime.GOMAXPROCS
	Shard    int             // with Shards > 1, run only points whose index % Shards == Shard
	Shards   int             // 0 or 1: run every point
	Resume   bool            // keep the points already in Dir/sweep.ndjson
	NoCharts bool            // skip the charts (CSV and NDJSON are still written)
	Progress *Progress       // nil: report nothing
	Context  context.Context // cancelled: stop after the points already finished; nil: never
	// Derived names files the command writes from a finished sweep (its
	// report), removed from Dir with the CSV and charts of an earlier
	// sweep before the points run, so that none describes another sweep.
	Derived []string

	afterLine func(written int) // tests: called after each line written
}

// InputError is a problem with the user's files or flags (a resume into
// another sweep's directory, shards that do not fit), as opposed to a
// failure while running.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// InterruptedError is a sweep stopped by its context: Done of Points
// points (of this shard) are in sweep.ndjson, each line whole, and
// --resume runs the rest.
type InterruptedError struct {
	Done, Points int
	File         string
	// Finishing: every point had run; sweep.csv and the charts were
	// being written (--resume writes them).
	Finishing bool
	// Checking: the plan was checking its points (Done of Points);
	// nothing had run.
	Checking bool
}

func (e *InterruptedError) Error() string {
	if e.Checking {
		return fmt.Sprintf("interrupted while checking the grid: %d of %d points checked, nothing run", e.Done, e.Points)
	}
	if e.Finishing {
		return fmt.Sprintf("interrupted while writing the CSV and charts: all %d points are in %s", e.Points, e.File)
	}
	return fmt.Sprintf("interrupted: %d of %d points are in %s", e.Done, e.Points, e.File)
}

// Run runs the plan's points (or its shard's) with their replications and
// streams one line per point to Dir/sweep.ndjson as points finish, in grid
// order: a point that finishes early waits for the ones before it, and at
// most budget.SweepWindow points are in flight. An unsharded sweep then
// writes sweep.csv and the charts, whose paths it returns; a shard leaves
// that to stormsim merge. The files an earlier sweep wrote into Dir that
// this one writes afresh (its CSV and charts) are removed first.
func (p *Plan) Run(opt Options) (charts []string, err error) {
	if err := p.Check(nil); err != nil {
		return nil, err
	}
	shards := max(1, opt.Shards)
	if opt.Shard < 0 || opt.Shard >= shards {
		return nil, &InputError{fmt.Sprintf("shard %d/%d: the index must be in [0, %d)", opt.Shard, shards, shards)}
	}
	out, done, err := p.openPoints(opt, shards)
	if err != nil {
		return nil, err
	}
	runErr := p.runPoints(opt.Shard, shards, done, out, opt)
	if err := out.Close(); runErr == nil {
		runErr = err
	}
	var ie *InterruptedError
	if errors.As(runErr, &ie) {
		ie.File = out.Name()
	}
	if runErr != nil || shards > 1 {
		return nil, runErr
	}
	ctx := opt.Context
	if ctx == nil {
		ctx = context.Background()
	}
	return finalize(ctx, opt.Dir, !opt.NoCharts)
}

// openPoints prepares opt.Dir for the run: it writes sweep.json, removes
// the CSV and charts of an earlier sweep, and opens sweep.ndjson to
// append to the points already done (with opt.Resume, which checks them)
// or to write afresh.
func (p *Plan) openPoints(opt Options, shards int) (out *os.File, done int, err error) {
	if err := os.MkdirAll(opt.Dir, 0o755); err != nil {
		return nil, 0, &InputError{fmt.Sprintf("-o %s: %v", opt.Dir, err)}
	}
	manifest, err := p.Manifest().JSON()
	if err != nil {
		return nil, 0, err
	}
	path := filepath.Join(opt.Dir, PointsFile)
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if opt.Resume {
		if done, err = p.resumable(path, opt.Shard, shards); err != nil {
			return nil, 0, err
		}
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	if err := removeOutputs(opt.Dir, opt.Derived); err != nil {
		return nil, 0, err
	}
	if err := atomicfile.Write(filepath.Join(opt.Dir, ManifestFile), manifest); err != nil {
		return nil, 0, err
	}
	out, err = os.OpenFile(path, flags, 0o644)
	return out, done, err
}

// removeOutputs removes the CSV and the charts an earlier sweep wrote into
// dir, as its sweep.json names them, and the derived files: Finalize
// writes them afresh, and a chart of a metric no longer swept must not
// stay behind.
func removeOutputs(dir string, derived []string) error {
	m, _, err := readManifest(dir)
	if err != nil {
		return nil // no earlier sweep here, or one this stormsim cannot read
	}
	names := append([]string{CSVFile}, derived...)
	for _, c := range chartJobs(m) {
		names = append(names, c.files()...)
	}
	for _, n := range names {
		if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// resumable checks that the lines already in path are the first points of
// this sweep (or shard), in order, cuts off a line left half-written, and
// returns how many points are done.
func (p *Plan) resumable(path string, shard, shards int) (int, error) {
	lines := 0
	complete, err := EachLine(path, func(k int, l Line) error {
		if l.Sweep != LineID(p.Hash) {
			a, b := distinct(l.Sweep, LineID(p.Hash))
			return &InputError{fmt.Sprintf("--resume: %s:%d was written by another sweep (%s; this one is %s): use a fresh -o directory or leave out --resume",
				path, k, a, b)}
		}
		want := shard + lines*shards
		if want >= p.Size || l.Index != want {
			expected := "no more points"
			if want < p.Size {
				expected = fmt.Sprintf("point %d", want)
			}
			return &InputError{fmt.Sprintf("--resume: %s:%d holds point %d where this run expects %s: was it written with another --shard?",
				path, k, l.Index, expected)}
		}
		lines++
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	var ie *InputError
	if errors.As(err, &ie) {
		return 0, err
	}
	if err != nil {
		return 0, &InputError{fmt.Sprintf("--resume: %v", err)}
	}
	if err := os.Truncate(path, complete); err != nil {
		return 0, err
	}
	return lines, nil
}

// distinct shortens two different hashes to the shortest prefixes (from
// 12 hex digits) that tell them apart.
func distinct(a, b string) (string, string) {
	n := len("sha256:") + 12
	for n < len(a) && n < len(b) && a[:n] == b[:n] {
		n++
	}
	return a[:min(n, len(a))], b[:min(n, len(b))]
}

// pointRun is a point in flight: its storms' metrics as they finish.
type pointRun struct {
	pt   Point
	runs []*results.Runs // per policy
	left atomic.Int64    // storms not finished
	done chan struct{}   // closed when left reaches 0
}

// job is one storm: replication rep of policy pol at a point.
type job struct {
	pr       *pointRun
	pol, rep int
}

// runPoints runs every replication of every policy of the shard's points
// after the first done on a pool of workers and writes each point's line
// to out in grid order.
func (p *Plan) runPoints(shard, shards, done int, out io.Writer, opt Options) error {
	r := newPointRunner(p, opt)
	points := p.ShardSize(shard, shards)
	first := shard + done*shards
	var storms, work int64
	for i := first; i < p.Size; i += shards {
		storms += int64(p.storms[i])
		work += int64(p.cost[i])
	}
	opt.Progress.Begin(Totals{Title: "sweep", Unit: "points", Units: points, Whole: p.Size, Resumed: done, Storms: storms, Work: work})
	defer opt.Progress.End()

	go r.dispatch(first, shards)
	workersDone := r.startWorkers()
	written := r.writeLines(out, workersDone)
	r.halt()
	<-workersDone
	for range r.order {
		// let the dispatcher finish
	}
	if err := r.err(); err != nil {
		return err
	}
	if done+written < points {
		return &InterruptedError{Done: done + written, Points: points}
	}
	return nil
}

// pointRunner runs points on a pool of workers: a dispatcher hands out
// the points' storms in grid order, at most a window of points at once;
// workers run them; the writer writes each point's line once its storms
// are in. The first error, or the context, stops all three.
type pointRunner struct {
	p       *Plan
	opt     Options
	ctx     context.Context
	workers int

	slots chan struct{}  // a token per point in flight
	order chan *pointRun // the points in flight, in grid order
	jobs  chan job       // the storms to run
	stop  chan struct{}  // closed by halt
	once  sync.Once      // closes stop
	mu    sync.Mutex     // guards first
	first error          // the first error, from any goroutine
}

func newPointRunner(p *Plan, opt Options) *pointRunner {
	ctx := opt.Context
	if ctx == nil {
		ctx = context.Background()
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	window := budget.SweepWindow(workers)
	return &pointRunner{p: p, opt: opt, ctx: ctx, workers: workers,
		slots: make(chan struct{}, window), order: make(chan *pointRun, window), jobs: make(chan job), stop: make(chan struct{})}
}

// fail records err, if it is the first, and stops everything.
func (r *pointRunner) fail(err error) {
	r.mu.Lock()
	if r.first == nil {
		r.first = err
	}
	r.mu.Unlock()
	r.halt()
}

func (r *pointRunner) halt() { r.once.Do(func() { close(r.stop) }) }

func (r *pointRunner) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.first
}

// stopped reports whether the run is stopping, by an error or the context.
func (r *pointRunner) stopped() bool {
	select {
	case <-r.stop:
		return true
	case <-r.ctx.Done():
		return true
	default:
		return false
	}
}

// dispatch builds the points from first, every shards-th, in grid order,
// each once a slot is free, and hands out its storms replication by
// replication. It closes jobs and order when done or stopped.
func (r *pointRunner) dispatch(first, shards int) {
	defer close(r.jobs)
	defer close(r.order)
	for i := first; i < r.p.Size; i += shards {
		select {
		case r.slots <- struct{}{}:
		case <-r.stop:
			return
		case <-r.ctx.Done():
			return
		}
		pt, err := r.p.Point(i)
		if err != nil {
			r.fail(err)
			return
		}
		s := pt.Scenario
		pr := &pointRun{pt: pt, runs: make([]*results.Runs, len(s.Policies)), done: make(chan struct{})}
		for pol := range pr.runs {
			pr.runs[pol] = results.NewRuns(s.Replications)
		}
		pr.left.Store(int64(len(s.Policies) * s.Replications))
		r.order <- pr
		for rep := range s.Replications {
			for pol := range s.Policies {
				select {
				case r.jobs <- job{pr, pol, rep}:
				case <-r.stop:
					return
				case <-r.ctx.Done():
					return
				}
			}
		}
	}
}

// startWorkers starts the pool; the channel it returns closes once every
// worker has returned.
func (r *pointRunner) startWorkers() <-chan struct{} {
	var wg sync.WaitGroup
	for range r.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range r.jobs {
				if r.stopped() {
					continue // drain: the dispatcher is stopping too
				}
				r.runJob(j)
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	return done
}

// runJob runs one storm and adds its metrics to its point.
func (r *pointRunner) runJob(j job) {
	s := j.pr.pt.Scenario
	res, err := runner.RunOneWith(s, s.Policies[j.pol], s.Seed+uint64(j.rep), func(sim.Progress) bool { return r.ctx.Err() == nil })
	if errors.Is(err, runner.ErrStopped) {
		return // interrupted: its point stays unwritten
	}
	if err != nil {
		r.fail(fmt.Errorf("sweep point %d (%s): %w", j.pr.pt.Index, j.pr.pt.ID, err))
		return
	}
	j.pr.runs[j.pol].Add(j.rep, results.ResultMetrics(&res))
	r.opt.Progress.StormDone(int64(s.Clients))
	if j.pr.left.Add(-1) == 0 {
		close(j.pr.done)
	}
}

// writeLines writes each point's line once all its storms are in, in grid
// order, and returns how many it wrote. After a stop, the points already
// finished are still written, so that --resume loses nothing.
func (r *pointRunner) writeLines(out io.Writer, workersDone <-chan struct{}) (written int) {
	for pr := range r.order {
		select {
		case <-pr.done:
		case <-workersDone:
			select {
			case <-pr.done:
			default:
				return written // unfinished: its storms were stopped
			}
		}
		line, err := r.p.record(pr).Line()
		if err == nil {
			_, err = out.Write(line)
		}
		if err != nil {
			r.fail(fmt.Errorf("writing %s: %w", PointsFile, err))
			return written
		}
		written++
		r.opt.Progress.UnitDone()
		<-r.slots
		if r.opt.afterLine != nil {
			r.opt.afterLine(written)
		}
	}
	return written
}

// record is a finished point's line.
func (p *Plan) record(pr *pointRun) *Record {
	pt := pr.pt
	values := make(AxisValues, len(p.Axes))
	for a, ax := range p.Axes {
		values[a] = AxisValue{Path: ax.Path, Label: ax.Values[pt.Coords[a]].Label}
	}
	return NewRecord(LineID(p.Hash), pt.Index, values, pt.ConfigHash, pt.Scenario, pr.runs)
}

// NewRecord is the line of a point whose storms have all run: id is the
// LineID of what it belongs to, values the keys set at the point, runs
// each policy's runs in the order of s's policies.
func NewRecord(id string, index int, values AxisValues, configHash string, s *sim.Scenario, runs []*results.Runs) *Record {
	r := &Record{Sweep: id, Index: index, Values: values, ConfigHash: configHash,
		Seed: s.Seed, Replications: s.Replications, Results: []PolicyRuns{}}
	for pol, spec := range s.Policies {
		names, values := runs[pol].Table()
		prs := PolicyRuns{Policy: spec.Label, Runs: values}
		if pol == 0 {
			r.Metrics = names
		} else if !equalStrings(names, r.Metrics) {
			prs.Metrics = names
		}
		r.Results = append(r.Results, prs)
	}
	if r.Metrics == nil {
		r.Metrics = []string{}
	}
	return r
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
