package solve

import (
	"cmp"
	"math"
	"slices"
)

// eval is what a search knows of one value of the key: every
// requirement's observation there, the worst over the given
// combinations (all of which must pass).
type eval struct {
	x      float64
	obs    []Observation // per requirement of the problem
	combo  []int         // per requirement: the combination whose observation obs holds
	probes []*probe      // the probes it was made of, one per combination
}

// search is the planner of one solve: from the values evaluated so far it
// says which to evaluate next, and once it needs none, the answer. It is a
// pure function of what it was told, so that the same verdicts give the
// same probes, in the same order, whatever runs them.
//
// The method (see docs/solve.md): probe min and max (or grow a bracket
// from start by doubling); read each requirement's side from them, a
// requirement that passes at max and fails at min bounding the answer
// from below, one that passes at min and fails at max from above; bisect
// each side's bracket to the resolution, every probe narrowing every
// bracket; the feasible values are the interval between. Every verdict is
// checked for monotonicity on every probe; a requirement whose verdict
// changes side twice sends the search to a grid scan, which reports
// every feasible stretch.
type search struct {
	d     *Domain
	reqs  []int // the requirements a value must meet (indexes)
	goal  Goal
	evals []*eval // sorted by x, one each

	result *Solution // set by step once it needs no more values
	rounds int       // steps that asked for values
}

func newSearch(d *Domain, reqs []int, goal Goal) *search {
	return &search{d: d, reqs: reqs, goal: goal}
}

// add records an evaluation; a value already known is kept as it was.
func (s *search) add(e *eval) {
	i, found := slices.BinarySearchFunc(s.evals, e.x, func(a *eval, x float64) int { return cmp.Compare(a.x, x) })
	if !found {
		s.evals = slices.Insert(s.evals, i, e)
	}
}

func (s *search) at(x float64) *eval {
	i, found := slices.BinarySearchFunc(s.evals, x, func(a *eval, x float64) int { return cmp.Compare(a.x, x) })
	if !found {
		return nil
	}
	return s.evals[i]
}

// pass reports whether e meets every requirement of the search.
func (s *search) pass(e *eval) bool {
	for _, r := range s.reqs {
		if !e.obs[r].Pass {
			return false
		}
	}
	return true
}

// step returns the values to evaluate next, none of them known; with
// none, the search is over and s.result holds its answer.
func (s *search) step() []float64 {
	if need := s.missing(s.bracketValues()); len(need) > 0 {
		s.rounds++
		return need
	}
	a := s.analyse()
	var need []float64
	switch {
	case len(a.violations) > 0:
		need = s.scan(a)
	case len(a.never) > 0:
		need = s.closest(a)
	default:
		need = s.bisect(a)
	}
	if need = s.missing(need); len(need) > 0 {
		s.rounds++
	}
	return need
}

