package solve

import (
	"fmt"
	"math"

	"strings"

	"stormsim/plots"
	"stormsim/results"
)

// Chart base names of a solve directory.
const (
	RequirementsChart = "requirements" // each requirement's metric against the key, at every probe
	FrontierChart     = "frontier"     // with across: the answer against the across key
)

// chartFiles are the chart files d draws.
func (d *Document) chartFiles() []string {
	names := []string{RequirementsChart}
	if d.Across != nil {
		names = append(names, FrontierChart)
	}
	return plots.FileNames(names...)
}

// WriteCharts draws d's charts into dir from the document alone, so that
// a merged directory gets the charts an unsharded run draws; it returns
// the files written.
func (d *Document) WriteCharts(dir string) ([]string, error) {
	charts, err := d.Charts(plots.Options{})
	if err != nil {
		return nil, err
	}
	var written []string
	for _, c := range charts {
		paths, err := c.Save(dir, plots.Options{})
		written = append(written, paths...)
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// Charts draws d's charts in memory, from the document alone: the
// requirements chart, and the frontier with across; the files solve -o
// writes.
func (d *Document) Charts(opt plots.Options) ([]*plots.Chart, error) {
	caption := fmt.Sprintf("%s, seed %d, %d replication%s per probe, the same seeds at every probe", d.Name, d.Seed, d.Replications, plural(d.Replications))
	key := plots.SolveKey{Name: d.Vary.Key, Unit: d.Vary.Unit, Min: d.Vary.Min.X, Max: d.Vary.Max.X,
		Log: strings.HasSuffix(d.Vary.Resolution, "%"), Goal: string(d.Vary.Goal)}
	s := plots.Solve{File: RequirementsChart, Caption: caption, Key: key}
	for _, r := range d.Requirements {
		s.Panels = append(s.Panels, plots.SolvePanel{Metric: plots.SweepMetric{Name: r.Metric, Unit: r.Unit}, Axis: axisName(r.Metric), Op: r.Op, Limit: r.Bound})
	}
	for g, c := range d.Cases {
		s.Groups = append(s.Groups, c.label(d))
		s.Answers = append(s.Answers, c.answerX())
		for _, st := range c.Searches[0].Steps {
			for i, o := range st.Observations {
				s.Panels[i].Points = append(s.Panels[i].Points, plots.SolvePoint{Group: g, X: st.X, Y: float64(o.Observed), Pass: o.Pass})
			}
		}
	}
	req, err := s.Requirements(opt)
	if err != nil {
		return nil, err
	}
	if d.Across == nil {
		return []*plots.Chart{req}, nil
	}
	f := plots.SolveFrontier{File: FrontierChart, Caption: caption, Key: key,
		X: plots.SweepAxis{Name: d.Across.Key, Unit: d.Across.Unit}}
	for _, c := range d.Cases {
		f.X.Values = append(f.X.Values, c.Across.X)
		f.X.Labels = append(f.X.Labels, c.Across.Value)
		f.Answers = append(f.Answers, c.answerX())
		f.Bounds = append(f.Bounds, c.boundX())
		for _, st := range c.Searches[0].Steps {
			f.Points = append(f.Points, plots.FrontierPoint{X: c.Across.X, Y: st.X, Pass: st.Pass, Unended: d.unended(st)})
		}
	}
	front, err := f.Chart(opt)
	if err != nil {
		return nil, err
	}
	return []*plots.Chart{req, front}, nil
}

// axisName names the value axis of a metric without a time unit: "rows/s"
// for peak_rows_per_s, "fraction of runs" for the mean of a yes-or-no
// metric, the field's last part otherwise.
func axisName(metric string) string {
	ref, err := results.ParseMetricRef(metric)
	if err != nil {
		return ""
	}
	parts := strings.Split(ref.Field, ".")
	last := parts[len(parts)-1]
	switch {
	case strings.HasSuffix(last, "_per_s"):
		words := strings.Split(strings.TrimSuffix(last, "_per_s"), "_")
		return words[len(words)-1] + "/s"
	case isOutcome(last) && ref.Stat == "mean":
		return "fraction of runs"
	}
	return last
}

// unended reports whether some storm of a step did not end, as an
// outcome requirement (converged, metastable) observes it.
func (d *Document) unended(st StepDoc) bool {
	for i, r := range d.Requirements {
		ref, err := results.ParseMetricRef(r.Metric)
		if err != nil {
			continue
		}
		o := float64(st.Observations[i].Observed)
		switch {
		case math.IsNaN(o):
		case ref.Field == "converged" && o < 1, ref.Field == "metastable" && o > 0:
			return true
		}
	}
	return false
}

// label names a case in a legend: "clients=25000", "" without across.
func (c CaseDoc) label(d *Document) string {
	if c.Across == nil {
		return ""
	}
	return d.Across.Key + "=" + c.Across.Value
}

// answerX is the case's answer, NaN without one.
func (c CaseDoc) answerX() float64 {
	if c.Result.Answer == nil {
		return math.NaN()
	}
	return c.Result.Answer.X
}

// boundX is the case's first first-order bound, NaN without one.
func (c CaseDoc) boundX() float64 {
	if len(c.Bounds) == 0 {
		return math.NaN()
	}
	return c.Bounds[0].Bound.X
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
