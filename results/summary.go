package results

import (
	"encoding/json"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"stormsim/internal/orderedjson"
	"stormsim/internal/quantile"
)

// Replications says which seeds a replicated document ran: Count runs per
// policy with seeds Seed, Seed+1, ..., Seed+Count-1.
type Replications struct {
	Count int      `json:"count"`
	Seeds []uint64 `json:"seeds"`
}

// Summary is one policy's metrics over all replications.
type Summary struct {
	Policy  string      `json:"policy"`
	Metrics MetricStats `json:"metrics"`
}

// MetricStats is a list of metric summaries that is written as one JSON
// object keyed by metric name, in list order (the result's field order).
type MetricStats []MetricStat

// MetricStat summarises one metric over replications, in the metric's own
// unit. Quantiles are nearest-rank (the ceil(q*n)-th smallest run), like
// the connect-time quantiles of a result; CI95 is the 95% confidence
// interval of the mean, mean ± t(0.975, n-1) * std / sqrt(n).
type MetricStat struct {
	Name string    `json:"-"`
	Mean float64   `json:"mean"`
	Std  float64   `json:"std"` // sample standard deviation (n-1); 0 for one run
	CI95 []float64 `json:"ci95"`
	P50  float64   `json:"p50"`
	P95  float64   `json:"p95"`
	P99  float64   `json:"p99"`
	Min  float64   `json:"min"`
	Max  float64   `json:"max"`
	Runs []float64 `json:"runs"` // each replication's value, in seed order
}

// Summarize computes the statistics of one metric's values over runs.
// With a single run the spread is zero and the interval is the value.
func Summarize(name string, runs []float64) MetricStat {
	n := len(runs)
	s := MetricStat{Name: name, Runs: slices.Clone(runs)}
	if n == 0 {
		return s
	}
	sorted := slices.Clone(runs)
	slices.Sort(sorted)
	s.Mean = stat.Mean(runs, nil)
	half := 0.0
	if n > 1 {
		s.Std = stat.StdDev(runs, nil)
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(0.975)
		half = t * s.Std / math.Sqrt(float64(n))
	}
	s.CI95 = []float64{s.Mean - half, s.Mean + half}
	s.P50 = quantile.NearestRank(sorted, 0.50)
	s.P95 = quantile.NearestRank(sorted, 0.95)
	s.P99 = quantile.NearestRank(sorted, 0.99)
	s.Min, s.Max = sorted[0], sorted[n-1]
	return s
}

// Stat returns the statistic called name (one of Stats).
func (s MetricStat) Stat(name string) (float64, bool) {
	switch name {
	case "mean":
		return s.Mean, true
	case "std":
		return s.Std, true
	case "p50":
		return s.P50, true
	case "p95":
		return s.P95, true
	case "p99":
		return s.P99, true
	case "min":
		return s.Min, true
	case "max":
		return s.Max, true
	case "ci95_lo", "ci95_hi":
		if len(s.CI95) != 2 {
			return 0, false // a summary of no runs, or a document that lacks it
		}
		if name == "ci95_lo" {
			return s.CI95[0], true
		}
		return s.CI95[1], true
	}
	return 0, false
}

// SummarizeRuns summarises one policy's runs, each flattened by
// ResultMetrics. A metric is summarised only if every run has it, in the
// order of the first run.
func SummarizeRuns(policy string, runs [][]Metric) Summary {
	sum := Summary{Policy: policy, Metrics: MetricStats{}}
	if len(runs) == 0 {
		return sum
	}
	values := map[string][]float64{}
	for _, run := range runs {
		for _, m := range run {
			values[m.Name] = append(values[m.Name], m.Value)
		}
	}
	for _, m := range runs[0] {
		if v := values[m.Name]; len(v) == len(runs) {
			sum.Metrics = append(sum.Metrics, Summarize(m.Name, v))
		}
	}
	return sum
}

// Lookup returns the summary of the metric called name.
func (ms MetricStats) Lookup(name string) (MetricStat, bool) {
	for _, m := range ms {
		if m.Name == name {
			return m, true
		}
	}
	return MetricStat{}, false
}

// MarshalJSON writes the list as an object keyed by name, in list order.
func (ms MetricStats) MarshalJSON() ([]byte, error) {
	return orderedjson.Marshal(ms, "metric",
		func(m MetricStat) string { return m.Name },
		func(m MetricStat) any { return m })
}

// UnmarshalJSON reads what MarshalJSON writes, keeping the key order.
func (ms *MetricStats) UnmarshalJSON(data []byte) error {
	*ms = MetricStats{}
	return orderedjson.Unmarshal(data, "metrics", func(name string, dec *json.Decoder) error {
		m := MetricStat{}
		if err := dec.Decode(&m); err != nil {
			return err
		}
		m.Name = name
		*ms = append(*ms, m)
		return nil
	})
}
