package plots

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/floats"
)

func dbRows(p *PolicySeries) []float64 { return p.DBRowsPerS }

// databaseChart: database read rate over time against the read budget.
func databaseChart(runs []Run, ds []drawn, opt Options) *figure {
	ds = withSeries(ds, dbRows)
	budgets := references(runs, func(r *Run) float64 { return r.DBBudgetRowsPerS },
		func(v float64) string { return "read budget (" + fmtCount(v) + " rows/s)" })
	p, ta, ca, legend := windowSeriesChart(runs, ds, dbRows, "database reads (rows/s)", opt, budgets...)
	applyTime(p, ta)
	ca.apply(&p.Y)
	note := "Each accepted reconnect costs one route claim and one sync"
	return &figure{title: databaseTitle(ds), legend: legend, caption: caption(runs, note), body: plotBody(p)}
}

// databaseTitle compares the read peak with the budget and says how long
// the budget was exceeded.
func databaseTitle(ds []drawn) string {
	type load struct {
		label  string
		peak   float64
		budget float64
		overMs float64
	}
	var ls []load
	for _, d := range ds {
		l := load{label: d.label, peak: floats.Max(d.p.DBRowsPerS), budget: d.run.DBBudgetRowsPerS}
		for _, v := range d.p.DBRowsPerS {
			if l.budget > 0 && v > l.budget {
				l.overMs += d.p.WindowMs
			}
		}
		ls = append(ls, l)
	}
	if len(ls) == 0 {
		return "No database load"
	}
	slices.SortStableFunc(ls, func(a, b load) int { return -cmpFloat(a.peak, b.peak) })
	worst, best := ls[0], ls[len(ls)-1]
	if worst.budget <= 0 {
		if len(ls) == 1 || worst.peak == best.peak {
			return fmt.Sprintf("Database reads peak at %s rows/s with %s", fmtCount(worst.peak), worst.label)
		}
		return fmt.Sprintf("Database reads peak at %s rows/s with %s, %s with %s", fmtCount(worst.peak), worst.label, fmtCount(best.peak), best.label)
	}
	if worst.peak <= worst.budget {
		return fmt.Sprintf("Database reads stay within the %s rows/s budget: peak %s of it with %s",
			fmtCount(worst.budget), fmtPercent(worst.peak/worst.budget), worst.label)
	}
	return fmt.Sprintf("Database reads peak at %s the %s rows/s budget with %s, above it for %s",
		fmtRatio(worst.peak/worst.budget), fmtCount(worst.budget), worst.label, fmtDuration(worst.overMs))
}