// missing keeps the values not yet evaluated, in order, each once.
func (s *search) missing(xs []float64) []float64 {
	var out []float64
	for _, x := range xs {
		if s.at(x) == nil && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// bracketValues are the values a search starts from: min and max, or,
// from start, the doubling (or halving) that brackets the goal's end.
func (s *search) bracketValues() []float64 {
	if !s.d.HasStart {
		return []float64{s.d.Min, s.d.Max}
	}
	return s.grow()
}

// grow brackets the goal's end from start: it evaluates start, then
// walks away from it by doubling (or halving) until the verdict changes,
// in the direction that should change it: down from a passing start when
// the goal is least, up otherwise, and the other way from a failing one.
// A failing start whose requirements lose room in that direction, or a
// walk that reaches the range's end unchanged, falls back to the range's
// two ends, so that every requirement's side is read from them.
func (s *search) grow() []float64 {
	d := s.d
	first := s.at(d.Start)
	if first == nil {
		return []float64{d.Start}
	}
	up := s.pass(first) == (s.goal == Most)
	prev := first
	for x := d.Start; ; {
		next := d.walk(x, up)
		e := s.at(next)
		if e == nil {
			return []float64{next}
		}
		if s.pass(e) != s.pass(first) {
			return nil
		}
		if !s.pass(first) && s.worst(e, s.failing(first)) < s.worst(prev, s.failing(first)) || next == d.Min || next == d.Max {
			return []float64{d.Min, d.Max}
		}
		x, prev = next, e
	}
}

// side is which way a requirement's verdict goes across the range.
type side int

const (
	above  side = iota + 1 // fails at the bottom, passes at the top: bounds the answer from below
	below                  // passes at the bottom, fails at the top: bounds it from above
	always                 // passes at both ends
	never                  // fails at both ends
)

// analysis is what the evaluations say: each requirement's side, the
// verdicts that break monotonicity, the requirements that fail at both
// ends.
type analysis struct {
	side       map[int]side
	violations []Violation
	never      []int
}

// Violation is a requirement whose verdict is not monotone in the key: a
// pass at Pass lies on the wrong side of a fail at Fail (values in the
// key's unit).
type Violation struct {
	Requirement int
	Pass, Fail  float64
}

func (s *search) analyse() analysis {
	a := analysis{side: map[int]side{}}
	lo, hi := s.evals[0], s.evals[len(s.evals)-1]
	for _, r := range s.reqs {
		pl, ph := lo.obs[r].Pass, hi.obs[r].Pass
		switch {
		case !pl && ph:
			a.side[r] = above
		case pl && !ph:
			a.side[r] = below
		case pl && ph:
			a.side[r] = always
		default:
			a.side[r] = never
			a.never = append(a.never, r)
		}
		if v, ok := s.violation(r, a.side[r]); ok {
			a.violations = append(a.violations, v)
		}
	}
	return a
}

// violation finds the first neighbouring pair of evaluations where
// requirement r's verdict changes the wrong way for its side: from pass
// to fail for one that passes above, from fail to pass for one that
// passes below, and any change at all for one whose ends agree.
func (s *search) violation(r int, sd side) (Violation, bool) {
	for i := 1; i < len(s.evals); i++ {
		prev, cur := s.evals[i-1], s.evals[i]
		p, c := prev.obs[r].Pass, cur.obs[r].Pass
		if p == c {
			continue
		}
		upward := c // fail, then pass
		if sd == above && upward || sd == below && !upward {
			continue
		}
		if upward {
			return Violation{Requirement: r, Pass: cur.x, Fail: prev.x}, true
		}
		return Violation{Requirement: r, Pass: prev.x, Fail: cur.x}, true
	}
	return Violation{}, false
}

// lowerEnd is the bracket of the feasible values' lower end: the highest
// value where a requirement that passes above fails (none: the range's
// bottom binds) and the lowest value above it where all of them pass.
func (s *search) lowerEnd(a analysis) (fail, pass *eval) {
	return s.sideEnd(a, above, s.evals)
}

// upperEnd mirrors lowerEnd for the requirements that pass below,
// walking down from the top.
func (s *search) upperEnd(a analysis) (pass, fail *eval) {
	down := slices.Clone(s.evals)
	slices.Reverse(down)
	fail, pass = s.sideEnd(a, below, down)
	return pass, fail
}

// sideEnd walks evals in order and returns the last one where a
// requirement of side sd fails and the first after it where all pass.
func (s *search) sideEnd(a analysis, sd side, evals []*eval) (fail, pass *eval) {
	for _, e := range evals {
		ok := true
		for _, r := range s.reqs {
			if a.side[r] == sd && !e.obs[r].Pass {
				ok = false
			}
		}
		if !ok {
			fail, pass = e, nil
		} else if pass == nil {
			pass = e
		}
	}
	return fail, pass
}

// bisect narrows both ends of the feasible interval to the resolution,
// one middle each per step; when both are narrow, the answer is found,
// or no value passes and the search looks for the closest.
func (s *search) bisect(a analysis) []float64 {
	var need []float64
	fl, pl := s.lowerEnd(a)
	if x, ok := s.middle(fl, pl); ok {
		need = append(need, x)
	}
	pu, fu := s.upperEnd(a)
	if x, ok := s.middle(pu, fu); ok {
		need = append(need, x)
	}
	if len(need) > 0 {
		return need
	}
	if pl != nil && pu != nil && pl.x <= pu.x {
		s.found(a, fl, pl, pu, fu)
		return nil
	}
	need = s.closest(a)
	if s.result != nil && pl != nil && pu != nil {
		// Each side's end, though they do not meet: where the
		// requirements bounding from below start to hold, and where
		// those bounding from above stop.
		s.result.Low = s.end(pl, fl, func(r int) bool { return a.side[r] == above })
		s.result.High = s.end(pu, fu, func(r int) bool { return a.side[r] == below })
	}
	return need
}

// left estimates the values the search has yet to evaluate: the
// bisections of the brackets still open, on a monotone axis.
func (s *search) left() int {
	switch {
	case s.result != nil:
		return 0
	case len(s.evals) < 2:
		return 2 + s.d.Bisections()
	}
	a := s.analyse()
	fl, pl := s.lowerEnd(a)
	pu, fu := s.upperEnd(a)
	return max(1, s.steps(fl, pl)+s.steps(pu, fu))
}

// steps is how many bisections narrow [a, b] to the resolution.
func (s *search) steps(a, b *eval) int {
	if a == nil || b == nil {
		return 0
	}
	lo, hi := min(a.x, b.x), max(a.x, b.x)
	d := *s.d
	d.Min, d.Max = lo, hi
	if lo <= 0 && d.Relative || d.done(lo, hi) {
		return 0
	}
	return d.Bisections()
}

// middle is the value between two evaluations to probe next, if they
// are further apart than the resolution.
func (s *search) middle(a, b *eval) (float64, bool) {
	if a == nil || b == nil {
		return 0, false
	}
	lo, hi := min(a.x, b.x), max(a.x, b.x)
	if s.d.done(lo, hi) {
		return 0, false
	}
	return s.d.between(lo, hi)
}

// found records the answer of a monotone search: the interval [pl, pu],
// each end with the value beyond it that fails and the requirements of
// its side that fail there (none: the end of what was searched).
func (s *search) found(a analysis, fl, pl, pu, fu *eval) {
	sol := s.solution(a)
	sol.Feasible, sol.Monotone = true, true
	sol.Low = s.end(pl, fl, func(r int) bool { return a.side[r] == above })
	sol.High = s.end(pu, fu, func(r int) bool { return a.side[r] == below })
	sol.Answer = sol.Low
	if s.goal == Most {
		sol.Answer = sol.High
	}
	sol.Stretches = []Stretch{{Low: pl.x, High: pu.x}}
	s.result = sol
}

// solution is a result's common part: what was searched and how the
// verdicts behaved.
func (s *search) solution(a analysis) *Solution {
	return &Solution{Monotone: len(a.violations) == 0, Violations: a.violations,
		Searched: [2]float64{s.evals[0].x, s.evals[len(s.evals)-1].x}, Probes: len(s.evals)}
}

// end is one end of a feasible stretch: the passing value, the failing
// one beyond it (nil at the end of what was searched) and the
// requirements bind (those of its side, by bind) that fail there.
func (s *search) end(pass, fail *eval, bind func(r int) bool) End {
	e := End{X: pass.x, eval: pass}
	if fail == nil {
		return e
	}
	x := fail.x
	e.Fail, e.failEval = &x, fail
	for _, r := range s.reqs {
		if !fail.obs[r].Pass && bind(r) {
			e.Binding = append(e.Binding, r)
		}
	}
	return e
}

// closest is the search of an infeasible problem for the value that
// comes closest: the one whose worst relative margin is least bad. The
// requirements whose margins grow with the key pull one way, those that
// shrink the other; the best value is where the worst of each side is
// equal, which a bisection on their difference finds. With one side
// only, the worst margin is monotone and the best value is an end.
func (s *search) closest(a analysis) []float64 {
	up, down := s.trends()
	if len(up) > 0 && len(down) > 0 {
		diff := func(e *eval) float64 {
			g, h := s.worst(e, up), s.worst(e, down)
			if math.IsInf(g, -1) && math.IsInf(h, -1) {
				return 0
			}
			return g - h
		}
		for i := 1; i < len(s.evals); i++ {
			if diff(s.evals[i-1]) < 0 && diff(s.evals[i]) >= 0 {
				if x, ok := s.middle(s.evals[i-1], s.evals[i]); ok {
					return []float64{x}
				}
				break
			}
		}
	}
	best := s.evals[0]
	for _, e := range s.evals[1:] {
		if s.better(e, best) {
			best = e
		}
	}
	sol := s.solution(a)
	sol.Closest = &End{X: best.x, eval: best}
	sol.AtMin = s.failing(s.evals[0])
	sol.AtMax = s.failing(s.evals[len(s.evals)-1])
	s.result = sol
	return nil
}

// better reports whether a comes closer to passing than b: a larger
// worst relative margin, or on a tie the goal's side.
func (s *search) better(a, b *eval) bool {
	wa, wb := s.worst(a, s.reqs), s.worst(b, s.reqs)
	if wa != wb {
		return wa > wb
	}
	if s.goal == Most {
		return a.x > b.x
	}
	return a.x < b.x
}

// worst is the least relative margin of requirements rs at e.
func (s *search) worst(e *eval, rs []int) float64 {
	w := math.Inf(1)
	for _, r := range rs {
		w = min(w, e.rel(r))
	}
	return w
}

// trends splits the requirements by how their margins move from min to
// max: up (they gain room as the key grows) and down; a requirement whose
// margin does not move pulls neither way.
func (s *search) trends() (up, down []int) {
	lo, hi := s.evals[0], s.evals[len(s.evals)-1]
	for _, r := range s.reqs {
		a, b := lo.rel(r), hi.rel(r)
		switch {
		case b > a:
			up = append(up, r)
		case b < a:
			down = append(down, r)
		}
	}
	return up, down
}

// failing lists the requirements e fails.
func (s *search) failing(e *eval) []int {
	var out []int
	for _, r := range s.reqs {
		if !e.obs[r].Pass {
			out = append(out, r)
		}
	}
	return out
}

// scan handles a search whose verdicts are not monotone: every value of
// a grid over the range is evaluated, the feasible stretches are read off
// all the evaluations, and the goal's end of the goal's stretch is
// narrowed to the resolution between it and the failing value beside it.
func (s *search) scan(a analysis) []float64 {
	if need := s.missing(s.d.grid()); len(need) > 0 {
		return need
	}
	stretches := s.stretches()
	if len(stretches) == 0 {
		return s.closest(a)
	}
	i := 0 // the stretch of the answer: the first for least, the last for most
	if s.goal == Most {
		i = len(stretches) - 1
	}
	st := stretches[i]
	pass, fail := s.at(st.Low), s.before(st.Low)
	if s.goal == Most {
		pass, fail = s.at(st.High), s.after(st.High)
	}
	if x, ok := s.middle(fail, pass); ok {
		return []float64{x}
	}
	sol := s.solution(a)
	sol.Feasible, sol.Stretches = true, stretches
	all := func(int) bool { return true }
	sol.Answer = s.end(pass, fail, all)
	sol.Low = s.end(s.at(stretches[0].Low), s.before(stretches[0].Low), all)
	last := stretches[len(stretches)-1]
	sol.High = s.end(s.at(last.High), s.after(last.High), all)
	s.result = sol
	return nil
}

// stretches are the runs of neighbouring evaluations that pass every
// requirement, lowest first.
func (s *search) stretches() []Stretch {
	var out []Stretch
	in := false
	for _, e := range s.evals {
		switch p := s.pass(e); {
		case p && !in:
			out = append(out, Stretch{Low: e.x, High: e.x})
			in = true
		case p:
			out[len(out)-1].High = e.x
		default:
			in = false
		}
	}
	return out
}

func (s *search) before(x float64) *eval {
	i, _ := slices.BinarySearchFunc(s.evals, x, func(a *eval, x float64) int { return cmp.Compare(a.x, x) })
	if i == 0 {
		return nil
	}
	return s.evals[i-1]
}

func (s *search) after(x float64) *eval {
	i, found := slices.BinarySearchFunc(s.evals, x, func(a *eval, x float64) int { return cmp.Compare(a.x, x) })
	if found {
		i++
	}
	if i >= len(s.evals) {
		return nil
	}
	return s.evals[i]
}

// rel is requirement r's relative margin at e.
func (e *eval) rel(r int) float64 {
	return e.obs[r].Relative
}
