package sweep

import (
	"fmt"
	"math"
	"strings"

	"stormsim/plots"
	"stormsim/results"
)

// MaxChartAxes is the most axes a sweep is charted over: a line chart for
// one, a heat map for two, small multiples of heat maps for three.
const MaxChartAxes = 3

// chartJob is one chart a sweep draws.
type chartJob struct {
	file   string            // base name
	ref    results.MetricRef // the metric as the sweep file names it
	stat   string            // the statistic shown: "" for the value itself
	labels []string          // the policies drawn: a line each on a line chart, one on a heat map
	name   string            // the metric as the chart names it
}

func (c chartJob) files() []string { return plots.FileNames(c.file) }

// chartJobs lists the charts of a sweep: each metric names a statistic
// (default the mean over replications) of one policy or, without
// results[LABEL], of every policy: one line each on a line chart (one
// axis), one chart each for heat maps (two axes) and small multiples
// (three). A file drawn twice is drawn once.
func chartJobs(m Manifest) []chartJob {
	if len(m.Axes) > MaxChartAxes || len(m.Metrics) == 0 {
		return nil
	}
	var jobs []chartJob
	files := map[string]bool{}
	add := func(c chartJob) {
		if !files[c.file] {
			files[c.file] = true
			jobs = append(jobs, c)
		}
	}
	for _, text := range m.Metrics {
		ref, err := results.ParseMetricRef(text)
		if err != nil {
			continue // Finalize reports it
		}
		stat := ref.Stat
		if stat == "" && m.Replications > 1 {
			stat = "mean"
		}
		labels := m.Policies
		if ref.Policy != "" {
			labels = []string{ref.Policy}
		}
		shown := results.MetricRef{Stat: stat, Field: ref.Field}.String()
		if len(m.Axes) == 1 {
			add(chartJob{file: chartFile(ref, ""), ref: ref, stat: stat, labels: labels, name: shown})
			continue
		}
		for _, label := range labels {
			c := chartJob{file: chartFile(ref, ""), ref: ref, stat: stat, labels: []string{label}, name: shown}
			if len(labels) > 1 {
				c.file = chartFile(ref, label)
				c.name = results.MetricRef{Stat: stat, Policy: label, Field: ref.Field}.String()
			}
			add(c)
		}
	}
	return jobs
}

// seriesKey names the values of one policy's metric statistic over the
// grid.
type seriesKey struct{ label, field, stat string }

// chartValues collects, point by point as lines are read, the values the
// charts draw: for each series, the value and the 95% confidence interval
// of its mean at each point (NaN where a point has no such data).
type chartValues struct {
	index     map[seriesKey]int
	v, lo, hi [][]float64
	notes     map[string][]string // per policy, each point's outcomeNote (heat maps)
	limits    pointLimits
}

func newChartValues(m Manifest) *chartValues {
	cv := &chartValues{index: map[seriesKey]int{}, notes: map[string][]string{}, limits: newPointLimits(m)}
	if len(m.Axes) == 2 {
		for _, label := range m.Policies {
			cv.notes[label] = []string{}
		}
	}
	for _, c := range chartJobs(m) {
		for _, label := range c.labels {
			k := seriesKey{label, c.ref.Field, c.stat}
			if _, ok := cv.index[k]; !ok {
				cv.index[k] = len(cv.v)
				cv.v, cv.lo, cv.hi = append(cv.v, nil), append(cv.lo, nil), append(cv.hi, nil)
			}
		}
	}
	return cv
}

// add appends one point's values.
func (cv *chartValues) add(r *Record, sums []results.Summary) {
	for k, i := range cv.index {
		v, lo, hi := valueAt(sums, r.Replications, k)
		cv.v[i], cv.lo[i], cv.hi[i] = append(cv.v[i], v), append(cv.lo[i], lo), append(cv.hi[i], hi)
	}
	for label, notes := range cv.notes {
		cv.notes[label] = append(notes, outcomeNote(sums, r.Replications, label))
	}
	cv.limits.add(sums)
}

func (cv *chartValues) series(label, field, stat string) (v, lo, hi []float64) {
	i := cv.index[seriesKey{label, field, stat}]
	return cv.v[i], cv.lo[i], cv.hi[i]
}

// writeCharts draws the sweep's charts from the collected values into dir.
func writeCharts(dir string, m Manifest, cv *chartValues) ([]string, error) {
	charts, err := cv.charts(m, plots.Options{})
	if err != nil {
		return nil, err
	}
	return plots.SaveAll(dir, charts, plots.Options{})
}

