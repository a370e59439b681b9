package plots

import (
	"errors"
	"fmt"
	"os"
	"slices"
)

// Chart file base names; each is written as NAME.png and NAME.svg.
const (
	AttemptsChart    = "attempts"     // attempts per window over time
	ConnectedChart   = "connected"    // fraction of clients connected over time
	WorkVsTimeChart  = "work-vs-time" // total attempts against convergence time
	ReclaimChart     = "reclaim"      // reclaim-time histogram (lease model)
	StaleRoutesChart = "stale-routes" // stale routes over time (lease model)
	DatabaseChart    = "database"     // database rows/s against budget (database model)
	GoodputChart     = "goodput"      // attempts, useful and wasted claims per window (runs with an outcome)
	QueueChart       = "queue"        // handshakes waiting over time (runs with an outcome and a capacity)
)

// ChartNames are the base names of every chart Write or Overlay may
// write, whichever models a run has.
var ChartNames = []string{AttemptsChart, ConnectedChart, WorkVsTimeChart, ReclaimChart, StaleRoutesChart, DatabaseChart, GoodputChart, QueueChart}

// FileNames are the file names charts with these base names are written
// to with the default formats: NAME.png and NAME.svg.
func FileNames(names ...string) []string {
	var out []string
	for _, n := range names {
		for _, f := range (Options{}).withDefaults().Formats {
			out = append(out, n+"."+f)
		}
	}
	return out
}

// Write draws every chart the run has data for into dir (which must
// exist) and returns the paths written, in the order of the constants
// above.
func Write(dir string, run Run, opt Options) ([]string, error) {
	return Overlay(dir, []Run{run}, opt)
}

// Overlay draws the charts of several runs on shared axes, for comparing
// saved results: each policy keeps one colour across runs and each run
// has its own dash pattern; legends read "LABEL · policy", where LABEL is
// Run.Label (or Run.Name). Labels must be unique. It returns the paths
// written.
func Overlay(dir string, runs []Run, opt Options) ([]string, error) {
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	charts, err := Charts(runs, opt)
	if err != nil {
		return nil, err
	}
	return SaveAll(dir, charts, opt)
}

// SaveAll saves each chart into dir (Chart.Save) and returns the paths
// written, up to the first failure.
func SaveAll(dir string, charts []*Chart, opt Options) ([]string, error) {
	var written []string
	for _, c := range charts {
		paths, err := c.Save(dir, opt)
		written = append(written, paths...)
		if err != nil {
			return written, fmt.Errorf("plots: %s: %w", c.Name, err)
		}
	}
	return written, nil
}

// Charts draws, in memory, the charts Overlay writes (Write for one run),
// in the order of the constants above.
func Charts(runs []Run, opt Options) ([]*Chart, error) {
	opt = opt.withDefaults()
	if err := checkOverlay(runs); err != nil {
		return nil, err
	}
	ds := flatten(runs)
	focusRuns, focusDs := focus(runs, ds, opt.Focus)
	var charts []*Chart
	for _, name := range chartNames(runs) {
		f := chartBuilders[name](runs, ds, opt)
		if len(opt.Focus) > 0 {
			f.title = chartTitles[name](focusRuns, focusDs)
		}
		charts = append(charts, newChart(name, f))
	}
	return charts, nil
}

// focus is the runs labelled in labels and their lines: what the titles
// speak of when Options.Focus is set.
func focus(runs []Run, ds []drawn, labels []string) ([]Run, []drawn) {
	var fr []Run
	var fd []drawn
	for i := range runs {
		if slices.Contains(labels, runs[i].label()) {
			fr = append(fr, runs[i])
		}
	}
	for _, d := range ds {
		if slices.Contains(labels, d.run.label()) {
			fd = append(fd, d)
		}
	}
	return fr, fd
}

// checkOverlay refuses runs that cannot be drawn together: none, an
// invalid one, two with one label.
func checkOverlay(runs []Run) error {
	if len(runs) == 0 {
		return errors.New("plots: no runs to chart")
	}
	seen := map[string]bool{}
	for i := range runs {
		if err := runs[i].Validate(); err != nil {
			return fmt.Errorf("plots: %w", err)
		}
		l := runs[i].label()
		if len(runs) > 1 && seen[l] {
			return fmt.Errorf("plots: two runs are labelled %q; give each a distinct Label", l)
		}
		seen[l] = true
	}
	return nil
}

