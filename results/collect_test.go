package results

import (
	"reflect"
	"testing"
)

// TestRunsSummarizesAsSummarizeRuns checks the compact collector against
// SummarizeRuns, the plain implementation, whatever order runs finish in,
// and when a run lacks a metric the others have.
func TestRunsSummarizesAsSummarizeRuns(t *testing.T) {
	m := func(pairs ...any) []Metric {
		var out []Metric
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, Metric{pairs[i].(string), pairs[i+1].(float64)})
		}
		return out
	}
	tests := []struct {
		name  string
		runs  [][]Metric
		order []int
	}{
		{"in order", [][]Metric{m("a", 1.0, "b", 10.0), m("a", 2.0, "b", 20.0), m("a", 4.0, "b", 5.0)}, []int{0, 1, 2}},
		{"out of order", [][]Metric{m("a", 1.0, "b", 10.0), m("a", 2.0, "b", 20.0), m("a", 4.0, "b", 5.0)}, []int{2, 0, 1}},
		{"a run lacks a metric", [][]Metric{m("a", 1.0, "b", 10.0), m("a", 2.0), m("a", 4.0, "b", 5.0)}, []int{1, 2, 0}},
		{"names in another order", [][]Metric{m("a", 1.0, "b", 10.0), m("b", 2.0, "a", 3.0)}, []int{1, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewRuns(len(tt.runs))
			for _, r := range tt.order {
				c.Add(r, tt.runs[r])
			}
			got, want := c.Summary("p"), SummarizeRuns("p", tt.runs)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got\n%+v\nwant\n%+v", got, want)
			}
			// The table summarises to the same.
			names, values := c.Table()
			fromTable := Summary{Policy: "p", Metrics: MetricStats{}}
			for i, name := range names {
				var column []float64
				for _, v := range values {
					column = append(column, v[i])
				}
				fromTable.Metrics = append(fromTable.Metrics, Summarize(name, column))
			}
			if !reflect.DeepEqual(fromTable, want) {
				t.Errorf("from the table\n%+v\nwant\n%+v", fromTable, want)
			}
		})
	}
}
