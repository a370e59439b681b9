package solve

// Solution is the outcome of one search, in the key's unit.
type Solution struct {
	// Feasible: some value passes every requirement. Answer is then the
	// goal's end of the feasible values (the least or the most), and Low
	// and High the feasible values' outer ends; each End names the value
	// beyond it that fails and the requirements that fail there.
	Feasible     bool
	Answer       End
	Low, High    End
	Stretches    []Stretch // the feasible values: one interval when Monotone
	Monotone     bool      // no verdict changed side twice (else Violations)
	Violations   []Violation
	Closest      *End  // infeasible: the value whose worst relative margin is least bad
	AtMin, AtMax []int // infeasible: the requirements failing at each end of what was searched
	Searched     [2]float64
	Probes       int // values evaluated
}

// End is one end of a feasible stretch.
type End struct {
	X       float64
	Fail    *float64 // the neighbouring value that fails; nil: the end of what was searched
	Binding []int    // the requirements that fail at Fail

	eval, failEval *eval
}

// Stretch is a run of evaluated values that all pass, from Low to High.
type Stretch struct{ Low, High float64 }
