// Package check evaluates pass/fail thresholds on a result document and
// compares a document with a saved baseline, for CI.
//
// A threshold reads METRIC OP NUMBER[UNIT]:
//
//	results[full].convergence_ms < 6000
//	results[full].connect_ms.p99 <= 2.5s
//	p95(results[full].attempts) < 6000
//	connect_ms.p99 < 3s                     (every policy: one line each)
//
// METRIC is a results.MetricRef; OP is one of < <= > >= == !=; NUMBER is a
// decimal number. UNIT is optional: a duration unit (ns, us, ms, s, m, h,
// or a Go duration such as 1m30s) is converted to the metric's own time
// unit, which its name says (_ms milliseconds, _seconds seconds); % divides
// by 100; true and false are 1 and 0, for the yes-or-no metrics
// (results[full].converged == true, metastable == false). A metric the run
// has no data for (its model is off, or, for convergence_ms, the storm did
// not converge) fails.
package check

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"stormsim/results"
)

// Check is one threshold.
type Check struct {
	Text   string // as written
	Metric results.MetricRef
	Op     string  // <, <=, >, >=, == or !=
	Bound  float64 // in the metric's unit
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
		return c, fmt.Errorf("want METRIC OP NUMBER, e.g. results[full].convergence_ms < 6000, with OP one of %s", strings.Join(Ops, " "))
	}
	c.Op = op
	m, err := results.ParseMetricRef(c.Text[:at])
	if err != nil {
		return c, err
	}
	c.Metric = m
	c.Bound, err = parseBound(strings.TrimSpace(c.Text[at+len(op):]), m)
	return c, err
}

// parseBound reads NUMBER[UNIT] in the unit of metric m.
func parseBound(s string, m results.MetricRef) (float64, error) {
	if s == "" {
		return 0, fmt.Errorf("missing number after the operator")
	}
	if v, ok := strings.CutSuffix(s, "%"); ok {
		f, err := number(strings.TrimSpace(v), s)
		return f / 100, err
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f, finite(f, s)
	}
	switch s { // for the metrics that are yes or no (converged, metastable)
	case "true":
		return 1, nil
	case "false":
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number, a percentage or a duration such as 250ms", s)
	}
	switch results.TimeUnit(m.Field) {
	case "ms":
		return float64(d) / float64(time.Millisecond), nil
	case "s":
		return d.Seconds(), nil
	}
	return 0, fmt.Errorf("%s is not a time (its name has no _ms or _seconds), so %s needs a plain number", m.Field, s)
}

func number(s, whole string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", whole)
	}
	return f, finite(f, whole)
}

func finite(f float64, s string) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("%q must be a finite number", s)
	}
	return nil
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

// String is the report line: "PASS METRIC OP BOUND: observed VALUE".
func (o Outcome) String() string {
	verdict := "FAIL"
	if o.Pass() {
		verdict = "PASS"
	}
	c := o.Check
	line := fmt.Sprintf("%s %s %s %s", verdict, c.Metric, c.Op, formatNumber(c.Bound))
	if !o.HasData && o.Why != "" {
		return line + ": no data (" + o.Why + ")"
	}
	if !o.HasData {
		return line + ": no data (is the model that produces it turned on?)"
	}
	return line + ": observed " + formatNumber(o.Observed)
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
