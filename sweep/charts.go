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

// writeCharts draws each metric of the manifest over the sweep's axes.
// A metric names a statistic (default the mean over replications) of one
// policy or, without results[LABEL], of every policy: one line each on a
// line chart, one chart each for heat maps.
func writeCharts(dir string, m Manifest, recs []Record) ([]string, error) {
	if len(m.Axes) > MaxChartAxes || len(m.Metrics) == 0 {
		return nil, nil
	}
	axes := make([]plots.SweepAxis, len(m.Axes))
	for i, ax := range m.Axes {
		axes[i] = plots.SweepAxis{Name: ax.Path, Unit: ax.Unit, Values: ax.X, Labels: ax.Labels, Log: ax.Log}
	}
	caption := fmt.Sprintf("%s, seed %d, %d replication%s per point", m.Name, m.Seed, m.Replications, plural(m.Replications))
	var written []string
	files := map[string]bool{}
	for _, text := range m.Metrics {
		ref, err := results.ParseMetricRef(text)
		if err != nil {
			return written, fmt.Errorf("%s: %w", ManifestFile, err)
		}
		stat := ref.Stat
		if stat == "" && m.Replications > 1 {
			stat = "mean"
		}
		labels := m.Policies
		if ref.Policy != "" {
			labels = []string{ref.Policy}
		}
		shown := results.MetricRef{Stat: stat, Field: ref.Field}
		metric := plots.SweepMetric{Name: shown.String(), Unit: results.TimeUnit(ref.Field)}
		values := func(label string) (v, lo, hi []float64) {
			for _, r := range recs {
				x, l, h := valueAt(r, label, ref.Field, stat)
				v, lo, hi = append(v, x), append(lo, l), append(hi, h)
			}
			return v, lo, hi
		}
		if len(axes) == 1 {
			file := chartFile(ref, "")
			if files[file] {
				continue
			}
			files[file] = true
			var lines []plots.SweepLine
			for _, label := range labels {
				v, lo, hi := values(label)
				line := plots.SweepLine{Values: v}
				if len(labels) > 1 {
					line.Group = label
				}
				if stat == "mean" {
					line.Lo, line.Hi = lo, hi
				}
				lines = append(lines, line)
			}
			paths, err := plots.Sweep{File: file, Caption: caption, Metric: metric}.WriteLines(dir, axes[0], lines, plots.Options{})
			written = append(written, paths...)
			if err != nil {
				return written, err
			}
			continue
		}
		for _, label := range labels {
			file, mt := chartFile(ref, ""), metric
			if len(labels) > 1 {
				file = chartFile(ref, label)
				mt.Name = results.MetricRef{Stat: stat, Policy: label, Field: ref.Field}.String()
			}
			if files[file] {
				continue
			}
			files[file] = true
			v, _, _ := values(label)
			s := plots.Sweep{File: file, Caption: caption, Metric: mt}
			var paths []string
			var err error
			if len(axes) == 2 {
				nx, ny := len(axes[0].Values), len(axes[1].Values)
				s.Notes = grid2(outcomeNotes(recs, label), nx, ny)
				paths, err = s.WriteHeatMap(dir, axes[0], axes[1], grid2(v, nx, ny), plots.Options{})
			} else {
				paths, err = s.WriteSmallMultiples(dir, axes[0], axes[1], axes[2], grid3(v, len(axes[0].Values), len(axes[1].Values), len(axes[2].Values)), plots.Options{})
			}
			written = append(written, paths...)
			if err != nil {
				return written, err
			}
		}
	}
	return written, nil
}

// outcomeNotes marks, per point, the storms that did not end: "metastable"
// when every replication was, "never ended" when some were and the rest
// were cut by the horizon, "unfinished" when none was metastable but not
// every one converged; "" where every replication converged or the runs
// have no outcome.
func outcomeNotes(recs []Record, label string) []string {
	notes := make([]string, len(recs))
	for i, r := range recs {
		meta, _, _ := valueAt(r, label, "metastable", "mean")
		conv, _, _ := valueAt(r, label, "converged", "mean")
		switch {
		case meta == 1:
			notes[i] = "metastable"
		case meta > 0 && meta+conv < 1:
			notes[i] = "never ended"
		case meta > 0:
			notes[i] = fmt.Sprintf("%.0f%% metastable", 100*meta)
		case conv < 1:
			notes[i] = "unfinished"
		}
	}
	return notes
}

// valueAt is the statistic of one policy's metric at a point, with the 95%
// confidence interval of its mean; NaN where the point has no such data.
func valueAt(r Record, label, field, stat string) (v, lo, hi float64) {
	nan := math.NaN()
	for _, s := range r.Results {
		if s.Policy != label {
			continue
		}
		ms, ok := s.Metrics.Lookup(field)
		if !ok {
			break
		}
		if stat == "" {
			stat = "mean" // one replication: the mean is the value
		}
		v, _ = ms.Stat(stat)
		lo, hi = nan, nan
		if len(ms.CI95) == 2 && r.Replications > 1 {
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
func grid3(v []float64, nx, ny, np int) [][][]float64 {
	g := make([][][]float64, np)
	for p := range g {
		g[p] = make([][]float64, ny)
		for y := range g[p] {
			g[p][y] = make([]float64, nx)
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