// charts draws the sweep's charts from the collected values, in memory.
func (cv *chartValues) charts(m Manifest, opt plots.Options) ([]*plots.Chart, error) {
	axes := make([]plots.SweepAxis, len(m.Axes))
	for i, ax := range m.Axes {
		axes[i] = plots.SweepAxis{Name: ax.Path, Unit: ax.Unit, Values: ax.X, Labels: ax.Labels, Log: ax.Log}
	}
	caption := fmt.Sprintf("%s, seed %d, %d replication%s per point", m.Name, m.Seed, m.Replications, plural(m.Replications))
	var out []*plots.Chart
	for _, c := range chartJobs(m) {
		metric := plots.SweepMetric{Name: c.name, Unit: results.TimeUnit(c.ref.Field)}
		s := plots.Sweep{File: c.file, Caption: caption, Metric: metric}
		var chart *plots.Chart
		var err error
		switch len(axes) {
		case 1:
			var lines []plots.SweepLine
			for _, label := range c.labels {
				v, lo, hi := cv.series(label, c.ref.Field, c.stat)
				line := plots.SweepLine{Values: v}
				if len(c.labels) > 1 {
					line.Group = label
				}
				if c.stat == "mean" {
					line.Lo, line.Hi = lo, hi
				}
				lines = append(lines, line)
			}
			s.Limits = cv.limits.chart(c, func(fails [][]bool) [][]bool { return fails })
			chart, err = s.Lines(axes[0], lines, opt)
		case 2:
			v, _, _ := cv.series(c.labels[0], c.ref.Field, c.stat)
			nx, ny := len(axes[0].Values), len(axes[1].Values)
			s.Notes = grid2(cv.notes[c.labels[0]], nx, ny)
			s.Limits = cv.limits.chart(c, func(fails [][]bool) [][]bool { return grid2(fails[0], nx, ny) })
			chart, err = s.HeatMap(axes[0], axes[1], grid2(v, nx, ny), opt)
		default:
			v, _, _ := cv.series(c.labels[0], c.ref.Field, c.stat)
			nx, ny, np := len(axes[0].Values), len(axes[1].Values), len(axes[2].Values)
			s.Limits = cv.limits.chart(c, func(fails [][]bool) [][]bool {
				var rows [][]bool
				for _, panel := range grid3(fails[0], nx, ny, np) {
					rows = append(rows, panel...)
				}
				return rows
			})
			chart, err = s.SmallMultiples(axes[0], axes[1], axes[2], grid3(v, nx, ny, np), opt)
		}
		if err != nil {
			return out, err
		}
		out = append(out, chart)
	}
	return out, nil
}

// outcomeNote marks a point by the storms that did not end: "metastable"
// when every replication was, "never ended" when some were and the rest
// were cut by the horizon, "unfinished" when none was metastable but not
// every one converged; "" where every replication converged or the runs
// have no outcome.
func outcomeNote(sums []results.Summary, replications int, label string) string {
	meta, _, _ := valueAt(sums, replications, seriesKey{label, "metastable", "mean"})
	conv, _, _ := valueAt(sums, replications, seriesKey{label, "converged", "mean"})
	switch {
	case meta == 1:
		return "metastable"
	case meta > 0 && meta+conv < 1:
		return "never ended"
	case meta > 0:
		return fmt.Sprintf("%.0f%% metastable", 100*meta)
	case conv < 1:
		return "unfinished"
	}
	return ""
}

// valueAt is the statistic of one policy's metric at a point, with the 95%
// confidence interval of its mean; NaN where the point has no such data.
func valueAt(sums []results.Summary, replications int, k seriesKey) (v, lo, hi float64) {
	nan := math.NaN()
	for _, s := range sums {
		if s.Policy != k.label {
			continue
		}
		ms, ok := s.Metrics.Lookup(k.field)
		if !ok {
			break
		}
		stat := k.stat
		if stat == "" {
			stat = "mean" // one replication: the mean is the value
		}
		v, _ = ms.Stat(stat)
		lo, hi = nan, nan
		if len(ms.CI95) == 2 && replications > 1 {
			lo, hi = ms.CI95[0], ms.CI95[1]
		}
		return v, lo, hi
	}
	return nan, nan, nan
}

// grid2 arranges values in grid order (first axis slowest) as
// grid[y][x] with the first axis on x.
func grid2[T any](v []T, nx, ny int) [][]T {
	g := make([][]T, ny)
	for y := range g {
		g[y] = make([]T, nx)
		for x := range nx {
			g[y][x] = v[x*ny+y]
		}
	}
	return g
}

// grid3 arranges values in grid order as grid[panel][y][x] with the first
// axis on x, the second on y and the third across panels.
func grid3[T any](v []T, nx, ny, np int) [][][]T {
	g := make([][][]T, np)
	for p := range g {
		g[p] = make([][]T, ny)
		for y := range g[p] {
			g[p][y] = make([]T, nx)
			for x := range nx {
				g[p][y][x] = v[(x*ny+y)*np+p]
			}
		}
	}
	return g
}

// chartFile is a chart's base name from its metric (and policy): path
// characters other than letters, digits, '.', '_' and '-' become '_'.
func chartFile(ref results.MetricRef, label string) string {
	name := ref.Field
	if ref.Stat != "" {
		name = ref.Stat + "-" + name
	}
	if ref.Policy != "" {
		name = ref.Policy + "-" + name
	}
	if label != "" {
		name += "-" + label
	}
	return strings.Map(func(r rune) rune {
		if r == '.' || r == '_' || r == '-' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
			return r
		}
		return '_'
	}, name)
}
