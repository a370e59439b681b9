package results

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"stormsim/internal/human"
	"stormsim/internal/safetext"
)

// WriteSummaryTable writes, for a replicated document, the mean of the
// headline metrics over replications with the half-width of their 95%
// confidence interval, one row per policy. It writes nothing for a single
// run, so that the output of an unreplicated run is unchanged.
func (d *Document) WriteSummaryTable(w io.Writer) error {
	if d.Replications == nil || len(d.Summary) == 0 {
		return nil
	}
	seeds := d.Replications.Seeds
	if _, err := fmt.Fprintf(w, "\nover %d replications (seeds %d..%d): mean ± half-width of the 95%% confidence interval\n",
		d.Replications.Count, seeds[0], seeds[len(seeds)-1]); err != nil {
		return err
	}
	policyWidth := len("policy")
	for _, sum := range d.Summary {
		policyWidth = max(policyWidth, utf8.RuneCountInString(safetext.Terminal(sum.Policy)))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 0, ' ', tabwriter.AlignRight)
	row := func(cells ...string) {
		// As in WriteTable: pad the first column to keep it left-aligned.
		cells[0] = fmt.Sprintf("%-*s", policyWidth, safetext.Terminal(cells[0]))
		fmt.Fprintln(tw, strings.Join(cells, "\t  ")+"\t")
	}
	count := func(x float64) string { return human.Count(int64(math.Round(x))) }
	row("policy", "attempts", "last connect", "connect p99")
	for _, sum := range d.Summary {
		cell := func(name string, format func(float64) string) string {
			m, ok := sum.Metrics.Lookup(name)
			if !ok || len(m.CI95) != 2 {
				return "-"
			}
			return format(m.Mean) + " ± " + format((m.CI95[1]-m.CI95[0])/2)
		}
		row(sum.Policy, cell("attempts", count), cell("convergence_ms", human.Millis), cell("connect_ms.p99", human.Millis))
	}
	return tw.Flush()
}
