package sweep

import (
	"math"
	"slices"

	"stormsim/check"
	"stormsim/plots"
	"stormsim/results"
)

// pointLimits holds every point to the base scenario's checks, as
// `stormsim check` would hold that point's run: a check without a
// statistic reads the first replication, one with a statistic reads it
// over the point's replications, and a check without results[LABEL]
// applies to every policy. A metric without a value fails, as in check.
type pointLimits struct {
	checks []check.Check
	labels []string
	// fails[c][l] is, per point, whether check c fails for policy l
	// (false where it does not apply to l).
	fails [][][]bool
	meets []bool // per point: every check holds for every policy
}

func newPointLimits(m Manifest) pointLimits {
	pl := pointLimits{labels: m.Policies}
	for _, text := range m.Checks {
		c, err := check.Parse(text)
		if err != nil {
			continue // the plan refused it; a manifest edited by hand loses it
		}
		pl.checks = append(pl.checks, c)
		pl.fails = append(pl.fails, make([][]bool, len(m.Policies)))
	}
	return pl
}

// add evaluates every check at one point.
func (pl *pointLimits) add(sums []results.Summary) {
	meets := true
	for ci, c := range pl.checks {
		for li, label := range pl.labels {
			fails := false
			if c.Metric.Policy == "" || c.Metric.Policy == label {
				fails = !holdsAt(c, sums, label)
			}
			pl.fails[ci][li] = append(pl.fails[ci][li], fails)
			meets = meets && !fails
		}
	}
	pl.meets = append(pl.meets, meets)
}

// FailedCheck is a check a point fails, for one policy.
type FailedCheck struct {
	Text   string // the check as written
	Field  string // the metric it reads
	Policy string // the policy it fails for
	// Named is whether the check names its policy (results[LABEL]):
	// String then needs not.
	Named bool
}

// String is the check as written, and the policy it fails for when the
// check applies to every policy of several.
func (f FailedCheck) String() string {
	if f.Named {
		return f.Text
	}
	return f.Text + " (" + f.Policy + ")"
}

// failing lists the checks point i fails.
func (pl *pointLimits) failing(i int) []FailedCheck {
	var out []FailedCheck
	for ci, c := range pl.checks {
		for li, label := range pl.labels {
			if pl.fails[ci][li][i] {
				out = append(out, FailedCheck{Text: c.Text, Field: c.Metric.Field, Policy: label, Named: c.Metric.Policy != "" || len(pl.labels) == 1})
			}
		}
	}
	return out
}

// chart is the limits of one chart: the checks on its metric, for the
// policy it draws (the first; a line chart of several draws each one's
// row), their cells arranged by shape from per-policy point lists.
func (pl *pointLimits) chart(c chartJob, shape func(fails [][]bool) [][]bool) []plots.Limit {
	var out []plots.Limit
	for ci, ch := range pl.checks {
		if ch.Metric.Field != c.ref.Field {
			continue
		}
		var perLine [][]bool
		applies := false
		for _, label := range c.labels {
			li := slices.Index(pl.labels, label)
			if li < 0 {
				continue
			}
			perLine = append(perLine, pl.fails[ci][li])
			applies = applies || ch.Metric.Policy == "" || ch.Metric.Policy == label
		}
		if !applies {
			continue
		}
		bound := math.NaN()
		if ch.Metric.Stat == c.stat {
			bound = ch.Bound
		}
		out = append(out, plots.Limit{Text: ch.Text, Bound: bound, Fails: shape(perLine)})
	}
	return out
}

// holdsAt reports whether check c holds for policy label at a point.
func holdsAt(c check.Check, sums []results.Summary, label string) bool {
	for _, s := range sums {
		if s.Policy != label {
			continue
		}
		ms, ok := s.Metrics.Lookup(c.Metric.Field)
		if !ok || len(ms.Runs) == 0 {
			return false
		}
		v := ms.Runs[0]
		if c.Metric.Stat != "" {
			if v, ok = ms.Stat(c.Metric.Stat); !ok {
				return false
			}
		}
		return !math.IsNaN(v) && !math.IsInf(v, 0) && c.Holds(v)
	}
	return false
}
