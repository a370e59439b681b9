package compare

import "fmt"

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
		out = append(out, Agreement{Model: model, Name: m.Metric,
			Criterion: fmt.Sprintf("|sim mean - real mean| <= %.0f%% of real", 100*m.Tolerance),
			Observed:  fmt.Sprintf("sim %.1f vs real %.1f: %+.1f%%", m.SimMean, m.Real, 100*m.RelError),
			Pass:      *m.Pass})
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
