package solve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"stormsim/results"
	"stormsim/runner"
	"stormsim/sim"
	"stormsim/sweep"
)

// searcher runs a problem's searches: every case at once, every search of
// a case that does not wait for another at once, their probes' storms
// on one pool of workers. A probe is run once per settings: two searches
// asking for the same one share it, and two probes whose configs are the
// same (a given value equal to the base's) share their storms.
type searcher struct {
	p       *Problem
	ctx     context.Context
	cancel  context.CancelFunc
	workers int
	jobs    chan stormJob
	// handing counts the goroutines still acting for a probe: handing
	// its storms to jobs, or waiting to copy an identical probe's record
	// (and write its line). A search stopped early returns before they
	// end, so the pool closes jobs, and the run its probe file, only once
	// none is left: a send on the closed jobs would panic.
	handing sync.WaitGroup

	// known are the records found before running (--resume, or the
	// shards being merged); with replay, a probe not among them is an
	// error, and nothing runs.
	known  map[string]*sweep.Record
	replay bool
	out    io.Writer // each new probe's line, as it finishes; nil: none

	mu     sync.Mutex // guards probes, byHash, written, first
	probes map[string]*probe
	byHash map[string]*probe
	lines  int // lines written to out
	first  error

	progress *sweep.Progress
	planMu   sync.Mutex
	left     map[*searchRun]int // each search's values still to evaluate, times its combinations
	finished int                // probes finished, for the progress
}

// probe is one probe's storms and what they showed.
type probe struct {
	spec probeSpec
	done chan struct{} // closed once rec or err is set
	rec  *sweep.Record
	obs  []Observation // per requirement
	err  error

	runs []*results.Runs
	left atomic.Int64 // storms not finished
	errs sync.Once
}

// stormJob is one storm of a probe: replication rep of policy pol.
type stormJob struct {
	pr       *probe
	pol, rep int
}

// errStopped marks a probe whose storms the context stopped.
var errStopped = errors.New("stopped")

func newSearcher(p *Problem, ctx context.Context, workers int) *searcher {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancel(ctx)
	return &searcher{p: p, ctx: ctx, cancel: cancel, workers: workers, jobs: make(chan stormJob),
		probes: map[string]*probe{}, byHash: map[string]*probe{}, known: map[string]*sweep.Record{}}
}

// start starts the pool; stop ends it once every search has returned.
func (r *searcher) start() (stop func()) {
	var wg sync.WaitGroup
	for range r.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range r.jobs {
				r.runStorm(j)
			}
		}()
	}
	return func() {
		r.handing.Wait()
		close(r.jobs)
		wg.Wait()
		r.cancel()
	}
}

// fail records the first error of the run and stops every storm.
func (r *searcher) fail(err error) {
	r.mu.Lock()
	if r.first == nil {
		r.first = err
	}
	r.mu.Unlock()
	r.cancel()
}

func (r *searcher) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.first
}

// probe is the probe of case c, combination cb, at x: known, shared with
// another search, or started now.
func (r *searcher) probe(c caseSpec, cb combo, x float64) (*probe, error) {
	spec := r.p.settings(c, cb, x)
	r.mu.Lock()
	if pr, ok := r.probes[spec.id]; ok {
		r.mu.Unlock()
		return pr, nil
	}
	pr := &probe{spec: spec, done: make(chan struct{})}
	r.probes[spec.id] = pr
	if rec, ok := r.known[spec.id]; ok {
		r.byHash[rec.ConfigHash] = pr
		r.mu.Unlock()
		pr.finish(r, rec, false)
		return pr, nil
	}
	r.mu.Unlock()
	if r.replay {
		pr.err = &sweep.InputError{Msg: fmt.Sprintf("merge: probe %s is in no shard; is a shard unfinished (rerun it with --resume) or left out?", spec.id)}
		close(pr.done)
		return pr, nil
	}
	spec, err := r.p.build(c, cb, x)
	if err != nil {
		pr.err = err
		close(pr.done)
		return pr, err
	}
	pr.spec = spec
	r.mu.Lock()
	same := r.byHash[spec.configHash]
	if same == nil {
		r.byHash[spec.configHash] = pr
	}
	r.mu.Unlock()
	switch {
	case same != nil:
		r.handing.Add(1)
		go func() {
			defer r.handing.Done()
			<-same.done
			if same.err != nil {
				pr.err = same.err
				close(pr.done)
				return
			}
			rec := *same.rec
			pr.finish(r, &rec, true)
		}()
	default:
		r.dispatch(pr)
	}
	return pr, nil
}

