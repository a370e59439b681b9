package sweep

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"

	"stormsim/internal/atomicfile"
	"stormsim/plots"
	"stormsim/results"
)

// Finalize writes sweep.csv and, if charts is set, the charts of a
// complete sweep directory, from its sweep.json and sweep.ndjson alone, so
// that a merged directory gets exactly the files an unsharded run writes.
// It reads sweep.ndjson twice, a line at a time, and keeps only what the
// charts draw. It returns the chart files written.
func Finalize(dir string, charts bool) ([]string, error) {
	return finalize(context.Background(), dir, charts)
}

// finalize is Finalize that stops, with an *InterruptedError, when ctx
// is cancelled.
func finalize(ctx context.Context, dir string, charts bool) ([]string, error) {
	m, _, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, PointsFile)
	sc, err := scanPoints(ctx, m, path, nil)
	if err != nil {
		return nil, err
	}
	table := &csvTable{ctx: ctx, m: m, path: path, names: sc.names, replicated: sc.replicated}
	if err := atomicfile.WriteFrom(filepath.Join(dir, CSVFile), table); err != nil {
		return nil, err
	}
	if !charts {
		return nil, nil
	}
	if ctx.Err() != nil {
		return nil, &InterruptedError{Done: m.Points, Points: m.Points, File: path, Finishing: true}
	}
	return writeCharts(dir, m, sc.charts)
}

// pointScan is what a first pass over sweep.ndjson learns: the CSV's
// metric columns, whether any point was replicated, and the charts'
// values.
type pointScan struct {
	names      []string // every metric name, in order of first appearance
	replicated bool
	charts     *chartValues
}

// scanPoints reads sweep.ndjson at path once, a line at a time, and
// checks that it holds every point of the sweep m, in order; each, when
// set, sees every point's record and summaries.
func scanPoints(ctx context.Context, m Manifest, path string, each func(r *Record, sums []results.Summary)) (pointScan, error) {
	sc := pointScan{charts: newChartValues(m)}
	seen := map[string]bool{}
	count := 0
	var misplaced error
	_, err := EachLine(path, func(k int, l Line) error {
		if ctx.Err() != nil {
			return &InterruptedError{Done: m.Points, Points: m.Points, File: path, Finishing: true}
		}
		r, err := l.Decode(path, k)
		if err != nil {
			return err
		}
		if (r.Index != count || r.Sweep != LineID(m.Sweep)) && misplaced == nil {
			misplaced = &InputError{fmt.Sprintf("%s:%d: holds point %d of sweep %s where point %d of %s belongs", path, k, r.Index, r.Sweep, count, LineID(m.Sweep))}
		}
		count++
		sc.replicated = sc.replicated || r.Replications > 1
		for _, pr := range r.Results {
			ms := r.Metrics
			if pr.Metrics != nil {
				ms = pr.Metrics
			}
			for _, n := range ms {
				if !seen[n] {
					seen[n] = true
					sc.names = append(sc.names, n)
				}
			}
		}
		sums := r.Summaries()
		sc.charts.add(&r, sums)
		if each != nil {
			each(&r, sums)
		}
		return nil
	})
	if err != nil {
		return sc, err
	}
	if count != m.Points {
		return sc, &InputError{fmt.Sprintf("%s: %d of %d points are done; finish with --resume (or merge every shard)", path, count, m.Points)}
	}
	return sc, misplaced
}

// csvTable is sweep.csv, written by a second pass over sweep.ndjson: one
// row per point and policy with the axis values and every metric. With
// replications each metric has its mean (under its own name) and then
// STAT(name) columns for the other statistics.
type csvTable struct {
	ctx        context.Context
	m          Manifest
	path       string
	names      []string
	replicated bool
}

// WriteTo writes the table to w.
func (t *csvTable) WriteTo(w io.Writer) (int64, error) {
	cw := &countingWriter{w: w}
	out := csv.NewWriter(cw)
	stats := []string{"mean"} // the mean first, under the metric's own name
	if t.replicated {
		for _, st := range results.Stats {
			if st != "mean" {
				stats = append(stats, st)
			}
		}
	}
	out.Write(t.header(stats))
	_, err := EachLine(t.path, func(k int, l Line) error {
		if t.ctx.Err() != nil {
			return &InterruptedError{Done: t.m.Points, Points: t.m.Points, File: t.path, Finishing: true}
		}
		r, err := l.Decode(t.path, k)
		if err != nil {
			return err
		}
		for _, s := range r.Summaries() {
			if err := out.Write(t.row(&r, s, stats)); err != nil {
				return err
			}
		}
		return nil
	})
	out.Flush()
	if err == nil {
		err = out.Error()
	}
	return cw.n, err
}

// header names the columns: the point, its axes, its seed and
// replications, the policy, then each metric's stats, the mean under the
// metric's own name and every other as STAT(name).
func (t *csvTable) header(stats []string) []string {
	header := []string{"index", "id"}
	for _, ax := range t.m.Axes {
		header = append(header, ax.Path)
	}
	header = append(header, "seed", "replications", "policy")
	for _, n := range t.names {
		for _, st := range stats {
			if st == "mean" {
				header = append(header, n)
			} else {
				header = append(header, st+"("+n+")")
			}
		}
	}
	return header
}

// row is one policy's row at point r; a metric it lacks has empty cells.
func (t *csvTable) row(r *Record, s results.Summary, stats []string) []string {
	row := []string{strconv.Itoa(r.Index), r.ID()}
	for _, v := range r.Values {
		row = append(row, v.Label)
	}
	row = append(row, strconv.FormatUint(r.Seed, 10), strconv.Itoa(r.Replications), s.Policy)
	for _, n := range t.names {
		ms, ok := s.Metrics.Lookup(n)
		for _, st := range stats {
			cell := ""
			if v, has := ms.Stat(st); ok && has {
				cell = number(v)
			}
			row = append(row, cell)
		}
	}
	return row
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func number(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// chartCount is how many chart files the plan's sweep draws.
func (p *Plan) chartCount() int {
	return len(chartJobs(p.Manifest())) * len(plots.FileNames(""))
}
