// Package runner runs the storms a resolved scenario describes, one per
// selected policy and replication, on a pool of goroutines, and records
// them in a result document: the step from a scenario and its policies to
// results. It knows nothing of config files; the document it fills names
// the config it was given (results.New).
package runner

import (
	"context"
	"errors"
	"fmt"

	"stormsim/policies"
	"stormsim/results"
	"stormsim/sim"
)

// Options say how Build runs its storms; none changes a byte of the
// document.
type Options struct {
	Workers int // storms at once; 0 means runtime.GOMAXPROCS
	// Context, when cancelled, stops every storm and Build returns
	// ErrStopped; nil never stops.
	Context context.Context
	// Progress, when set, is called from a storm's goroutine with where
	// storm (its index among Storms) stands, every sim.ProgressEvery
	// attempts, and with done true once it has finished.
	Progress func(storm int, p sim.Progress, done bool)
}

// ErrStopped is a run stopped by its context before it finished.
var ErrStopped = errors.New("stopped before the end")

// Storms is how many storms Build runs for s with n policies selected;
// storm i is replication i/n of policy i%n.
func Storms(s *sim.Scenario, n int) int { return n * max(1, s.Replications) }

// Build runs the storm of the resolved scenario s for each policy of specs
// (see SelectPolicies) and each replication r in [0, s.Replications) with
// seed s.Seed+r, on up to opt.Workers goroutines, and records them in doc,
// a document of s as results.New returns it: each policy's first
// replication in doc.Results and, with two replications or more, the
// seeds run and each policy's statistics over them. Storms are collected
// by index, so the document is the same whatever the worker count. On
// error doc is left as it was.
func Build(doc *results.Document, s *sim.Scenario, specs []policies.Spec, opt Options) error {
	reps := max(1, s.Replications)
	first := make([]sim.Result, len(specs)) // only the first replication keeps its series
	runs := make([]*results.Runs, len(specs))
	for p := range runs {
		runs[p] = results.NewRuns(reps)
	}
	ctx := opt.Context
	if ctx == nil {
		ctx = context.Background()
	}
	err := ForEach(len(specs)*reps, opt.Workers, func(i int) error {
		rep, p := i/len(specs), i%len(specs)
		if ctx.Err() != nil {
			return ErrStopped
		}
		report := func(pr sim.Progress) bool {
			if opt.Progress != nil {
				opt.Progress(i, pr, false)
			}
			return ctx.Err() == nil
		}
		r, err := RunOneWith(s, specs[p], s.Seed+uint64(rep), report)
		if err != nil {
			return err
		}
		if opt.Progress != nil {
			opt.Progress(i, sim.Progress{}, true)
		}
		if reps > 1 {
			runs[p].Add(rep, results.ResultMetrics(&r))
		}
		if rep == 0 {
			first[p] = r
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return ErrStopped
		}
		return err
	}
	doc.Results = append(doc.Results, first...)
	if reps < 2 {
		return nil
	}
	doc.Replications = &results.Replications{Count: reps}
	for rep := range reps {
		doc.Replications.Seeds = append(doc.Replications.Seeds, s.Seed+uint64(rep))
	}
	for p, spec := range specs {
		doc.Summary = append(doc.Summary, runs[p].Summary(spec.Label))
	}
	return nil
}

// RunOne runs one storm of s: every client uses policy spec and randomness
// comes from seed. It is the unit of work that replications and parallel
// runs schedule; it touches no shared state.
func RunOne(s *sim.Scenario, spec policies.Spec, seed uint64) (sim.Result, error) {
	return RunOneWith(s, spec, seed, nil)
}

// RunOneWith is RunOne calling report as sim.RunWithProgress does; when
// report returns false the storm stops and RunOneWith returns ErrStopped.
// A panic in the engine comes back as an error: a storm run on a pool's
// goroutine cannot be recovered by its caller.
func RunOneWith(s *sim.Scenario, spec policies.Spec, seed uint64, report func(sim.Progress) bool) (r sim.Result, err error) {
	defer func() {
		if x := recover(); x != nil {
			r, err = sim.Result{}, fmt.Errorf("the engine panicked: %v", x)
		}
	}()
	b, err := policies.New(spec)
	if err != nil {
		return sim.Result{}, fmt.Errorf("policy %s: %w", spec.Label, err)
	}
	if report == nil {
		return sim.Run(s, b, seed), nil
	}
	stopped := false
	r = sim.RunWithProgress(s, b, seed, func(p sim.Progress) bool {
		if !report(p) {
			stopped = true
		}
		return !stopped
	})
	if stopped {
		return sim.Result{}, ErrStopped
	}
	return r, nil
}
