package sweep

import (
	"slices"
	"testing"

	"stormsim/results"
)

// TestOutcomeNotes: a point is marked by what its replications did, from
// the fraction that were metastable and the fraction that converged.
func TestOutcomeNotes(t *testing.T) {
	point := func(metastable, converged []float64) []results.Summary {
		ms := results.MetricStats{results.Summarize("converged", converged), results.Summarize("metastable", metastable)}
		return []results.Summary{{Policy: "p", Metrics: ms}}
	}
	points := [][]results.Summary{
		point([]float64{0, 0}, []float64{1, 1}), // converged every time
		point([]float64{1, 1}, []float64{0, 0}), // metastable every time
		point([]float64{1, 0}, []float64{0, 1}), // half and half
		point([]float64{1, 0}, []float64{0, 0}), // metastable or cut by the horizon
		point([]float64{0, 0}, []float64{1, 0}), // one run cut by the horizon
		{{Policy: "p"}},                         // no outcome at all
	}
	var got []string
	for _, sums := range points {
		got = append(got, outcomeNote(sums, 2, "p"))
	}
	want := []string{"", "metastable", "50% metastable", "never ended", "unfinished", ""}
	if !slices.Equal(got, want) {
		t.Errorf("notes %q, want %q", got, want)
	}
}
