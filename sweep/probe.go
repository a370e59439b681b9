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
	type seen struct{ has, points int }
	counts := map[string]*seen{}
	var order []string
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
		pr := &pointRun{pt: pt, runs: make([]*results.Runs, len(s.Policies))}
		for pol := range pr.runs {
			pr.runs[pol] = results.NewRuns(s.Replications)
		}
		err = runner.ForEach(len(s.Policies)*s.Replications, workers, func(j int) error {
			rep, pol := j/len(s.Policies), j%len(s.Policies)
			r, err := runStorm(&s, pol, s.Seed+uint64(rep), nil)
			if err != nil {
				return fmt.Errorf("sweep point %d (%s): %w", i, pt.ID, err)
			}
			pr.runs[pol].Add(rep, results.ResultMetrics(&r))
			return nil
		})
		if err != nil {
			return nil, err
		}
		rec := p.record(pr)
		sums := rec.Summaries()
		m := p.Manifest()
		m.Replications = s.Replications
		for _, c := range chartJobs(m) {
			for _, label := range c.labels {
				if !slices.ContainsFunc(s.Policies, func(x policies.Spec) bool { return x.Label == label }) {
					continue // the policy is not at this point
				}
				name := results.MetricRef{Policy: label, Field: c.ref.Field}.String()
				if counts[name] == nil {
					counts[name] = &seen{}
					order = append(order, name)
				}
				counts[name].points++
				if v, _, _ := valueAt(sums, s.Replications, seriesKey{label, c.ref.Field, c.stat}); !math.IsNaN(v) {
					counts[name].has++
				}
			}
		}
	}
	for _, name := range order {
		c := counts[name]
		switch {
		case c.has == 0:
			return nil, fmt.Errorf("metric %s has no value at any of the %d points run", name, c.points)
		case c.has < c.points:
			partial = append(partial, fmt.Sprintf("%s at %d of %d", name, c.has, c.points))
		}
	}
	return partial, nil
}
