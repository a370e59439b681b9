package sweep

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"path/filepath"
	"strconv"

	"stormsim/internal/atomicfile"
	"stormsim/results"
)

// Finalize writes sweep.csv and, if charts is set, the charts of a
// complete sweep directory, from its sweep.json and sweep.ndjson alone, so
// that a merged directory gets exactly the files an unsharded run writes.
// It returns the chart files written.
func Finalize(dir string, charts bool) ([]string, error) {
	m, _, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	recs, err := readRecords(filepath.Join(dir, PointsFile))
	if err != nil {
		return nil, err
	}
	if len(recs) != m.Points {
		return nil, &InputError{fmt.Sprintf("%s: %d of %d points are done; finish with --resume (or merge every shard)", filepath.Join(dir, PointsFile), len(recs), m.Points)}
	}
	for i, r := range recs {
		if r.Index != i || r.Sweep != m.Sweep {
			return nil, &InputError{fmt.Sprintf("%s:%d: holds point %d of sweep %s where point %d of %s belongs", filepath.Join(dir, PointsFile), i+1, r.Index, short(r.Sweep), i, short(m.Sweep))}
		}
	}
	data, err := csvTable(m, recs)
	if err != nil {
		return nil, err
	}
	if err := atomicfile.Write(filepath.Join(dir, CSVFile), data); err != nil {
		return nil, err
	}
	if !charts {
		return nil, nil
	}
	return writeCharts(dir, m, recs)
}

// csvTable is sweep.csv: one row per point and policy with the axis values
// and every metric. With replications each metric has its mean (under its
// own name) and then STAT(name) columns for the other statistics.
func csvTable(m Manifest, recs []Record) ([]byte, error) {
	var names []string
	seen := map[string]bool{}
	replicated := false
	for _, r := range recs {
		replicated = replicated || r.Replications > 1
		for _, s := range r.Results {
			for _, ms := range s.Metrics {
				if !seen[ms.Name] {
					seen[ms.Name] = true
					names = append(names, ms.Name)
				}
			}
		}
	}
	header := []string{"index", "id"}
	for _, ax := range m.Axes {
		header = append(header, ax.Path)
	}
	header = append(header, "seed", "replications", "policy")
	var extra []string
	if replicated {
		for _, st := range results.Stats {
			if st != "mean" {
				extra = append(extra, st)
			}
		}
	}
	for _, n := range names {
		header = append(header, n)
		for _, st := range extra {
			header = append(header, st+"("+n+")")
		}
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(header)
	for _, r := range recs {
		for _, s := range r.Results {
			row := []string{strconv.Itoa(r.Index), r.ID}
			for _, v := range r.Values {
				row = append(row, v.Label)
			}
			row = append(row, strconv.FormatUint(r.Seed, 10), strconv.Itoa(r.Replications), s.Policy)
			for _, n := range names {
				ms, ok := s.Metrics.Lookup(n)
				for _, st := range append([]string{"mean"}, extra...) {
					cell := ""
					if v, has := ms.Stat(st); ok && has {
						cell = number(v)
					}
					row = append(row, cell)
				}
			}
			w.Write(row)
		}
	}
	w.Flush()
	return b.Bytes(), w.Error()
}

func number(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}