// dispatch hands a probe's storms to the pool, replication by
// replication; storms the context stops before they start fail the
// probe.
func (r *searcher) dispatch(pr *probe) {
	s := pr.spec.scenario
	pr.runs = make([]*results.Runs, len(s.Policies))
	for pol := range pr.runs {
		pr.runs[pol] = results.NewRuns(s.Replications)
	}
	storms := len(s.Policies) * s.Replications
	pr.left.Store(int64(storms))
	r.handing.Add(1)
	go func() {
		defer r.handing.Done()
		for i := range storms {
			j := stormJob{pr: pr, pol: i % len(s.Policies), rep: i / len(s.Policies)}
			select {
			case r.jobs <- j:
			case <-r.ctx.Done():
				pr.stormDone(r, errStopped, storms-i)
				return
			}
		}
	}()
}

// runStorm runs one storm of a probe.
func (r *searcher) runStorm(j stormJob) {
	s := j.pr.spec.scenario
	if r.ctx.Err() != nil {
		j.pr.stormDone(r, errStopped, 1)
		return
	}
	res, err := runner.RunOneWith(s, s.Policies[j.pol], s.Seed+uint64(j.rep), func(sim.Progress) bool { return r.ctx.Err() == nil })
	switch {
	case errors.Is(err, runner.ErrStopped):
		err = errStopped
	case err != nil:
		err = fmt.Errorf("solve probe %s: %w", j.pr.spec.id, err)
	default:
		j.pr.runs[j.pol].Add(j.rep, results.ResultMetrics(&res))
		r.progress.StormDone(int64(s.Clients))
	}
	j.pr.stormDone(r, err, 1)
}

// stormDone counts n storms of pr finished (err: failed); the last one
// makes the probe's record.
func (pr *probe) stormDone(r *searcher, err error, n int) {
	if err != nil {
		pr.errs.Do(func() { pr.err = err })
		if !errors.Is(err, errStopped) {
			r.fail(err)
		}
	}
	if pr.left.Add(int64(-n)) != 0 {
		return
	}
	if pr.err != nil {
		close(pr.done)
		return
	}
	spec := pr.spec
	rec := sweep.NewRecord(sweep.LineID(r.p.Hash), 0, axisValues(spec.settings), spec.configHash, spec.scenario, pr.runs)
	pr.runs = nil
	pr.finish(r, rec, true)
}

// finish sets a probe's record (renamed to its settings), observes every
// requirement and, if it is new, writes its line.
func (pr *probe) finish(r *searcher, rec *sweep.Record, write bool) {
	rec.Values = axisValues(pr.spec.settings)
	sums := rec.Summaries()
	for _, req := range r.p.Requirements {
		pr.obs = append(pr.obs, observe(req, sums))
	}
	pr.rec = rec
	if write && r.out != nil {
		r.mu.Lock()
		rec.Index = r.lines
		line, err := rec.Line()
		if err == nil {
			_, err = r.out.Write(line)
		}
		r.lines++
		r.mu.Unlock()
		if err != nil {
			pr.err = fmt.Errorf("writing %s: %w", ProbesFile, err)
			r.fail(pr.err)
		}
	}
	if write {
		r.progress.UnitDone()
	}
	r.planMu.Lock()
	r.finished++
	r.planMu.Unlock()
	close(pr.done)
}

// axisValues are a probe's settings as its record names them.
func axisValues(settings []sweep.Setting) sweep.AxisValues {
	out := make(sweep.AxisValues, len(settings))
	for i, st := range settings {
		out[i] = sweep.AxisValue{Path: st.Path, Label: st.Label}
	}
	return out
}

// evaluate evaluates xs for case c over combinations combos: every probe
// is asked for first, so that they run at once, then each value's
// observations are the worst over the combinations.
func (r *searcher) evaluate(c caseSpec, combos []combo, xs []float64) ([]*eval, error) {
	prs := make([][]*probe, len(xs))
	for i, x := range xs {
		for _, cb := range combos {
			pr, err := r.probe(c, cb, x)
			if err != nil {
				return nil, err
			}
			prs[i] = append(prs[i], pr)
		}
	}
	evals := make([]*eval, len(xs))
	for i, x := range xs {
		for _, pr := range prs[i] {
			<-pr.done
			if pr.err != nil {
				return nil, pr.err
			}
		}
		evals[i] = worstOf(x, prs[i], len(r.p.Requirements))
	}
	return evals, nil
}

// worstOf is one value's evaluation from its probes, one per
// combination: each requirement's least margin, and whose it is.
func worstOf(x float64, prs []*probe, reqs int) *eval {
	e := &eval{x: x, obs: make([]Observation, reqs), combo: make([]int, reqs), probes: prs}
	for r := range reqs {
		for ci, pr := range prs {
			if ci == 0 || pr.obs[r].Margin < e.obs[r].Margin {
				e.obs[r], e.combo[r] = pr.obs[r], ci
			}
		}
	}
	return e
}

