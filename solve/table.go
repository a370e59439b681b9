package solve

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"stormsim/internal/safetext"
)

// WriteTable writes the solve for a terminal: the question, each case's
// answer (the frontier with across), why an infeasible one fails and
// what to relax, the sensitivity to each given value, the first-order
// bounds, and the probes of a single case.
func (d *Document) WriteTable(w io.Writer) error {
	t := &table{d: d, w: w}
	t.question()
	if d.Across != nil {
		t.frontier()
	}
	for i := range d.Cases {
		c := &d.Cases[i]
		if d.Across != nil {
			if c.Result.Status == "answer" && len(c.Result.Violations) == 0 && c.Sensitivity == nil {
				continue // the frontier said it all
			}
			t.printf("\n%s %s:\n", d.Across.Key, c.Across.Value)
		}
		t.result(c)
		t.relax(c)
		t.sensitivity(c)
		t.bounds(c)
	}
	if len(d.Cases) == 1 {
		t.probes(&d.Cases[0])
	}
	return t.err
}

type table struct {
	d   *Document
	w   io.Writer
	err error
}

func (t *table) printf(format string, args ...any) {
	if t.err == nil {
		_, t.err = fmt.Fprintf(t.w, format, args...)
	}
}

// req names requirement i as it is met: "p95(results[full].convergence_ms) <= 60s".
func (t *table) req(i int) string { return t.d.RequirementText(i) }

// obs writes requirement i's observation.
func (t *table) obs(i int, o ObsDoc) string { return t.d.ObservedText(i, o) }

// RequirementText names requirement i as it is met, its bound in its
// unit: "p95(results[full].convergence_ms) <= 60s".
func (d *Document) RequirementText(i int) string {
	r := d.Requirements[i]
	return safetext.Terminal(r.Metric) + " " + r.Op + " " + formatMetric(r.Bound, r.Unit)
}

// ObservedText writes observation o of requirement i in the
// requirement's unit ("60.7s", "25,000"), or "no data" and why.
func (d *Document) ObservedText(i int, o ObsDoc) string {
	if math.IsNaN(float64(o.Observed)) {
		if o.Why != "" {
			return "no data (" + o.Why + ")"
		}
		return "no data"
	}
	return d.MetricText(i, float64(o.Observed))
}

// MetricText writes v, a value of requirement i's metric, in the
// requirement's unit.
func (d *Document) MetricText(i int, v float64) string {
	return formatMetric(v, d.Requirements[i].Unit)
}

// BracketText writes an end's bracket, [failing neighbour, value] in the
// key's order: "[43, 44]".
func BracketText(e *EndDoc) string { return bracketText(e) }

// PercentText writes a fraction as a signed percentage to three
// significant digits: 0.687 is "+68.7%".
func PercentText(f float64) string { return formatPercent(f) }

func (t *table) key() string { return safetext.Terminal(t.d.Vary.Key) }

func (t *table) question() {
	d := t.d
	across := ""
	if d.Across != nil {
		across = ", for each " + safetext.Terminal(d.Across.Key)
	}
	t.printf("%s: the %s %s in [%s, %s] to %s%s; %d replication%s (seeds %d-%d) of %s at every probe\n",
		safetext.Terminal(d.Name), d.Vary.Goal, t.key(), d.Vary.Min.Value, d.Vary.Max.Value, d.Vary.Resolution, across,
		d.Replications, plural(d.Replications), d.Seed, d.Seed+uint64(d.Replications)-1, strings.Join(d.Policies, ", "))
	for i := range d.Requirements {
		t.printf("  require %s\n", t.req(i))
	}
	for _, g := range d.Given {
		var vs []string
		for _, v := range g.Values {
			vs = append(vs, v.Value)
		}
		t.printf("  for every %s in [%s]\n", safetext.Terminal(g.Key), safetext.Terminal(strings.Join(vs, ", ")))
	}
}

