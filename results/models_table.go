package results

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"stormsim/internal/human"
	"stormsim/internal/safetext"

	"stormsim/sim"
)

// writeModelsTable adds, when any failure or load model is on, a second
// block with what those models measured: reclaim time and stale routes
// (lease), drain time, database peak, and attempts that met a dead or
// draining gateway.
func (d *Document) writeModelsTable(w io.Writer) error {
	type column struct {
		title string
		cell  func(r *sim.Result) string
	}
	var cols []column
	has := func(f func(r *sim.Result) bool) bool {
		for i := range d.Results {
			if f(&d.Results[i]) {
				return true
			}
		}
		return false
	}
	if has(func(r *sim.Result) bool { return r.Reclaim != nil }) {
		cols = append(cols,
			column{"reclaim", func(r *sim.Result) string {
				return ifReclaim(r, func(x *sim.ReclaimResult) string { return human.Millis(x.ReclaimMs) })
			}},
			column{"bound", func(r *sim.Result) string {
				return ifReclaim(r, func(x *sim.ReclaimResult) string {
					return "[" + human.Millis(x.BoundLoMs) + ", " + human.Millis(x.BoundHiMs) + "]"
				})
			}},
			column{"stale route-s", func(r *sim.Result) string {
				return ifReclaim(r, func(x *sim.ReclaimResult) string { return human.Fixed(x.StaleRouteSeconds, 1) })
			}},
			column{"max presence err", func(r *sim.Result) string {
				return ifReclaim(r, func(x *sim.ReclaimResult) string { return human.Millis(x.MaxPresenceErrorMs) })
			}})
	}
	if has(func(r *sim.Result) bool { return r.Refused+r.Unavailable > 0 }) {
		cols = append(cols,
			column{"refused", func(r *sim.Result) string { return human.Count(r.Refused) }},
			column{"503", func(r *sim.Result) string { return human.Count(r.Unavailable) }})
	}
	if has(func(r *sim.Result) bool { return r.Drain != nil }) {
		cols = append(cols,
			column{"drain", func(r *sim.Result) string {
				if r.Drain == nil {
					return "-"
				}
				return human.Millis(r.Drain.DrainMs)
			}},
			column{"leftover routes", func(r *sim.Result) string {
				if r.Drain == nil {
					return "-"
				}
				return human.Count(r.Drain.LeftoverRoutes)
			}})
	}
	if has(func(r *sim.Result) bool { return r.Database != nil }) {
		cols = append(cols,
			column{"db peak rows/s", func(r *sim.Result) string {
				if r.Database == nil {
					return "-"
				}
				return human.Count(int64(r.Database.PeakRowsPerS + 0.5))
			}},
			column{"above budget", func(r *sim.Result) string {
				if r.Database == nil || r.Database.ReadBudgetPerS == 0 {
					return "-"
				}
				return human.Millis(r.Database.TimeAboveBudgetMs)
			}})
	}
	if len(cols) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 0, ' ', tabwriter.AlignRight)
	policyWidth := len("policy")
	for _, r := range d.Results {
		policyWidth = max(policyWidth, utf8.RuneCountInString(safetext.Terminal(r.Policy)))
	}
	titles := []string{fmt.Sprintf("%-*s", policyWidth, "policy")}
	for _, c := range cols {
		titles = append(titles, c.title)
	}
	fmt.Fprintln(tw, strings.Join(titles, "\t  ")+"\t")
	for i := range d.Results {
		r := &d.Results[i]
		cells := []string{fmt.Sprintf("%-*s", policyWidth, safetext.Terminal(r.Policy))}
		for _, c := range cols {
			cells = append(cells, c.cell(r))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t  ")+"\t")
	}
	return tw.Flush()
}

func ifReclaim(r *sim.Result, f func(*sim.ReclaimResult) string) string {
	if r.Reclaim == nil {
		return "-"
	}
	return f(r.Reclaim)
}