// checkDir refuses a dir that is not a directory.
func checkDir(dir string) error {
	if st, err := os.Stat(dir); err != nil {
		return fmt.Errorf("plots: %w", err)
	} else if !st.IsDir() {
		return fmt.Errorf("plots: %s is not a directory", dir)
	}
	return nil
}

// chartBuilders draw each chart, by its name, from the runs and their
// policies' series.
var chartBuilders = map[string]func(runs []Run, ds []drawn, opt Options) *figure{
	AttemptsChart:    attemptsChart,
	ConnectedChart:   connectedChart,
	WorkVsTimeChart:  func(runs []Run, ds []drawn, _ Options) *figure { return workVsTimeChart(runs, ds) },
	ReclaimChart:     func(runs []Run, _ []drawn, _ Options) *figure { return reclaimChart(runs) },
	StaleRoutesChart: staleChart,
	DatabaseChart:    databaseChart,
	GoodputChart:     goodputChart,
	QueueChart:       queueChart,
}

// chartTitles compute each chart's title from the runs and lines it
// speaks of, for Options.Focus.
var chartTitles = map[string]func(runs []Run, ds []drawn) string{
	AttemptsChart:  attemptsTitle,
	ConnectedChart: func(_ []Run, ds []drawn) string { return connectedTitle(ds) },
	WorkVsTimeChart: func(_ []Run, ds []drawn) string {
		return workTitle(convergedWork(ds))
	},
	ReclaimChart: func(runs []Run, _ []drawn) string { return reclaimTitle(withReclaims(runs)) },
	StaleRoutesChart: func(_ []Run, ds []drawn) string {
		return staleTitle(withSeries(ds, staleRoutes))
	},
	DatabaseChart: func(_ []Run, ds []drawn) string { return databaseTitle(withSeries(ds, dbRows)) },
	GoodputChart:  func(_ []Run, ds []drawn) string { return goodputTitle(withSeries(ds, goodput)) },
	QueueChart:    func(_ []Run, ds []drawn) string { return queueTitle(withSeries(ds, queued)) },
}

// withSeries are the lines that have the series pick picks.
func withSeries(ds []drawn, pick func(*PolicySeries) []float64) []drawn {
	return slices.DeleteFunc(slices.Clone(ds), func(d drawn) bool { return len(pick(d.p)) == 0 })
}

// Names lists the chart base names Write would produce for run: the three
// core charts plus those of the failure models the run has data for.
func Names(run Run) []string {
	return chartNames([]Run{run})
}

func chartNames(runs []Run) []string {
	names := []string{AttemptsChart, ConnectedChart, WorkVsTimeChart}
	has := func(pred func(*Run) bool) bool {
		for i := range runs {
			if pred(&runs[i]) {
				return true
			}
		}
		return false
	}
	if has(func(r *Run) bool { return r.Reclaim != nil && len(r.Reclaim.TimesMs) > 0 }) {
		names = append(names, ReclaimChart)
	}
	if has(func(r *Run) bool { return anyPolicy(r, staleRoutes) }) {
		names = append(names, StaleRoutesChart)
	}
	if has(func(r *Run) bool { return anyPolicy(r, dbRows) }) {
		names = append(names, DatabaseChart)
	}
	if has(func(r *Run) bool { return anyPolicy(r, goodput) }) {
		names = append(names, GoodputChart)
	}
	if has(func(r *Run) bool { return anyPolicy(r, nonZero(queued)) }) {
		names = append(names, QueueChart)
	}
	return names
}

func anyPolicy(r *Run, pick func(*PolicySeries) []float64) bool {
	for i := range r.Policies {
		if len(pick(&r.Policies[i])) > 0 {
			return true
		}
	}
	return false
}

// nonZero picks a series only when some window of it is not zero.
func nonZero(pick func(*PolicySeries) []float64) func(*PolicySeries) []float64 {
	return func(p *PolicySeries) []float64 {
		if slices.ContainsFunc(pick(p), func(v float64) bool { return v != 0 }) {
			return pick(p)
		}
		return nil
	}
}
