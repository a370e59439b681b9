package plots

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// solveOf is a one-group solve of two requirements over probes at xs,
// the first holding from 562 up, the second up to 177.7, as the seed's
// question has them.
func solveOf(answer float64) Solve {
	xs := []float64{50, 177.7, 179.3, 557, 562, 5000}
	window := SolvePanel{Metric: SweepMetric{Name: "p95(convergence_ms)", Unit: "ms"}, Op: "<=", Limit: 60000}
	budget := SolvePanel{Metric: SweepMetric{Name: "max(peak_rows_per_s)"}, Axis: "rows/s", Op: "<=", Limit: 25000}
	for _, x := range xs {
		window.Points = append(window.Points, SolvePoint{X: x, Y: 3e7 / x, Pass: x >= 562})
		budget.Points = append(budget.Points, SolvePoint{X: x, Y: 140 * x, Pass: x <= 177.7})
	}
	return Solve{File: "requirements", Caption: "c", Key: SolveKey{Name: "admission.rate", Min: 50, Max: 5000, Log: true, Goal: "least"},
		Groups: []string{""}, Panels: []SolvePanel{window, budget}, Answers: []float64{answer}}
}

func TestSolveTitles(t *testing.T) {
	if got, want := solveOf(math.NaN()).title(), "No admission.rate meets every requirement: p95(convergence_ms) holds from 562 up, max(peak_rows_per_s) holds up to 177.7"; got != want {
		t.Errorf("infeasible:\n got %q\nwant %q", got, want)
	}
	if got, want := solveOf(2034).title(), "The least admission.rate meeting every requirement is 2,034"; got != want {
		t.Errorf("an answer:\n got %q\nwant %q", got, want)
	}
	f := SolveFrontier{Key: SolveKey{Name: "capacity.admit_per_s", Goal: "least"}, X: SweepAxis{Name: "clients", Values: []float64{25000, 100000, 200000}, Labels: []string{"25000", "100000", "200000"}},
		Answers: []float64{252, 1027, math.NaN()}}
	if got, want := f.title(), "Least capacity.admit_per_s meeting every requirement: 252 at clients 25000, 1,027 at 100000; none at clients 200000"; got != want {
		t.Errorf("frontier:\n got %q\nwant %q", got, want)
	}
}

func TestSolveChartsAreWritten(t *testing.T) {
	dir := t.TempDir()
	paths, err := solveOf(562).WriteRequirements(dir, Options{})
	if err != nil || len(paths) != 2 {
		t.Fatalf("%v %v", paths, err)
	}
	f := SolveFrontier{File: "frontier", Key: SolveKey{Name: "k", Min: 1, Max: 100}, X: SweepAxis{Name: "clients", Values: []float64{1, 2}},
		Answers: []float64{10, 20}, Bounds: []float64{5, 50}, Points: []FrontierPoint{{X: 1, Y: 10, Pass: true}, {X: 2, Y: 5, Unended: true}}}
	more, err := f.Write(dir, Options{})
	if err != nil || len(more) != 2 {
		t.Fatalf("%v %v", more, err)
	}
	for _, p := range append(paths, more...) {
		if st, err := os.Stat(p); err != nil || st.Size() == 0 || filepath.Dir(p) != dir {
			t.Errorf("%s: %v", p, err)
		}
	}
	bad := solveOf(1)
	bad.Answers = nil
	if _, err := bad.WriteRequirements(dir, Options{}); err == nil {
		t.Error("a solve without an answer per group was drawn")
	}
}
