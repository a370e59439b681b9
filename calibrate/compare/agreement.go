package compare

import (
	"fmt"
	"strings"

	"stormsim/calibrate/measured"
	"stormsim/models"
	"stormsim/sim"
)

// Agreement is one tolerance check of a model against the real runs.
type Agreement struct {
	Model     string `json:"model"` // the simulation's label
	Name      string `json:"name"`
	Criterion string `json:"criterion"`
	Observed  string `json:"observed"`
	Pass      bool   `json:"pass"`
}

// Agreements are the checks of a model's metrics and series, those with a
// tolerance.
func Agreements(model string, metrics []MetricComparison, series []SeriesComparison) []Agreement {
	var out []Agreement
	for _, m := range metrics {
		if m.Pass == nil {
			continue
		}
		a := Agreement{Model: model, Name: m.Metric,
			Criterion: fmt.Sprintf("|sim mean - real mean| <= %.0f%% of real", 100*m.Tolerance), Pass: *m.Pass}
		if m.RelError != nil {
			a.Observed = fmt.Sprintf("sim %.1f vs real %.1f: %+.1f%%", m.SimMean, m.Real, 100**m.RelError)
		} else {
			a.Criterion = fmt.Sprintf("real is 0: |sim mean| <= %.0f%% of the storm's size, %.1f %s", 100*m.Tolerance, m.AbsFloor, m.Unit)
			a.Observed = fmt.Sprintf("sim %.1f vs real 0: %+.1f %s", m.SimMean, m.AbsError, m.Unit)
		}
		out = append(out, a)
	}
	for _, c := range series {
		if c.Pass == nil {
			continue
		}
		out = append(out, Agreement{Model: model, Name: c.Series + " per window",
			Criterion: fmt.Sprintf("inside the simulated spread (min-max of the replications) in all but %d windows", c.AllowedOutside),
			Observed: fmt.Sprintf("%d of %d windows inside the spread, %d inside the 95%% band; W1 %.0f ms (p %.2f)",
				c.WindowsInsideEnvelope, c.Windows, c.WindowsInside, c.W1Ms, c.W1P),
			Pass: *c.Pass})
	}
	return out
}

// OutcomeComparison is how the real runs and the replications of a storm
// with a horizon ended: how many of each ended converged, metastable or
// unfinished.
type OutcomeComparison struct {
	Real map[string]int `json:"real"`
	Sim  map[string]int `json:"sim"`
	// Agreed is the outcome every real run and most replications share;
	// "" when there is none.
	Agreed string `json:"agreed"`
}

// Outcomes compares the outcomes; nil when the real runs have none.
func Outcomes(runs []*measured.Run, reps []sim.Result) *OutcomeComparison {
	c := &OutcomeComparison{Real: map[string]int{}, Sim: map[string]int{}}
	for _, r := range runs {
		if r.Outcome == nil {
			return nil
		}
		c.Real[r.Outcome.Outcome]++
	}
	for i := range reps {
		if o := reps[i].OutcomeResult; o != nil {
			c.Sim[string(o.Outcome)]++
		}
	}
	for o, n := range c.Real {
		if n == len(runs) && 2*c.Sim[o] > len(reps) {
			c.Agreed = o
		}
	}
	return c
}

// Agreement is the outcome check: every real run ends as most
// replications do.
func (c *OutcomeComparison) Agreement(model string) Agreement {
	return Agreement{Model: model, Name: "outcome", Criterion: "every real run ends as most replications do",
		Observed: fmt.Sprintf("real %s; sim %s", countsOf(c.Real), countsOf(c.Sim)), Pass: c.Agreed != ""}
}

// countsOf lists outcome counts in a fixed order.
func countsOf(m map[string]int) string {
	var parts []string
	for _, o := range []models.Outcome{models.OutcomeConverged, models.OutcomeMetastable, models.OutcomeUnfinished} {
		if n := m[string(o)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", o, n))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
