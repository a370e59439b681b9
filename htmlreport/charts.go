package htmlreport

import (
	"math"
	"time"

	"stormsim/plots"
	"stormsim/results"
	"stormsim/sim"
)

// ChartRun turns a result document into what the charts draw. s is
// the resolved scenario the document ran (for the admission and claim
// capacity lines); nil draws neither. With replications, the
// work-vs-time chart gets the 95% confidence interval of each policy's
// mean attempts and convergence time, and the reclaim histogram every
// replication's reclaim.
func ChartRun(doc *results.Document, s *sim.Scenario) plots.Run {
	capacity := math.Inf(1)
	window := time.Duration(0) // the results' window: the metrics window, or coarser on a long run
	if len(doc.Results) > 0 {
		window = time.Duration(doc.Results[0].WindowMs * float64(time.Millisecond))
	}
	if s != nil && window > 0 {
		capacity = s.Admission.New().WindowBound(window)
	}
	run := plots.FromResults(doc.Name, doc.Seed, doc.Results, capacity)
	if s != nil && s.Capacity != nil {
		survivors := 1
		if s.Gateways != nil {
			survivors = s.Gateways.Count - 1
		}
		run.ClaimCapacityPerWindow = s.Capacity.AdmitPerS * float64(survivors) * window.Seconds()
	}
	for i := range run.Policies {
		p := &run.Policies[i]
		for _, sum := range doc.Summary {
			if sum.Policy != p.Policy {
				continue
			}
			attempts, ok1 := sum.Metrics.Lookup("attempts")
			convergence, ok2 := sum.Metrics.Lookup("convergence_ms")
			if ok1 && ok2 {
				p.Replicated = &plots.Replicated{Runs: len(attempts.Runs), Attempts: ciSpread(attempts),
					ConvergenceMs: ciSpread(convergence), SpreadKind: "mean ± 95% CI"}
			}
			if rc, ok := sum.Metrics.Lookup("reclaim.reclaim_ms"); ok && i == 0 && run.Reclaim != nil {
				run.Reclaim.TimesMs = rc.Runs
			}
		}
	}
	return run
}

func ciSpread(m results.MetricStat) plots.Spread {
	return plots.Spread{Mean: m.Mean, Lo: m.CI95[0], Hi: m.CI95[1]}
}
