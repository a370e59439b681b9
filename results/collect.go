package results

import (
	"slices"
	"sync"
)

// Runs collects one policy's metrics over its replications as they finish,
// in any order and from several goroutines, keeping 8 bytes a value: the
// metric names are stored once, not per run.
type Runs struct {
	mu     sync.Mutex
	names  []string         // the names of every run stored as values
	values [][]float64      // [replication][metric], aligned with names
	odd    map[int][]Metric // runs whose names differ from names (none, in practice)
}

// NewRuns collects replications runs.
func NewRuns(replications int) *Runs {
	return &Runs{values: make([][]float64, replications)}
}

// Add stores replication rep's metrics.
func (c *Runs) Add(rep int, ms []Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.names == nil {
		c.names = make([]string, len(ms))
		for i, m := range ms {
			c.names[i] = m.Name
		}
	}
	if len(ms) == len(c.names) && slices.EqualFunc(ms, c.names, func(m Metric, name string) bool { return m.Name == name }) {
		v := make([]float64, len(ms))
		for i, m := range ms {
			v[i] = m.Value
		}
		c.values[rep] = v
		return
	}
	if c.odd == nil {
		c.odd = map[int][]Metric{}
	}
	c.odd[rep] = ms
}

// Summary summarises the runs as SummarizeRuns does.
func (c *Runs) Summary(policy string) Summary {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.odd) == 0 {
		sum := Summary{Policy: policy, Metrics: MetricStats{}}
		if len(c.values) == 0 {
			return sum
		}
		column := make([]float64, len(c.values))
		for i, name := range c.names {
			for r, v := range c.values {
				column[r] = v[i]
			}
			sum.Metrics = append(sum.Metrics, Summarize(name, column))
		}
		return sum
	}
	runs := make([][]Metric, len(c.values))
	for r, v := range c.values {
		if ms, ok := c.odd[r]; ok {
			runs[r] = ms
			continue
		}
		runs[r] = make([]Metric, len(v))
		for i, x := range v {
			runs[r][i] = Metric{Name: c.names[i], Value: x}
		}
	}
	return SummarizeRuns(policy, runs)
}

// Table returns the runs as a table: names, the metrics every run has in
// the order of the first replication's, and values[replication][metric].
func (c *Runs) Table() (names []string, values [][]float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.odd) == 0 {
		return c.names, c.values
	}
	named := func(r int) []Metric {
		if ms, ok := c.odd[r]; ok {
			return ms
		}
		ms := make([]Metric, len(c.names))
		for i, x := range c.values[r] {
			ms[i] = Metric{Name: c.names[i], Value: x}
		}
		return ms
	}
	count := map[string]int{}
	for r := range c.values {
		for _, m := range named(r) {
			count[m.Name]++
		}
	}
	for _, m := range named(0) {
		if count[m.Name] == len(c.values) {
			names = append(names, m.Name)
		}
	}
	values = make([][]float64, len(c.values))
	for r := range c.values {
		byName := map[string]float64{}
		for _, m := range named(r) {
			byName[m.Name] = m.Value
		}
		values[r] = make([]float64, len(names))
		for i, n := range names {
			values[r][i] = byName[n]
		}
	}
	return names, values
}
