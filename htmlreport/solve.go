package htmlreport

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"stormsim/results"
	"stormsim/solve"
)

// SolveFile is the document that marks a finished solve's directory.
const SolveFile = solve.ResultFile

func solveFromDir(dir string) (*Page, error) {
	data, err := os.ReadFile(filepath.Join(dir, SolveFile))
	if err != nil {
		return nil, err
	}
	return SolvePage(data)
}

// SolvePage is the page of a finished solve, from solve.json as written
// (embedded whole: it holds every probe): the answer, the interval or
// "infeasible" with what came closest and what to relax, the charts
// (each requirement against the key, the frontier with across), the
// sensitivity to each given value, the first-order bounds and every
// probe. The verdict is the exit code's: PASS when every case has an
// answer.
func SolvePage(data []byte) (*Page, error) {
	d, err := solve.ParseDocument(SolveFile, data)
	if err != nil {
		return nil, err
	}
	if len(d.Cases) == 0 || len(d.Requirements) == 0 {
		return nil, fmt.Errorf("%s: a solve with %d cases and %d requirements has nothing to show", SolveFile, len(d.Cases), len(d.Requirements))
	}
	for _, c := range d.Cases {
		if len(c.Searches) == 0 {
			return nil, fmt.Errorf("%s: a case without its search", SolveFile)
		}
	}
	p := &Page{Kind: "solve", Name: results.DisplayName(d.Name), Headline: solveHeadline(d), Verdict: "PASS"}
	if d.Status != "answer" {
		p.Verdict = "FAIL"
	}
	p.Facts = []Fact{{"varied", fmt.Sprintf("%s in [%s, %s], %s, to %s", d.Vary.Key, d.Vary.Min.Value, d.Vary.Max.Value, d.Vary.Goal, d.Vary.Resolution)},
		{"probes", count(int64(len(d.Probes)))}, {"replications per probe", fmt.Sprint(d.Replications)},
		{"seeds", fmt.Sprintf("%d-%d at every probe", d.Seed, d.Seed+uint64(max(d.Replications, 1))-1)},
		{"solve", shortHash(d.Solve)}, {"written by", d.Tool}}
	if d.Across != nil {
		p.Facts = append(p.Facts[:1], append([]Fact{{"across", fmt.Sprintf("%s (%d values)", d.Across.Key, len(d.Across.Values))}}, p.Facts[1:]...)...)
	}
	charts, err := d.Charts(chartOptions)
	section, err := chartSection(charts, err)
	if err != nil {
		return nil, err
	}
	p.Sections = append(p.Sections, solveAnswers(d))
	if s, ok := solveRelax(d); ok {
		p.Sections = append(p.Sections, s)
	}
	p.Sections = append(p.Sections, section)
	if s, ok := solveSensitivity(d); ok {
		p.Sections = append(p.Sections, s)
	}
	if s, ok := solveBounds(d); ok {
		p.Sections = append(p.Sections, s)
	}
	p.Sections = append(p.Sections, solveProbes(d))
	p.Config = Config{Title: "solve", Text: solveText(d), Hash: d.Solve}
	p.Data = []Data{{ID: "data-solve", File: SolveFile, Body: data}}
	return p, nil
}

// solveHeadline is the answer in one sentence: the value and what binds
// it, the frontier's count, or that nothing meets every requirement and
// what came closest.
func solveHeadline(d *solve.Document) string {
	key := d.Vary.Key
	if d.Across != nil {
		found := 0
		for _, c := range d.Cases {
			if c.Result.Status == "answer" {
				found++
			}
		}
		if found == len(d.Cases) {
			return fmt.Sprintf("The %s %s meeting every requirement, for each of %d values of %s: the frontier below.", d.Vary.Goal, key, len(d.Cases), d.Across.Key)
		}
		return fmt.Sprintf("%d of %d values of %s have a %s that meets every requirement; %d have none.", found, len(d.Cases), d.Across.Key, key, len(d.Cases)-found)
	}
	r := d.Cases[0].Result
	if r.Status == "answer" {
		a := r.Answer
		return fmt.Sprintf("The %s %s that meets every requirement is %s (bracket %s); %s.", d.Vary.Goal, key, a.Value, solve.BracketText(a), bindsText(d, a))
	}
	s := fmt.Sprintf("No %s in [%s, %s] meets every requirement.", key, r.Searched[0].Value, r.Searched[1].Value)
	if r.Closest != nil {
		s += fmt.Sprintf(" The closest is %s: relax one requirement (below).", r.Closest.Value)
	}
	return s
}

// bindsText names what binds an end, in words.
func bindsText(d *solve.Document, e *solve.EndDoc) string {
	if len(e.Binding) == 0 {
		return "no requirement binds it: the searched range's end does"
	}
	return "it binds on " + d.BindingText(e)
}

