package solve

import (
	"cmp"
	"math"
	"slices"
)

// numbering gives probes their ids: in the order the cases' searches
// asked for them, first ask first, which does not depend on which storm
// finished first.
type numbering struct {
	ids   map[*probe]int
	order []*probe
}

func (n *numbering) id(pr *probe) int {
	if id, ok := n.ids[pr]; ok {
		return id
	}
	n.ids[pr] = len(n.order)
	n.order = append(n.order, pr)
	return n.ids[pr]
}

func number(crs []*caseRun) *numbering {
	n := &numbering{ids: map[*probe]int{}}
	for _, cr := range crs {
		for _, sr := range cr.searches {
			for _, x := range sr.asked {
				for _, pr := range sr.s.at(x).probes {
					n.id(pr)
				}
			}
		}
	}
	return n
}

// document is solve.json from the cases' searches.
func (p *Problem) document(crs []*caseRun) *Document {
	d := p.header()
	n := number(crs)
	answers, infeasible := 0, 0
	for _, cr := range crs {
		cd := p.caseDoc(cr, n)
		if cd.Result.Status == "answer" {
			answers++
		} else {
			infeasible++
		}
		d.Cases = append(d.Cases, cd)
	}
	switch {
	case infeasible == 0:
		d.Status = "answer"
	case answers == 0:
		d.Status = "infeasible"
	default:
		d.Status = "partial"
	}
	for id, pr := range n.order {
		pd := ProbeDoc{ID: id, Settings: pr.rec.Values, ConfigHash: pr.rec.ConfigHash, Seed: pr.rec.Seed, Replications: pr.rec.Replications, Pass: true}
		for _, o := range pr.obs {
			pd.Observations = append(pd.Observations, obsDoc(o, ""))
			pd.Pass = pd.Pass && o.Pass
		}
		d.Probes = append(d.Probes, pd)
	}
	return d
}

// caseDoc is one case's part of the document.
func (p *Problem) caseDoc(cr *caseRun, n *numbering) CaseDoc {
	cd := CaseDoc{Relax: []RelaxDoc{}, Bounds: []BoundDoc{}}
	if s := cr.c.setting; s != nil {
		cd.Across = &ValueDoc{Value: s.Label, X: cr.c.position}
	}
	for i, sr := range cr.searches {
		sd := p.searchDoc(sr, n)
		cd.Searches = append(cd.Searches, sd)
		if sr.role.kind == roleRelax {
			cd.Relax = append(cd.Relax, p.relaxDoc(sr, i))
		}
	}
	cd.Result = cd.Searches[0].Result
	if len(p.Given) > 0 {
		cd.Sensitivity = p.sensitivity(cr)
	}
	cd.Bounds = p.bounds(cr)
	return cd
}

// searchDoc is one search as written.
func (p *Problem) searchDoc(sr *searchRun, n *numbering) SearchDoc {
	sd := SearchDoc{Role: sr.role.kind, Goal: sr.s.goal, Requirements: sr.s.reqs, Seeded: sr.seeded, Steps: []StepDoc{}}
	if g := sr.role.given; g != nil {
		sd.Given = g.Path + "=" + g.Label
	}
	if sr.role.kind == roleRelax {
		i := sr.role.relax
		sd.Relax = &i
	}
	for _, cb := range sr.combos {
		sd.Combinations = append(sd.Combinations, cb.label())
	}
	for _, x := range sr.asked {
		e := sr.s.at(x)
		st := StepDoc{ValueDoc: p.value(x), Pass: sr.s.pass(e), Observations: p.observations(e, sr.combos)}
		for _, pr := range e.probes {
			st.Probes = append(st.Probes, n.id(pr))
		}
		sd.Steps = append(sd.Steps, st)
	}
	sd.Result = p.resultDoc(sr.s.result, sr.combos, n)
	return sd
}

// observations are every requirement's at e, each the worst over the
// combinations, named when there are several.
func (p *Problem) observations(e *eval, combos []combo) []ObsDoc {
	out := make([]ObsDoc, len(e.obs))
	for r, o := range e.obs {
		out[r] = obsDoc(o, comboName(combos, e.combo[r]))
	}
	return out
}

// comboName names combination i when there is a choice of them.
func comboName(combos []combo, i int) string {
	if len(combos) < 2 {
		return ""
	}
	return combos[i].label()
}

