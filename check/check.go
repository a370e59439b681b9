// Package check evaluates pass/fail thresholds on a result document and
// compares a document with a saved baseline, for CI.
//
// A threshold reads METRIC OP NUMBER[UNIT]:
//
//	results[full].convergence_ms < 60s
//	results[full].connect_ms.p99 <= 1500ms
//	p95(results[full].attempts) < 6000
//	database.peak_rows_per_s < 25k
//	connect_ms.p99 < 3s                     (every policy: one line each)
//
// METRIC is a results.MetricRef; OP is one of < <= > >= == !=; NUMBER is a
// decimal number. A time metric (its name ends in _ms or _seconds) takes a
// duration and nothing else (ns, us, ms, s, m, h, or a Go duration such as
// 1m30s), converted to the metric's own unit: a bare number is an error
// that suggests the unit, since 60 could mean 60 ms or 60 s (0 alone
// needs none). Any other metric takes a number, with k, M or G for
// thousands, millions or billions (25k), % to divide by 100, and a rate
// (_per_s) also /s (25k/s); true and false are 1 and 0, for the yes-or-no
// metrics (results[full].converged == true, metastable == false). The
// report line gives the bound as written and the observed value in its
// unit. A metric the run has no data for (its model is off, or, for
// convergence_ms, the storm did not converge) fails.
package check

import (
	"fmt"
	"strconv"
	"strings"

	"stormsim/results"
)

// Check is one threshold.
type Check struct {
	Text   string // as written
	Metric results.MetricRef
	Op     string  // <, <=, >, >=, == or !=
	Bound  float64 // in the metric's unit
	// Written is the bound as written ("60s", "25k"), and unit the unit
	// it was written in, which the report line gives the observed value in.
	Written string
	unit    unit
}

// Ops are the comparison operators, longest first so that "<=" is not
// read as "<".
var Ops = []string{"<=", ">=", "==", "!=", "<", ">"}

// Parse reads one threshold.
func Parse(text string) (Check, error) {
	c := Check{Text: strings.TrimSpace(text)}
	at, op := -1, ""
	for _, o := range Ops {
		if i := strings.Index(c.Text, o); i >= 0 && (at < 0 || i < at) {
			at, op = i, o
		}
	}
	if at < 0 {
		return c, fmt.Errorf("want METRIC OP NUMBER, e.g. results[full].convergence_ms < 6s, with OP one of %s", strings.Join(Ops, " "))
	}
	c.Op = op
	m, err := results.ParseMetricRef(c.Text[:at])
	if err != nil {
		return c, err
	}
	c.Metric = m
	c.Written = strings.TrimSpace(c.Text[at+len(op):])
	c.Bound, c.unit, err = parseBound(c.Written, m)
	return c, err
}

// Holds reports whether observed satisfies the check's comparison.
func (c Check) Holds(observed float64) bool {
	switch c.Op {
	case "<":
		return observed < c.Bound
	case "<=":
		return observed <= c.Bound
	case ">":
		return observed > c.Bound
	case ">=":
		return observed >= c.Bound
	case "==":
		return observed == c.Bound
	case "!=":
		return observed != c.Bound
	}
	return false
}

// Margin is how far observed is from failing c, in the metric's own unit
// (its name says which: _ms milliseconds, and so on): bound - observed
// for < and <=, observed - bound for > and >=, so positive when c holds
// with room and negative when it fails. ok is false for == and !=, which
// have no side to fail on.
func (c Check) Margin(observed float64) (margin float64, ok bool) {
	switch c.Op {
	case "<", "<=":
		return c.Bound - observed, true
	case ">", ">=":
		return observed - c.Bound, true
	}
	return 0, false
}

// ForPolicy returns c applied to one policy: a check written without
// results[LABEL] applies to each policy in turn.
func (c Check) ForPolicy(label string) Check {
	c.Metric.Policy = label
	return c
}

// Outcome is a check evaluated on a document.
type Outcome struct {
	Check    Check
	Observed float64
	HasData  bool
	Why      string // without data: why, when it is known
}

// Pass reports whether the check held; no data is a failure.
func (o Outcome) Pass() bool { return o.HasData && o.Check.Holds(o.Observed) }

// String is the report line, "PASS METRIC OP BOUND: observed VALUE", with
// the bound as written and the observed value in the bound's unit
// (results[full].convergence_ms < 60s: observed 76.98s).
func (o Outcome) String() string {
	verdict := "FAIL"
	if o.Pass() {
		verdict = "PASS"
	}
	c := o.Check
	line := fmt.Sprintf("%s %s %s %s", verdict, c.Metric, c.Op, c.Written)
	if !o.HasData && o.Why != "" {
		return line + ": no data (" + o.Why + ")"
	}
	if !o.HasData {
		return line + ": no data (is the model that produces it turned on?)"
	}
	return line + ": observed " + c.unit.format(o.Observed, c.Bound)
}

// Eval evaluates c, whose metric names a policy, on doc.
func (c Check) Eval(doc *results.Document) Outcome {
	v, ok := Lookup(doc, c.Metric)
	o := Outcome{Check: c, Observed: v, HasData: ok}
	if !ok {
		o.Why = unconverged(doc, c.Metric.Policy)
	}
	return o
}

// unconverged says so when a policy's storm did not converge in every run,
// which leaves its convergence time, and statistics over runs, undefined.
func unconverged(doc *results.Document, policy string) string {
	for i := range doc.Results {
		r := &doc.Results[i]
		if r.Policy == policy && r.OutcomeResult != nil && !r.Converged {
			return fmt.Sprintf("the storm did not converge by its horizon: outcome %s", r.Outcome)
		}
	}
	for _, s := range doc.Summary {
		if c, ok := s.Metrics.Lookup("converged"); s.Policy == policy && ok && c.Min < 1 {
			return fmt.Sprintf("the storm did not converge in %d of %d runs", countBelow(c.Runs, 1), len(c.Runs))
		}
	}
	return ""
}

func countBelow(runs []float64, v float64) int {
	n := 0
	for _, r := range runs {
		if r < v {
			n++
		}
	}
	return n
}

// Lookup finds the value m names in doc: a field of the policy's result,
// or a statistic from the document's summary over replications.
func Lookup(doc *results.Document, m results.MetricRef) (float64, bool) {
	if m.Stat != "" {
		for _, s := range doc.Summary {
			if s.Policy == m.Policy {
				if ms, ok := s.Metrics.Lookup(m.Field); ok {
					return ms.Stat(m.Stat)
				}
			}
		}
		return 0, false
	}
	for i := range doc.Results {
		if doc.Results[i].Policy != m.Policy {
			continue
		}
		for _, x := range results.ResultMetrics(&doc.Results[i]) {
			if x.Name == m.Field {
				return x.Value, true
			}
		}
	}
	return 0, false
}

// formatNumber writes v in the shortest form that reads back exactly.
func formatNumber(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