// solveAnswers is the answer of each case: its value and bracket, what
// binds it with the margin left, the feasible interval's ends, or what
// fails at each end and what came closest; a verdict that changes side
// twice is said with the stretches a grid found.
func solveAnswers(d *solve.Document) Section {
	sec := Section{ID: "answer", Title: "answer"}
	t := Table{ID: "answer-table"}
	if d.Across != nil {
		t.Header = append(t.Header, d.Across.Key)
	}
	t.Header = append(t.Header, "status", string(d.Vary.Goal)+" "+d.Vary.Key, "bracket", "binds, or fails at each end", "feasible, or where each holds", "probes")
	for _, c := range d.Cases {
		r := c.Result
		var row []Cell
		if d.Across != nil {
			row = append(row, Cell{Text: c.Across.Value})
		}
		n := Cell{Text: fmt.Sprint(len(c.Searches[0].Steps)), Class: "num"}
		if r.Status == "answer" {
			a := r.Answer
			feasible := ""
			if iv := r.Interval; iv != nil && r.Monotone {
				feasible = fmt.Sprintf("%s to %s (low end: %s; high end: %s)", iv.Low.Value, iv.High.Value, d.BindingText(&iv.Low), d.BindingText(&iv.High))
			}
			row = append(row, Cell{Text: "ANSWER", Class: "pass"}, Cell{Text: a.Value, Class: "num"}, Cell{Text: solve.BracketText(a), Class: "num"},
				Cell{Text: marginsText(d, a)}, Cell{Text: feasible}, n)
		} else {
			closest := "none"
			if r.Closest != nil {
				closest = "closest " + r.Closest.Value
			}
			row = append(row, Cell{Text: "INFEASIBLE", Class: "fail"}, Cell{Text: closest, Class: "num"}, Cell{Text: ""},
				Cell{Text: fmt.Sprintf("at %s fails %s; at %s fails %s", r.Searched[0].Value, d.ListText(r.FailsAtMin), r.Searched[1].Value, d.ListText(r.FailsAtMax))},
				Cell{Text: eachEnd(d, r)}, n)
		}
		t.Rows = append(t.Rows, row)
		say := func(format string, args ...any) {
			s := fmt.Sprintf(format, args...)
			if d.Across != nil {
				s = fmt.Sprintf("At %s = %s: %s", d.Across.Key, c.Across.Value, s)
			} else {
				s = strings.ToUpper(s[:1]) + s[1:]
			}
			sec.Text = append(sec.Text, s)
		}
		if r.Closest != nil {
			say("the closest value is %s = %s, where %s.", d.Vary.Key, r.Closest.Value, d.ObservationsText(r.Closest.Observations))
		}
		for _, v := range r.Violations {
			say("NOT MONOTONE: %s passes at %s = %s but fails at %s, on the wrong side of it.", d.RequirementText(v.Requirement), d.Vary.Key, v.Pass.Value, v.Fail.Value)
		}
		if !r.Monotone && len(r.Stretches) > 0 {
			var st []string
			for _, s := range r.Stretches {
				st = append(st, "["+s.Low.Value+", "+s.High.Value+"]")
			}
			say("scanned on a grid of %d values: every requirement holds in %s.", d.Vary.Scan, strings.Join(st, ", "))
		}
	}
	var reqs []string
	for i := range d.Requirements {
		reqs = append(reqs, d.RequirementText(i))
	}
	intro := fmt.Sprintf("A probe passes when every requirement holds over its %d replication%s (the same seeds at every probe): %s.", d.Replications, plural(d.Replications), strings.Join(reqs, "; "))
	if len(d.Given) > 0 {
		var keys []string
		for _, g := range d.Given {
			var vs []string
			for _, v := range g.Values {
				vs = append(vs, v.Value)
			}
			keys = append(keys, g.Key+" in ["+strings.Join(vs, ", ")+"]")
		}
		intro += fmt.Sprintf(" It must pass for every combination of %s; binds names the combination that fails beside the answer.", strings.Join(keys, " and "))
	}
	sec.Text = append([]string{intro}, sec.Text...)
	sec.Tables = []Table{t}
	return sec
}

// eachEnd is, for an infeasible case, where each requirement holds.
func eachEnd(d *solve.Document, r solve.ResultDoc) string {
	iv := r.Interval
	if iv == nil || !r.Monotone {
		return ""
	}
	var parts []string
	for _, b := range iv.Low.Binding {
		parts = append(parts, fmt.Sprintf("%s holds from %s up", d.RequirementText(b.Requirement), iv.Low.Value))
	}
	for _, b := range iv.High.Binding {
		parts = append(parts, fmt.Sprintf("%s holds up to %s", d.RequirementText(b.Requirement), iv.High.Value))
	}
	return strings.Join(parts, "; ")
}

