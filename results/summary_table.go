package results

import (
	"fmt"
	"io"
	"math"

	"stormsim/internal/human"
)

// WriteSummaryTable writes, for a replicated document, the mean of the
// headline metrics over replications with the half-width of their 95%
// confidence interval, one row per policy. It writes nothing for a single
// run, so that the output of an unreplicated run is unchanged.
func (d *Document) WriteSummaryTable(w io.Writer) error {
	t, ok := d.replicationsTable()
	if !ok {
		return nil
	}
	if _, err := fmt.Fprintf(w, "\n%s\n", t.Title); err != nil {
		return err
	}
	return writeAligned(w, t)
}

// replicationsTable is, over replications, each policy's mean attempts,
// last connect and connect p99 with the half-width of their 95%
// confidence interval.
func (d *Document) replicationsTable() (Table, bool) {
	if d.Replications == nil || len(d.Summary) == 0 {
		return Table{}, false
	}
	seeds := d.Replications.Seeds
	t := Table{
		Title: fmt.Sprintf("over %d replications (seeds %d..%d): mean ± half-width of the 95%% confidence interval",
			d.Replications.Count, seeds[0], seeds[len(seeds)-1]),
		Header: []string{"policy", "attempts", "last connect", "connect p99"},
	}
	count := func(x float64) string { return human.Count(int64(math.Round(x))) }
	for _, sum := range d.Summary {
		cell := func(name string, format func(float64) string) string {
			m, ok := sum.Metrics.Lookup(name)
			if !ok || len(m.CI95) != 2 {
				return "-"
			}
			return format(m.Mean) + " ± " + format((m.CI95[1]-m.CI95[0])/2)
		}
		t.Rows = append(t.Rows, []string{sum.Policy, cell("attempts", count), cell("convergence_ms", human.Millis), cell("connect_ms.p99", human.Millis)})
	}
	return t, true
}