// resultDoc is a solution as written.
func (p *Problem) resultDoc(sol *Solution, combos []combo, n *numbering) ResultDoc {
	rd := ResultDoc{Status: "infeasible", Monotone: sol.Monotone, Stretches: []StretchDoc{}, Violations: []ViolationDoc{},
		FailsAtMin: orEmpty(sol.AtMin), FailsAtMax: orEmpty(sol.AtMax), Searched: [2]ValueDoc{p.value(sol.Searched[0]), p.value(sol.Searched[1])},
		Evaluations: sol.Probes}
	if sol.Feasible {
		rd.Status = "answer"
		rd.Answer = p.endDoc(sol.Answer, combos, n)
	}
	if sol.Low.eval != nil && sol.High.eval != nil {
		rd.Interval = &IntervalDoc{Low: *p.endDoc(sol.Low, combos, n), High: *p.endDoc(sol.High, combos, n)}
	}
	for _, st := range sol.Stretches {
		rd.Stretches = append(rd.Stretches, StretchDoc{Low: p.value(st.Low), High: p.value(st.High)})
	}
	for _, v := range sol.Violations {
		rd.Violations = append(rd.Violations, ViolationDoc{Requirement: v.Requirement, Pass: p.value(v.Pass), Fail: p.value(v.Fail)})
	}
	if sol.Closest != nil {
		rd.Closest = p.endDoc(*sol.Closest, combos, n)
	}
	return rd
}

func orEmpty(v []int) []int {
	if v == nil {
		return []int{}
	}
	return v
}

// endDoc is an end as written.
func (p *Problem) endDoc(e End, combos []combo, n *numbering) *EndDoc {
	ed := &EndDoc{ValueDoc: p.value(e.X), Bracket: []ValueDoc{p.value(e.X)}, Binding: []BindingDoc{}, Observations: p.observations(e.eval, combos)}
	if e.Fail != nil {
		ed.Bracket = append(ed.Bracket, p.value(*e.Fail))
		slices.SortFunc(ed.Bracket, func(a, b ValueDoc) int { return cmp.Compare(a.X, b.X) })
	}
	for _, r := range e.Binding {
		ed.Binding = append(ed.Binding, BindingDoc{Requirement: r, Margin: Number(e.eval.obs[r].Margin),
			FailedWith: Number(e.failEval.obs[r].Observed), Combination: comboName(combos, e.failEval.combo[r])})
	}
	for _, pr := range e.eval.probes {
		ed.Probes = append(ed.Probes, n.id(pr))
	}
	return ed
}

// relaxDoc is what the search without one requirement found.
func (p *Problem) relaxDoc(sr *searchRun, search int) RelaxDoc {
	i := sr.role.relax
	rd := RelaxDoc{Requirement: i, Needs: nan, Change: nan, Search: search}
	sol := sr.s.result
	if !sol.Feasible {
		rd.Why = "the other requirements cannot be met either"
		return rd
	}
	rd.Feasible = true
	rd.At = p.valuePtr(sol.Answer.X)
	o := sol.Answer.eval.obs[i]
	if !o.HasData {
		rd.Why = "no data there: " + o.Why
		return rd
	}
	rd.Needs = Number(o.Observed)
	if b := p.Requirements[i].Check.Bound; b != 0 {
		rd.Change = Number((o.Observed - b) / math.Abs(b))
	}
	return rd
}

// sensitivity is the answer with each given value alone, against the
// answer with none.
func (p *Problem) sensitivity(cr *caseRun) *SensitivityDoc {
	sd := &SensitivityDoc{Keys: []SensitiveKey{}}
	answer := func(sr *searchRun) *ValueDoc {
		if !sr.s.result.Feasible {
			return nil
		}
		return p.valuePtr(sr.s.result.Answer.X)
	}
	var given []*searchRun
	for _, sr := range cr.searches {
		switch sr.role.kind {
		case roleBase:
			sd.Base = answer(sr)
		case roleGiven:
			given = append(given, sr)
		}
	}
	next := 0 // the given searches are in the order of aloneCombos
	for _, g := range p.Given {
		k := SensitiveKey{Key: g.Path, Spread: nan}
		lo, hi, all := math.Inf(1), math.Inf(-1), true
		for vi := range g.Values {
			sr := given[next]
			next++
			sv := SensitiveValue{Given: ValueDoc{Value: g.Values[vi].Label, X: axisDoc(g).Values[vi].X}, Answer: answer(sr), Change: nan}
			if sv.Answer != nil {
				lo, hi = min(lo, sv.Answer.X), max(hi, sv.Answer.X)
				if sd.Base != nil {
					sv.Change = Number(sv.Answer.X - sd.Base.X)
				}
			} else {
				all = false
			}
			k.Values = append(k.Values, sv)
		}
		if all {
			k.Spread = Number(hi - lo)
		}
		sd.Keys = append(sd.Keys, k)
	}
	return sd
}