// marginsText names what binds an answer: observed there, the margin
// left, and what failed at the bracket's other end.
func marginsText(d *solve.Document, a *solve.EndDoc) string {
	if len(a.Binding) == 0 {
		return "nothing: the range's end"
	}
	other := a.Value
	for _, b := range a.Bracket {
		if b.Value != a.Value {
			other = b.Value
		}
	}
	var parts []string
	for _, b := range a.Binding {
		s := fmt.Sprintf("%s: %s here (margin %s), %s at %s", d.RequirementText(b.Requirement), d.ObservedText(b.Requirement, a.Observations[b.Requirement]),
			d.MetricText(b.Requirement, float64(b.Margin)), d.MetricText(b.Requirement, float64(b.FailedWith)), other)
		if b.Combination != "" {
			s += " with " + b.Combination
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// solveRelax is what each requirement would have to allow for the
// others to hold, for the cases that have no answer.
func solveRelax(d *solve.Document) (Section, bool) {
	t := Table{ID: "relax-table"}
	if d.Across != nil {
		t.Header = append(t.Header, d.Across.Key)
	}
	t.Header = append(t.Header, "requirement", "relaxed to", "change", "at "+d.Vary.Key)
	for _, c := range d.Cases {
		for _, rx := range c.Relax {
			var row []Cell
			if d.Across != nil {
				row = append(row, Cell{Text: c.Across.Value})
			}
			r := d.Requirements[rx.Requirement]
			switch {
			case !rx.Feasible, rx.Why != "":
				row = append(row, Cell{Text: d.RequirementText(rx.Requirement)}, Cell{Text: rx.Why}, Cell{}, Cell{Text: valueOr(rx.At)})
			default:
				change := ""
				if !math.IsNaN(float64(rx.Change)) {
					change = solve.PercentText(float64(rx.Change))
				}
				row = append(row, Cell{Text: d.RequirementText(rx.Requirement)}, Cell{Text: r.Op + " " + d.MetricText(rx.Requirement, float64(rx.Needs)), Class: "num"},
					Cell{Text: change, Class: "num"}, Cell{Text: valueOr(rx.At), Class: "num"})
			}
			t.Rows = append(t.Rows, row)
		}
	}
	if len(t.Rows) == 0 {
		return Section{}, false
	}
	return Section{ID: "relax", Title: "what to relax", Tables: []Table{t},
		Text: []string{fmt.Sprintf("No %s meets every requirement. Each row leaves one requirement out and solves for the others: at the end of their feasible values where it has the most room, the bound it would need.", d.Vary.Key)}}, true
}

func valueOr(v *solve.ValueDoc) string {
	if v == nil {
		return ""
	}
	return v.Value
}

// solveSensitivity is the answer with each given value alone, the other
// keys as the base scenario has them: which guess moves the answer, and
// how far.
func solveSensitivity(d *solve.Document) (Section, bool) {
	t := Table{ID: "sensitivity-table"}
	if d.Across != nil {
		t.Header = append(t.Header, d.Across.Key)
	}
	t.Header = append(t.Header, "given", "value", string(d.Vary.Goal)+" "+d.Vary.Key, "change from the base")
	var bases []string
	for _, c := range d.Cases {
		s := c.Sensitivity
		if s == nil {
			continue
		}
		lead := func() []Cell {
			if d.Across != nil {
				return []Cell{{Text: c.Across.Value}}
			}
			return nil
		}
		bases = append(bases, valueOr(s.Base))
		for _, k := range s.Keys {
			for _, v := range k.Values {
				answer, change := Cell{Text: "none", Class: "fail"}, Cell{Class: "num"}
				if v.Answer != nil {
					answer = Cell{Text: v.Answer.Value, Class: "num"}
				}
				if !math.IsNaN(float64(v.Change)) {
					change.Text = d.ShiftText(float64(v.Change), true)
				}
				t.Rows = append(t.Rows, append(lead(), Cell{Text: k.Key}, Cell{Text: v.Given.Value}, answer, change))
			}
			if !math.IsNaN(float64(k.Spread)) {
				t.Rows = append(t.Rows, append(lead(), Cell{Text: k.Key}, Cell{Text: "spread"}, Cell{Text: d.ShiftText(float64(k.Spread), false), Class: "num"}, Cell{}))
			}
		}
	}
	if len(t.Rows) == 0 {
		return Section{}, false
	}
	for i, b := range bases {
		if b == "" {
			bases[i] = "none"
		}
	}
	return Section{ID: "sensitivity", Title: "sensitivity", Tables: []Table{t},
		Text: []string{fmt.Sprintf("Each guess alone, the other keys as the base scenario has them (the base's answer: %s). The answer above holds for every combination; a wide spread is a guess worth pinning down.", strings.Join(bases, ", "))}}, true
}

// solveBounds are the first-order bounds a planner works out by hand,
// beside the simulated ends.
func solveBounds(d *solve.Document) (Section, bool) {
	t := Table{ID: "bounds-table"}
	if d.Across != nil {
		t.Header = append(t.Header, d.Across.Key)
	}
	t.Header = append(t.Header, "requirement", "by hand", "formula", "simulated", "from it")
	for _, c := range d.Cases {
		for _, b := range c.Bounds {
			var row []Cell
			if d.Across != nil {
				row = append(row, Cell{Text: c.Across.Value})
			}
			sim, dist := Cell{Text: "binds elsewhere"}, Cell{Class: "num"}
			if b.Simulated != nil {
				sim = Cell{Text: b.Simulated.Value, Class: "num"}
				if !math.IsNaN(float64(b.Distance)) {
					dist.Text = solve.PercentText(float64(b.Distance))
				}
			}
			row = append(row, Cell{Text: d.RequirementText(b.Requirement)}, Cell{Text: d.Vary.Key + " " + b.Side + " " + b.Bound.Value, Class: "num"},
				Cell{Text: b.Formula}, sim, dist)
			t.Rows = append(t.Rows, row)
		}
	}
	if len(t.Rows) == 0 {
		return Section{}, false
	}
	return Section{ID: "bounds", Title: "first-order bounds", Tables: []Table{t},
		Text: []string{"Worked out by hand from the config, without backoff, jitter or latency, beside the end the simulation finds for the same requirement."}}, true
}

// solveProbes is every probe, in the order the searches asked for them:
// its settings (a given key it leaves out is the base scenario's), its
// verdict and each requirement's observation, marked where it fails.
func solveProbes(d *solve.Document) Section {
	var keys []string
	seen := map[string]bool{}
	for _, pr := range d.Probes {
		for _, s := range pr.Settings {
			if !seen[s.Path] {
				seen[s.Path] = true
				keys = append(keys, s.Path)
			}
		}
	}
	t := Table{ID: "probes-table", Header: append([]string{"probe"}, keys...)}
	t.Header = append(t.Header, "verdict")
	for _, r := range d.Requirements {
		t.Header = append(t.Header, r.Metric)
	}
	for _, pr := range d.Probes {
		row := []Cell{{Text: fmt.Sprint(pr.ID), Class: "num"}}
		for _, k := range keys {
			cell := Cell{Text: "base"}
			for _, s := range pr.Settings {
				if s.Path == k {
					cell = Cell{Text: s.Label, Class: "num"}
				}
			}
			row = append(row, cell)
		}
		if pr.Pass {
			row = append(row, Cell{Text: "PASS", Class: "pass"})
		} else {
			row = append(row, Cell{Text: "FAIL", Class: "fail"})
		}
		for i := range d.Requirements {
			cell := Cell{Class: "num"}
			if i < len(pr.Observations) {
				o := pr.Observations[i]
				cell.Text = d.ObservedText(i, o)
				if !o.Pass {
					cell.Class = "num marked"
				}
			}
			row = append(row, cell)
		}
		t.Rows = append(t.Rows, row)
	}
	return Section{ID: "probes", Title: "probes", Tables: []Table{t},
		Text: []string{fmt.Sprintf("Every probe the solve ran, %d replication%s each; an observation that fails its requirement is marked. %s holds them with every margin.", d.Replications, plural(d.Replications), SolveFile)}}
}

// solveText is the problem as its file states it, rebuilt from the
// document.
func solveText(d *solve.Document) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\nbase config hash: %s\n", d.Name, d.BaseConfigHash)
	fmt.Fprintf(&b, "replications: %d\n", d.Replications)
	fmt.Fprintf(&b, "vary: {key: %s, min: %s, max: %s, goal: %s, resolution: %s", d.Vary.Key, d.Vary.Min.Value, d.Vary.Max.Value, d.Vary.Goal, d.Vary.Resolution)
	if d.Vary.Start != nil {
		fmt.Fprintf(&b, ", start: %s", d.Vary.Start.Value)
	}
	b.WriteString("}\nrequire:\n")
	for _, r := range d.Requirements {
		fmt.Fprintf(&b, "  - %s\n", r.Text)
	}
	values := func(a solve.AxisDoc) string {
		var vs []string
		for _, v := range a.Values {
			vs = append(vs, v.Value)
		}
		return "[" + strings.Join(vs, ", ") + "]"
	}
	if d.Across != nil {
		fmt.Fprintf(&b, "across: {key: %s, values: %s}\n", d.Across.Key, values(*d.Across))
	}
	if len(d.Given) > 0 {
		b.WriteString("given:\n")
		for _, g := range d.Given {
			fmt.Fprintf(&b, "  %s: %s\n", g.Key, values(g))
		}
	}
	return b.String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