// role is what a search answers.
type role struct {
	kind  string         // roleAnswer, roleBase, roleGiven, roleRelax
	given *sweep.Setting // roleGiven: the value alone
	relax int            // roleRelax: the requirement left out
}

// The roles of a case's searches.
const (
	roleAnswer = "answer" // every requirement, every combination of given values
	roleBase   = "base"   // every requirement, the base's own values of the given keys
	roleGiven  = "given"  // one given value alone
	roleRelax  = "relax"  // an infeasible answer without one requirement
)

// searchRun is one search of a case, with the values in the order it
// asked for them.
type searchRun struct {
	role   role
	s      *search
	combos []combo
	asked  []float64
	seeded int // evaluations taken from another search before it began
}

// caseRun is a case's searches, in the order solve.json lists them.
type caseRun struct {
	c        caseSpec
	searches []*searchRun
}

// solveCase runs a case's searches: the answer and the sensitivity to
// each given value at once, then, for an infeasible answer, a search
// without each requirement, from the answer's probes.
func (r *searcher) solveCase(c caseSpec) (*caseRun, error) {
	p := r.p
	all := make([]int, len(p.Requirements))
	for i := range all {
		all[i] = i
	}
	cr := &caseRun{c: c}
	add := func(ro role, reqs []int, goal Goal, combos []combo) *searchRun {
		sr := &searchRun{role: ro, s: newSearch(&p.Domain, reqs, goal), combos: combos}
		cr.searches = append(cr.searches, sr)
		return sr
	}
	answer := add(role{kind: roleAnswer}, all, p.Domain.Goal, p.combos)
	if len(p.Given) > 0 {
		add(role{kind: roleBase}, all, p.Domain.Goal, []combo{{}})
		for _, cb := range p.aloneCombos() {
			add(role{kind: roleGiven, given: &cb.settings[0]}, all, p.Domain.Goal, []combo{cb})
		}
	}
	if err := r.driveAll(c, cr.searches); err != nil {
		return cr, err
	}
	if answer.s.result.Feasible {
		return cr, nil
	}
	var relax []*searchRun
	for i := range p.Requirements {
		goal, ok := towards(answer.s, i)
		if !ok {
			continue
		}
		others := slices.DeleteFunc(slices.Clone(all), func(r int) bool { return r == i })
		sr := add(role{kind: roleRelax, relax: i}, others, goal, p.combos)
		for _, e := range answer.s.evals {
			sr.s.add(e)
		}
		sr.seeded = len(answer.s.evals)
		relax = append(relax, sr)
	}
	return cr, r.driveAll(c, relax)
}

// towards is the goal of a search without requirement i: the end of the
// other requirements' feasible values where i has the most room, the
// one its margin grows towards across the range. ok is false when its
// margin does not move.
func towards(s *search, i int) (Goal, bool) {
	lo, hi := s.evals[0], s.evals[len(s.evals)-1]
	switch a, b := lo.rel(i), hi.rel(i); {
	case b > a:
		return Most, true
	case b < a:
		return Least, true
	}
	return "", false
}

// driveAll runs searches at once.
func (r *searcher) driveAll(c caseSpec, srs []*searchRun) error {
	return atOnce(len(srs), func(i int) error { return r.drive(c, srs[i]) })
}

// atOnce calls fn(i) for every i in [0, n), each on its own goroutine,
// and returns their errors joined. Unlike runner.ForEach it does not
// bound how many run: each waits on storms the one pool of workers runs.
func atOnce(n int, fn func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn(i)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// drive runs one search to its answer.
func (r *searcher) drive(c caseSpec, sr *searchRun) error {
	for {
		need := sr.s.step()
		r.revise(sr, sr.s.left()+len(need))
		if len(need) == 0 {
			return nil
		}
		evals, err := r.evaluate(c, sr.combos, need)
		if err != nil {
			return err
		}
		for _, e := range evals {
			sr.s.add(e)
		}
		sr.asked = append(sr.asked, need...)
	}
}

// revise sets a search's values still to evaluate and the progress's
// totals: the probes finished and those the searches expect.
func (r *searcher) revise(sr *searchRun, values int) {
	r.planMu.Lock()
	defer r.planMu.Unlock()
	if r.left == nil {
		r.left = map[*searchRun]int{}
	}
	r.left[sr] = values * len(sr.combos)
	probes := r.finished
	for _, n := range r.left {
		probes += n
	}
	storms := int64(probes) * int64(len(r.p.Policies)*r.p.Replications)
	r.progress.Revise(probes, storms, storms*int64(r.p.probeShape.MaxClients))
}
