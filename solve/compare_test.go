package solve

import (
	"strings"
	"testing"
)

// TestCompareCatchesEveryKindOfDrift is what makes the shipped solves'
// goldens a test: a golden compared with itself has no drift, and each
// change a model change could make to it (the answer, the binding
// requirement, a relaxation, a probe's verdict, a probe's observation
// beyond the tolerance, the probe count) is one drift naming it; an
// observation within the tolerance is none.
func TestCompareCatchesEveryKindOfDrift(t *testing.T) {
	read := func() *Document {
		d, err := ReadDocument("../testdata/golden/solve-seed-window-guesses.json")
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	base := read()
	if c := Compare(base, read(), 0); len(c.Drifts) != 0 || c.Cases != 1 || c.Probes != len(base.Probes) {
		t.Fatalf("a golden against itself: %+v", c)
	}
	infeasible, err := ReadDocument("../testdata/golden/solve-seed-window.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name      string
		base      *Document
		change    func(d *Document)
		tolerance float64
		want      string // in the one drift; "" for none
	}{
		{"the answer", base, func(d *Document) { d.Cases[0].Result.Answer.Value = "567" }, 0, "case 0: answer 557 bracket [547, 557]"},
		{"the binding combination", base, func(d *Document) { d.Cases[0].Result.Answer.Binding[0].Combination = "policies[0].cap=5s" }, 0, "policies[0].cap=5s"},
		{"a value alone", base, func(d *Document) { d.Cases[0].Sensitivity.Keys[0].Values[0].Answer.Value = "450" }, 0, "alone policies[0].cap=5s: 448.9 in the baseline, alone policies[0].cap=5s: 450 now"},
		{"a verdict", base, func(d *Document) { d.Probes[3].Pass = !d.Probes[3].Pass }, 0, "probe 3 ("},
		{"an observation", base, func(d *Document) { d.Probes[7].Observations[0].Observed *= 1.02 }, 0.01, "probe 7 ("},
		{"an observation within the tolerance", base, func(d *Document) { d.Probes[7].Observations[0].Observed *= 1.005 }, 0.01, ""},
		{"a probe more", base, func(d *Document) { d.Probes = append(d.Probes, d.Probes[0]) }, 0, "90 probes in the baseline, 91 now"},
		{"a relaxation", infeasible, func(d *Document) { d.Cases[0].Relax[1].Needs = 57000 }, 0, "relax 1: at 552 needs 56500 in the baseline"},
	} {
		now, err := ParseDocument("x", mustJSON(t, tt.base))
		if err != nil {
			t.Fatal(err)
		}
		tt.change(now)
		c := Compare(tt.base, now, tt.tolerance)
		switch {
		case tt.want == "" && len(c.Drifts) != 0:
			t.Errorf("%s: drifts %q, want none", tt.name, c.Drifts)
		case tt.want != "" && (len(c.Drifts) != 1 || !strings.Contains(c.Drifts[0], tt.want)):
			t.Errorf("%s: drifts %q, want one holding %q", tt.name, c.Drifts, tt.want)
		}
	}
}

func mustJSON(t *testing.T, d *Document) []byte {
	t.Helper()
	data, err := d.JSON()
	if err != nil {
		t.Fatal(err)
	}
	return data
}
