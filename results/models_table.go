package results

import (
	"slices"

	"stormsim/internal/human"
	"stormsim/sim"
)

// modelsTable is, when any failure or load model is on, a block with
// what those models measured: reclaim time and stale routes (lease),
// drain time, database peak, and attempts that met a dead or draining
// gateway.
func (d *Document) modelsTable() (Table, bool) {
	var cols []modelColumn
	for _, g := range modelColumnGroups {
		if slices.ContainsFunc(d.Results, func(r sim.Result) bool { return g.shown(&r) }) {
			cols = append(cols, g.columns...)
		}
	}
	if len(cols) == 0 {
		return Table{}, false
	}
	t := Table{Title: "failure and load models", Header: []string{"policy"}}
	for _, c := range cols {
		t.Header = append(t.Header, c.title)
	}
	for i := range d.Results {
		r := &d.Results[i]
		cells := []string{r.Policy}
		for _, c := range cols {
			cells = append(cells, c.cell(r))
		}
		t.Rows = append(t.Rows, cells)
	}
	return t, true
}

// modelColumn is a column of the models table: its title and a result's
// cell.
type modelColumn struct {
	title string
	cell  func(r *sim.Result) string
}

// modelColumnGroups are the models table's columns, a group per model,
// shown when any result has data for it; a result without it shows "-".
var modelColumnGroups = []struct {
	shown   func(r *sim.Result) bool
	columns []modelColumn
}{
	{func(r *sim.Result) bool { return r.Reclaim != nil }, []modelColumn{
		{"reclaim", ifReclaim(func(x *sim.ReclaimResult) string { return human.Millis(x.ReclaimMs) })},
		{"bound", ifReclaim(func(x *sim.ReclaimResult) string {
			return "[" + human.Millis(x.BoundLoMs) + ", " + human.Millis(x.BoundHiMs) + "]"
		})},
		{"stale route-s", ifReclaim(func(x *sim.ReclaimResult) string { return human.Fixed(x.StaleRouteSeconds, 1) })},
		{"max presence err", ifReclaim(func(x *sim.ReclaimResult) string { return human.Millis(x.MaxPresenceErrorMs) })},
	}},
	{func(r *sim.Result) bool { return r.Refused+r.Unavailable > 0 }, []modelColumn{
		{"refused", func(r *sim.Result) string { return human.Count(r.Refused) }},
		{"503", func(r *sim.Result) string { return human.Count(r.Unavailable) }},
	}},
	{func(r *sim.Result) bool { return r.Drain != nil }, []modelColumn{
		{"drain", ifDrain(func(x *sim.DrainResult) string { return human.Millis(x.DrainMs) })},
		{"leftover routes", ifDrain(func(x *sim.DrainResult) string { return human.Count(x.LeftoverRoutes) })},
	}},
	{func(r *sim.Result) bool { return r.Database != nil }, []modelColumn{
		{"db peak rows/s", ifDatabase(func(x *sim.DatabaseResult) string { return human.Count(int64(x.PeakRowsPerS + 0.5)) })},
		{"above budget", ifDatabase(func(x *sim.DatabaseResult) string {
			if x.ReadBudgetPerS == 0 {
				return "-"
			}
			return human.Millis(x.TimeAboveBudgetMs)
		})},
	}},
}

// ifReclaim, ifDrain and ifDatabase make a cell of a model's section:
// "-" for a result without it.
func ifReclaim(f func(*sim.ReclaimResult) string) func(*sim.Result) string {
	return func(r *sim.Result) string {
		if r.Reclaim == nil {
			return "-"
		}
		return f(r.Reclaim)
	}
}

func ifDrain(f func(*sim.DrainResult) string) func(*sim.Result) string {
	return func(r *sim.Result) string {
		if r.Drain == nil {
			return "-"
		}
		return f(r.Drain)
	}
}

func ifDatabase(f func(*sim.DatabaseResult) string) func(*sim.Result) string {
	return func(r *sim.Result) string {
		if r.Database == nil {
			return "-"
		}
		return f(r.Database)
	}
}
