package solve

import (
	"fmt"
	"math"

	"stormsim/check"
	"stormsim/results"
)

// Requirement is one check of require: for one policy: a check written
// without results[LABEL] is one requirement per policy, as in stormsim
// check.
type Requirement struct {
	Check check.Check // its metric names a policy
	Where string      // FILE:LINE of the check in the solve file
}

// String is the requirement as it is met: "p95(results[full].convergence_ms) <= 60000".
func (r Requirement) String() string {
	return r.Check.Metric.String() + " " + r.Check.Op + " " + formatNumber(r.Check.Bound)
}

// Unit is the unit of the metric, the bound and every margin: "ms" or
// "s" for a time, "" for a count, a rate or a fraction.
func (r Requirement) Unit() string { return results.TimeUnit(r.Check.Metric.Field) }

// Observation is one requirement at one probe, in the metric's own unit.
type Observation struct {
	Observed float64 // NaN without data
	HasData  bool
	Why      string  // without data: why, when it is known
	Margin   float64 // how far from failing (check.Check.Margin); -Inf without data
	// Relative is Margin as a fraction of the bound (Margin itself for a
	// bound of 0), so that requirements in different units can be weighed
	// against each other; -Inf without data.
	Relative float64
	Pass     bool
}

// observe evaluates r on a probe's summaries over its replications: the
// statistic the check names, or without one the first replication's
// value (the scenario's own seed), as stormsim check reads a result.
func observe(r Requirement, sums []results.Summary) Observation {
	o := Observation{Observed: math.NaN(), Margin: math.Inf(-1), Relative: math.Inf(-1)}
	m := r.Check.Metric
	for _, s := range sums {
		if s.Policy != m.Policy {
			continue
		}
		ms, ok := s.Metrics.Lookup(m.Field)
		if !ok {
			o.Why = missing(s, m.Field)
			return o
		}
		v, ok := ms.Stat(m.Stat)
		if m.Stat == "" {
			v, ok = ms.Runs[0], len(ms.Runs) > 0
		}
		if !ok {
			return o
		}
		o.Observed, o.HasData = v, true
		o.Margin, _ = r.Check.Margin(v)
		o.Relative = o.Margin
		if r.Check.Bound != 0 {
			o.Relative = o.Margin / math.Abs(r.Check.Bound)
		}
		o.Pass = r.Check.Holds(v)
		return o
	}
	o.Why = "no runs of policy " + m.Policy
	return o
}

// missing says why a policy's runs have no value of field: a storm
// that did not converge has no convergence time.
func missing(s results.Summary, field string) string {
	if c, ok := s.Metrics.Lookup("converged"); ok && c.Min < 1 {
		n := 0
		for _, v := range c.Runs {
			if v < 1 {
				n++
			}
		}
		return fmt.Sprintf("the storm did not converge in %d of %d runs", n, len(c.Runs))
	}
	if results.ModelKeys(field) != nil {
		return "its model is off here"
	}
	return "not every run has it"
}
