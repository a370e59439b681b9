package solve

import (
	"fmt"
	"slices"

	"stormsim/check"
	"stormsim/config"
	"stormsim/results"
	"stormsim/sweep"
)

// fromManifest is the problem a probes.json describes, enough to replay
// its searches from known probes (stormsim merge), without the solve
// file: nothing can be run from it.
func fromManifest(d *Document) (*Problem, error) {
	p := &Problem{Name: d.Name, BaseHash: d.BaseConfigHash, Replications: d.Replications, Seed: d.Seed, Policies: d.Policies}
	kinds := map[string]config.KeyKind{"integer": config.KindInteger, "number": config.KindNumber, "duration": config.KindDuration}
	v := d.Vary
	dm := Domain{Key: v.Key, Kind: kinds[v.Kind], Goal: v.Goal, Scan: v.Scan}
	if dm.Kind == 0 {
		return nil, fmt.Errorf("vary.kind %q", v.Kind)
	}
	var err error
	if dm.Min, err = dm.parse(v.Min.Value); err == nil {
		dm.Max, err = dm.parse(v.Max.Value)
	}
	if err == nil {
		err = dm.readResolution(v.Resolution)
	}
	if err == nil && v.Start != nil {
		dm.Start, err = dm.parse(v.Start.Value)
		dm.HasStart = true
	}
	if err != nil {
		return nil, err
	}
	p.Domain = dm
	for _, r := range d.Requirements {
		ref, err := results.ParseMetricRef(r.Metric)
		if err != nil {
			return nil, err
		}
		p.Requirements = append(p.Requirements, Requirement{Check: check.Check{Text: r.Text, Metric: ref, Op: r.Op, Bound: r.Bound}})
	}
	p.cases = []caseSpec{{}}
	if a := d.Across; a != nil {
		p.Across = &sweep.Axis{Path: a.Key, Unit: a.Unit}
		p.cases = nil
		for i, val := range a.Values {
			p.Across.Values = append(p.Across.Values, sweep.Value{YAML: val.Value, Label: val.Value, X: val.X})
			p.cases = append(p.cases, caseSpec{index: i, setting: &sweep.Setting{Path: a.Key, Label: val.Value}, position: val.X})
		}
	}
	p.combos = []combo{{}}
	for _, g := range d.Given {
		ax := sweep.Axis{Path: g.Key, Unit: g.Unit}
		var values []sweep.Setting
		for _, val := range g.Values {
			ax.Values = append(ax.Values, sweep.Value{YAML: val.Value, Label: val.Value, X: val.X})
			values = append(values, sweep.Setting{Path: g.Key, Label: val.Value})
		}
		p.Given = append(p.Given, ax)
		p.givenValues = append(p.givenValues, values)
		var next []combo
		for _, c := range p.combos {
			for _, v := range values {
				next = append(next, combo{settings: append(slices.Clone(c.settings), v)})
			}
		}
		p.combos = next
	}
	p.firstOrder = d.FirstOrder
	if len(p.firstOrder) != len(p.cases) {
		return nil, fmt.Errorf("first_order has %d cases, the solve %d", len(p.firstOrder), len(p.cases))
	}
	p.hash()
	if p.Hash != d.Solve {
		return nil, fmt.Errorf("describes solve %s but reads as %s: written by another stormsim (%s)", short(d.Solve), short(p.Hash), d.Tool)
	}
	return p, nil
}