// frontier is one line per across value.
func (t *table) frontier() {
	t.printf("\n")
	tw := tabwriter.NewWriter(t.w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\t%s %s\tbracket\tfirst-order\tprobes\tbinds at the answer\t\n", safetext.Terminal(t.d.Across.Key), t.d.Vary.Goal, t.key())
	for _, c := range t.d.Cases {
		r := c.Result
		answer, bracket, binds := "none", "", "fails: "+t.failsAt(r)
		if a := r.Answer; a != nil {
			answer, bracket, binds = a.Value, bracketText(a), t.binding(a)
		}
		bound := ""
		for _, b := range c.Bounds {
			if bound == "" {
				bound = b.Side + " " + b.Bound.Value
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t\n", c.Across.Value, answer, bracket, bound, len(c.Searches[0].Steps), binds)
	}
	if err := tw.Flush(); err != nil && t.err == nil {
		t.err = err
	}
}

func bracketText(a *EndDoc) string {
	if len(a.Bracket) < 2 {
		return "[" + a.Value + "]"
	}
	return "[" + a.Bracket[0].Value + ", " + a.Bracket[1].Value + "]"
}

// binding names what binds an end: its requirements, or the range.
func (t *table) binding(e *EndDoc) string { return t.d.BindingText(e) }

// BindingText names what binds an end: its requirements, each with the
// given combination that failed beside it, or "the range's end".
func (d *Document) BindingText(e *EndDoc) string {
	if len(e.Binding) == 0 {
		return "the range's end"
	}
	var parts []string
	for _, b := range e.Binding {
		s := d.RequirementText(b.Requirement)
		if b.Combination != "" {
			s += " with " + safetext.Terminal(b.Combination)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

func (t *table) failsAt(r ResultDoc) string {
	var parts []string
	for _, i := range r.FailsAtMax {
		parts = append(parts, t.req(i))
	}
	for _, i := range r.FailsAtMin {
		if !slices.Contains(r.FailsAtMax, i) {
			parts = append(parts, t.req(i))
		}
	}
	return strings.Join(parts, "; ")
}

// result says the answer, or why there is none.
func (t *table) result(c *CaseDoc) {
	r := c.Result
	n := len(c.Searches[0].Steps)
	if r.Status == "answer" {
		a := r.Answer
		t.printf("\nANSWER: %s %s = %s (bracket %s, %d probes%s)\n", t.d.Vary.Goal, t.key(), a.Value, bracketText(a), n, combos(c))
		t.printf("  binds: %s\n", t.margins(a))
		if iv := r.Interval; iv != nil && r.Monotone {
			t.printf("  feasible: %s %s to %s (low end: %s; high end: %s)\n", t.key(), iv.Low.Value, iv.High.Value, t.binding(&iv.Low), t.binding(&iv.High))
		}
	} else {
		t.printf("\nINFEASIBLE: no %s in [%s, %s] meets every requirement (%d probes%s)\n", t.key(), r.Searched[0].Value, r.Searched[1].Value, n, combos(c))
		if iv := r.Interval; iv != nil && r.Monotone {
			for _, b := range iv.Low.Binding {
				t.printf("  %s holds from %s = %s up (fails at %s: %s)\n", t.req(b.Requirement), t.key(), iv.Low.Value, otherEnd(&iv.Low), formatMetric(float64(b.FailedWith), t.d.Requirements[b.Requirement].Unit))
			}
			for _, b := range iv.High.Binding {
				t.printf("  %s holds up to %s = %s (fails at %s: %s)\n", t.req(b.Requirement), t.key(), iv.High.Value, otherEnd(&iv.High), formatMetric(float64(b.FailedWith), t.d.Requirements[b.Requirement].Unit))
			}
		}
		t.printf("  at %s = %s it fails %s; at %s it fails %s\n", t.key(), r.Searched[0].Value, t.list(r.FailsAtMin), r.Searched[1].Value, t.list(r.FailsAtMax))
		if cl := r.Closest; cl != nil {
			t.printf("  closest: %s = %s, where %s\n", t.key(), cl.Value, t.observations(cl.Observations))
		}
	}
	if !r.Monotone {
		for _, v := range r.Violations {
			t.printf("  NOT MONOTONE: %s passes at %s = %s but fails at %s\n", t.req(v.Requirement), t.key(), v.Pass.Value, v.Fail.Value)
		}
		var st []string
		for _, s := range r.Stretches {
			st = append(st, "["+s.Low.Value+", "+s.High.Value+"]")
		}
		if len(st) > 0 {
			t.printf("  scanned on a grid of %d: every requirement holds in %s\n", t.d.Vary.Scan, strings.Join(st, ", "))
		}
	}
}

func combos(c *CaseDoc) string {
	if n := len(c.Searches[0].Combinations); n > 1 {
		return fmt.Sprintf(", each of %d combinations", n)
	}
	return ""
}

func otherEnd(e *EndDoc) string {
	for _, b := range e.Bracket {
		if b.Value != e.Value {
			return b.Value
		}
	}
	return e.Value
}

func (t *table) list(reqs []int) string { return t.d.ListText(reqs) }

// ListText names requirements reqs, "; " between them, or "nothing".
func (d *Document) ListText(reqs []int) string {
	if len(reqs) == 0 {
		return "nothing"
	}
	var parts []string
	for _, i := range reqs {
		parts = append(parts, d.RequirementText(i))
	}
	return strings.Join(parts, "; ")
}

// margins names what binds the answer and how much room it leaves.
func (t *table) margins(a *EndDoc) string {
	if len(a.Binding) == 0 {
		return "nothing: the range's end (widen vary's min or max to search further)"
	}
	var parts []string
	for _, b := range a.Binding {
		r := t.d.Requirements[b.Requirement]
		s := fmt.Sprintf("%s (observed %s here, margin %s; %s at %s)", t.req(b.Requirement), t.obs(b.Requirement, a.Observations[b.Requirement]),
			formatMetric(float64(b.Margin), r.Unit), formatMetric(float64(b.FailedWith), r.Unit), otherEnd(a))
		if b.Combination != "" {
			s += ", with " + safetext.Terminal(b.Combination)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

func (t *table) observations(obs []ObsDoc) string { return t.d.ObservationsText(obs) }

// ObservationsText writes each requirement's observation at one value
// and whether it passes or by how much it is over.
func (d *Document) ObservationsText(obs []ObsDoc) string {
	var parts []string
	for i, o := range obs {
		s := d.RequirementText(i) + " observes " + d.ObservedText(i, o)
		if o.Pass {
			s += " (passes)"
		} else if r := float64(o.RelativeMargin); !math.IsInf(r, 0) && !math.IsNaN(r) {
			s += " (" + formatPercent(-r) + " over)"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// relax says what each requirement would have to allow.
func (t *table) relax(c *CaseDoc) {
	if len(c.Relax) == 0 {
		return
	}
	t.printf("relax one requirement:\n")
	for _, rx := range c.Relax {
		r := t.d.Requirements[rx.Requirement]
		switch {
		case !rx.Feasible:
			t.printf("  %s: relaxing it alone is not enough: %s\n", t.req(rx.Requirement), rx.Why)
		case rx.Why != "":
			t.printf("  %s: at %s = %s, where the others hold, %s\n", t.req(rx.Requirement), t.key(), rx.At.Value, rx.Why)
		default:
			change := ""
			if !math.IsNaN(float64(rx.Change)) {
				change = " (" + formatPercent(float64(rx.Change)) + ")"
			}
			t.printf("  %s %s %s%s: met at %s = %s, where every other requirement holds\n", safetext.Terminal(r.Metric), r.Op,
				formatMetric(float64(rx.Needs), r.Unit), change, t.key(), rx.At.Value)
		}
	}
}

// sensitivity is the table of each given value alone.
func (t *table) sensitivity(c *CaseDoc) {
	s := c.Sensitivity
	if s == nil {
		return
	}
	base := "none"
	if s.Base != nil {
		base = s.Base.Value
	}
	t.printf("each guess alone (the others as the base config has them; base answer %s):\n", base)
	tw := tabwriter.NewWriter(t.w, 0, 0, 2, ' ', 0)
	for _, k := range s.Keys {
		for _, v := range k.Values {
			answer, change := "none", ""
			if v.Answer != nil {
				answer = v.Answer.Value
			}
			if !math.IsNaN(float64(v.Change)) {
				change = t.d.ShiftText(float64(v.Change), true)
			}
			fmt.Fprintf(tw, "  %s=%s\t%s\t%s\t\n", safetext.Terminal(k.Key), safetext.Terminal(v.Given.Value), answer, change)
		}
		if !math.IsNaN(float64(k.Spread)) {
			fmt.Fprintf(tw, "  \t\tspread %s\t\n", t.d.ShiftText(float64(k.Spread), false))
		}
	}
	if err := tw.Flush(); err != nil && t.err == nil {
		t.err = err
	}
}

// bounds prints the first-order bounds beside the simulated ends.
func (t *table) bounds(c *CaseDoc) {
	if len(c.Bounds) == 0 {
		return
	}
	t.printf("first-order bounds (by hand from the config, without backoff, jitter or latency):\n")
	for _, b := range c.Bounds {
		sim := "the simulation binds elsewhere"
		if b.Simulated != nil {
			sim = fmt.Sprintf("simulated %s, %s from it", b.Simulated.Value, formatPercent(float64(b.Distance)))
		}
		t.printf("  %s: %s %s %s = %s; %s\n", t.req(b.Requirement), t.key(), b.Side, b.Bound.Value, b.Formula, sim)
	}
}

// probes lists a single case's answer search, value by value.
func (t *table) probes(c *CaseDoc) {
	t.printf("\nprobes, in the order the search asked for them:\n")
	tw := tabwriter.NewWriter(t.w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tverdict\t", t.key())
	for _, r := range t.d.Requirements {
		fmt.Fprintf(tw, "%s\t", safetext.Terminal(r.Metric))
	}
	fmt.Fprintln(tw)
	for _, st := range c.Searches[0].Steps {
		verdict := "FAIL"
		if st.Pass {
			verdict = "pass"
		}
		fmt.Fprintf(tw, "%s\t%s\t", st.Value, verdict)
		for i, o := range st.Observations {
			mark := ""
			if !o.Pass {
				mark = " x"
			}
			s := formatMetric(float64(o.Observed), t.d.Requirements[i].Unit)
			fmt.Fprintf(tw, "%s%s\t", s, mark)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil && t.err == nil {
		t.err = err
	}
}
