package sweep

import (
	"fmt"
	"math"
	"slices"

	"stormsim/policies"
	"stormsim/results"
	"stormsim/runner"
)

// Corners are the indexes of the grid's corner points, in grid order:
// every axis at its first and at its last value (2^axes points, fewer when
// an axis has one value).
func (p *Plan) Corners() []int {
	indexes := []int{0}
	for _, ax := range p.Axes {
		n := len(ax.Values)
		var next []int
		for _, i := range indexes {
			next = append(next, i*n)
			if n > 1 {
				next = append(next, i*n+n-1)
			}
		}
		indexes = next
	}
	slices.Sort(indexes)
	return indexes
}

// Probe runs the points at indexes with replications runs per policy (0:
// each point's own), in memory, on workers goroutines (0: every CPU), and
// fails when a charted metric has no value at any of them: a sweep whose
// chart would be empty. A metric may lack a value at some points (a storm
// that never converged has no convergence_ms); partial lists those, as
// "convergence_ms at 3 of 4". It is how a sweep file is tested without
// running its whole grid.
func (p *Plan) Probe(indexes []int, replications, workers int) (partial []string, err error) {
	if err := p.Check(nil); err != nil {
		return nil, err
	}
	var tally metricTally
	for _, i := range indexes {
		pt, err := p.Point(i)
		if err != nil {
			return nil, err
		}
		s := *pt.Scenario
		if replications > 0 {
			s.Replications = replications
		}
		pt.Scenario = &s
		sums, err := p.runPoint(pt, workers)
		if err != nil {
			return nil, err
		}
		m := p.Manifest()
		m.Replications = s.Replications
		for _, c := range chartJobs(m) {
			for _, label := range c.labels {
				if !slices.ContainsFunc(s.Policies, func(x policies.Spec) bool { return x.Label == label }) {
					continue // the policy is not at this point
				}
				v, _, _ := valueAt(sums, s.Replications, seriesKey{label, c.ref.Field, c.stat})
				tally.add(results.MetricRef{Policy: label, Field: c.ref.Field}.String(), !math.IsNaN(v))
			}
		}
	}
	return tally.partial()
}

// runPoint runs every storm of point pt in memory, on workers goroutines,
// and summarises each policy's runs.
func (p *Plan) runPoint(pt Point, workers int) ([]results.Summary, error) {
	s := pt.Scenario
	pr := &pointRun{pt: pt, runs: make([]*results.Runs, len(s.Policies))}
	for pol := range pr.runs {
		pr.runs[pol] = results.NewRuns(s.Replications)
	}
	err := runner.ForEach(len(s.Policies)*s.Replications, workers, func(j int) error {
		rep, pol := j/len(s.Policies), j%len(s.Policies)
		r, err := runner.RunOne(s, s.Policies[pol], s.Seed+uint64(rep))
		if err != nil {
			return fmt.Errorf("sweep point %d (%s): %w", pt.Index, pt.ID, err)
		}
		pr.runs[pol].Add(rep, results.ResultMetrics(&r))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return p.record(pr).Summaries(), nil
}

// metricTally counts, per charted metric, the points run and those where
// it had a value, in the order metrics were first seen.
type metricTally struct {
	order  []string
	counts map[string]*[2]int // points run, points with a value
}

func (t *metricTally) add(name string, hasValue bool) {
	if t.counts == nil {
		t.counts = map[string]*[2]int{}
	}
	c := t.counts[name]
	if c == nil {
		c = &[2]int{}
		t.counts[name] = c
		t.order = append(t.order, name)
	}
	c[0]++
	if hasValue {
		c[1]++
	}
}

// partial fails for a metric with no value at any point, and lists those
// with values at some points only.
func (t *metricTally) partial() (partial []string, err error) {
	for _, name := range t.order {
		points, has := t.counts[name][0], t.counts[name][1]
		switch {
		case has == 0:
			return nil, fmt.Errorf("metric %s has no value at any of the %d points run", name, points)
		case has < points:
			partial = append(partial, fmt.Sprintf("%s at %d of %d", name, has, points))
		}
	}
	return partial, nil
}
