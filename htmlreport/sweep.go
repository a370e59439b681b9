package htmlreport

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"stormsim/plots"
	"stormsim/results"
	"stormsim/sweep"
)

// SweepFile is the document that marks a sweep's directory.
const SweepFile = sweep.ManifestFile

// MaxEmbeddedPoints bounds the sweep.ndjson a sweep's page holds: a
// larger one stays beside it, and the page says so.
const MaxEmbeddedPoints = 8 << 20

func sweepFromDir(dir string) (*Page, error) {
	res, err := sweep.Read(dir)
	if err != nil {
		return nil, err
	}
	manifest, err := os.ReadFile(filepath.Join(dir, sweep.ManifestFile))
	if err != nil {
		return nil, err
	}
	points, err := readBounded(filepath.Join(dir, sweep.PointsFile), MaxEmbeddedPoints)
	if err != nil {
		return nil, err
	}
	return SweepPage(res, manifest, points)
}

// readBounded is the file at path, or nil when it is larger than limit.
func readBounded(path string, limit int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Size() > limit {
		return nil, nil
	}
	return os.ReadFile(path)
}

// SweepPage is the page of a finished sweep: its result, sweep.json as
// written and sweep.ndjson (nil when too large to embed). It holds the
// headline, the points with the checks each fails, the charts (heat maps
// hatching the points that fail a check), the base scenario and the
// documents.
func SweepPage(res *sweep.Result, manifestJSON, pointsNDJSON []byte) (*Page, error) {
	m := res.Manifest
	p := &Page{Kind: "sweep", Name: results.DisplayName(m.Name)}
	charts, err := res.Charts(chartOptions)
	if err != nil {
		return nil, err
	}
	p.Headline = sweepHeadline(res, charts)
	if len(m.Checks) > 0 {
		p.Verdict = "PASS"
		if res.Meeting == 0 {
			p.Verdict = "FAIL"
		}
	}
	var dims []string
	for _, ax := range m.Axes {
		dims = append(dims, fmt.Sprintf("%s (%d)", ax.Path, len(ax.X)))
	}
	p.Facts = []Fact{{"points", count(int64(m.Points))}, {"axes", strings.Join(dims, " × ")},
		{"replications per point", fmt.Sprint(m.Replications)}, {"seed", fmt.Sprint(m.Seed)},
		{"sweep", shortHash(m.Sweep)}, {"written by", m.Tool}}
	section, err := chartSection(charts, nil)
	if err != nil {
		return nil, err
	}
	p.Sections = append(p.Sections, section, sweepPoints(res))
	p.Config = Config{Title: "base scenario", Hash: m.Sweep}
	if len(m.Base) > 0 {
		if p.Config, err = configOf("base scenario", m.Base, m.Sweep); err != nil {
			return nil, err
		}
	}
	p.Data = []Data{{ID: "data-sweep", File: sweep.ManifestFile, Body: manifestJSON}}
	if pointsNDJSON != nil {
		p.Data = append(p.Data, Data{ID: "data-points", File: sweep.PointsFile, Body: pointsNDJSON})
	}
	return p, nil
}

// sweepHeadline: how many points meet the checks, or else the finding
// of the first chart.
func sweepHeadline(res *sweep.Result, charts []*plots.Chart) string {
	m := res.Manifest
	switch {
	case len(m.Checks) > 0 && res.Meeting == 0:
		return fmt.Sprintf("No point of %s meets every requirement (%s): relax one.", count(int64(m.Points)), strings.Join(m.Checks, ", "))
	case len(m.Checks) > 0:
		return fmt.Sprintf("%s of %s points meet every requirement (%s).", count(int64(res.Meeting)), count(int64(m.Points)), strings.Join(m.Checks, ", "))
	case len(charts) > 0:
		return charts[0].Title + "."
	}
	return fmt.Sprintf("%s points swept.", count(int64(m.Points)))
}

// sweepPoints is the table of points: axis values, each policy's
// metrics (the statistic the charts show), and the checks it fails.
func sweepPoints(res *sweep.Result) Section {
	m := res.Manifest
	sec := Section{ID: "points", Title: "points"}
	if len(res.Points) < m.Points {
		sec.Text = append(sec.Text, fmt.Sprintf("The first %s of %s points; %s holds every one.", count(int64(len(res.Points))), count(int64(m.Points)), sweep.CSVFile))
	}
	t := Table{ID: "points-table"}
	for _, ax := range m.Axes {
		t.Header = append(t.Header, ax.Path)
	}
	t.Header = append(t.Header, "policy")
	var refs []results.MetricRef
	for _, text := range m.Metrics {
		ref, err := results.ParseMetricRef(text)
		if err != nil {
			continue
		}
		if ref.Stat == "" && m.Replications > 1 {
			ref.Stat = "mean"
		}
		refs = append(refs, ref)
		shown := ref
		shown.Policy = ""
		t.Header = append(t.Header, shown.String())
	}
	if len(m.Checks) > 0 {
		t.Header = append(t.Header, "checks")
		sec.Text = append(sec.Text, fmt.Sprintf("Every point is held to the base scenario's checks (%s), as stormsim check would hold a run of it; the figure a failed check reads is marked.", strings.Join(m.Checks, ", ")))
	}
	for _, pt := range res.Points {
		for _, sum := range pt.Summaries {
			var row []Cell
			for _, v := range pt.Values {
				row = append(row, Cell{Text: v.Label})
			}
			row = append(row, Cell{Text: sum.Policy})
			var failed []string
			for _, f := range pt.Failing {
				if f.Policy == sum.Policy {
					failed = append(failed, f.Text)
				}
			}
			for _, ref := range refs {
				cell := Cell{Text: "", Class: "num"}
				if ms, ok := sum.Metrics.Lookup(ref.Field); ok && (ref.Policy == "" || ref.Policy == sum.Policy) {
					cell.Text = statText(ms, ref)
				}
				for _, f := range pt.Failing {
					if f.Policy == sum.Policy && f.Field == ref.Field {
						cell.Class = "num marked"
					}
				}
				row = append(row, cell)
			}
			if len(m.Checks) > 0 {
				if len(failed) == 0 {
					row = append(row, Cell{Text: "PASS", Class: "pass"})
				} else {
					row = append(row, Cell{Text: "FAIL", Class: "fail"})
				}
			}
			t.Rows = append(t.Rows, row)
		}
	}
	sec.Tables = []Table{t}
	return sec
}

// statText is the statistic ref names (its value, for one replication)
// of one metric, in its unit.
func statText(ms results.MetricStat, ref results.MetricRef) string {
	var v float64
	var ok bool
	if ref.Stat == "" {
		v, ok = ms.Stat("mean")
	} else {
		v, ok = ms.Stat(ref.Stat)
	}
	switch {
	case !ok:
		return ""
	case results.TimeUnit(ref.Field) == "ms":
		return seconds(v)
	}
	if r := sig4(v); r == math.Trunc(r) && math.Abs(r) >= 1000 {
		return count(int64(r))
	}
	return strconv.FormatFloat(sig4(v), 'f', -1, 64)
}

// sig4 rounds v to four significant digits.
func sig4(v float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 4, 64), 64)
	return r
}
