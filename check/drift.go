package check

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"stormsim/results"
)

// Tolerance is how far a value may move from its baseline before it
// drifts: by more than Relative times the baseline value and by more
// than the floor of its unit, both.
type Tolerance struct {
	Relative float64 // a fraction: 0.05 for 5%
	Floors   Floors
}

// Floors are the absolute changes too small to count as drift, per unit:
// a 0.3 ms change in a queue wait is noise whatever its relative size.
type Floors struct {
	Ms       float64 // times (_ms and _seconds metrics), in milliseconds
	Count    float64 // whole counts (attempts, accepted, per-window counts)
	PerS     float64 // rates (_per_s), per second
	Fraction float64 // everything else: fractions (tail_busy), yes-or-no (converged)
}

// DefaultFloors are the floors of a comparison with a tolerance, unless
// --tolerance-abs sets others: the least change each unit shows (1 ms, 1
// count, 1 per second); none for fractions, where 1 is everything.
var DefaultFloors = Floors{Ms: 1, Count: 1, PerS: 1}

// floor is the floor of metric (or series) field.
func (f Floors) floor(field string) float64 {
	switch {
	case results.TimeUnit(field) == "ms":
		return f.Ms
	case results.TimeUnit(field) == "s":
		return f.Ms / 1000
	case isRate(field):
		return f.PerS
	case results.IsCount(field):
		return f.Count
	}
	return f.Fraction
}

// drifts reports whether current moved from baseline beyond t, for a
// value of field.
func (t Tolerance) drifts(field string, baseline, current float64) bool {
	diff := math.Abs(current - baseline)
	return diff > t.Relative*math.Abs(baseline) && diff > t.Floors.floor(field)
}

// ParseFloors reads --tolerance-abs: a comma-separated list of floors,
// each in its unit: a duration for times (5ms), a number for counts (2),
// a rate for rates (10/s), a percentage for fractions (1%). "0" alone
// sets every floor to 0. Units not given keep DefaultFloors'.
func ParseFloors(s string) (Floors, error) {
	f := DefaultFloors
	if strings.TrimSpace(s) == "0" {
		return Floors{}, nil
	}
	bad := fmt.Errorf("--tolerance-abs wants floors such as 1ms,1,1/s,1%% (a time, a count, a rate, a fraction), or 0 for none (got %q)", s)
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		var v float64
		var err error
		var set *float64
		switch {
		case strings.HasSuffix(part, "/s"):
			v, err = strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(part, "/s")), 64)
			set = &f.PerS
		case strings.HasSuffix(part, "%"):
			v, err = strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(part, "%")), 64)
			v, set = v/100, &f.Fraction
		default:
			if v, err = strconv.ParseFloat(part, 64); err == nil {
				set = &f.Count
				break
			}
			b, _, perr := parseTime(part, results.MetricRef{Field: "x_ms"}, "ms")
			v, err, set = b, perr, &f.Ms
		}
		if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			return Floors{}, bad
		}
		*set = v
	}
	return f, nil
}

// Drift is a metric that moved from its baseline value beyond the
// tolerance, or that is missing now.
type Drift struct {
	Name              string
	Baseline, Current float64
	Missing           bool // the baseline has it, this run does not
}

// String is the report line of d.
func (d Drift) String() string {
	if d.Missing {
		return fmt.Sprintf("%s: %s in the baseline, no data now", d.Name, formatNumber(d.Baseline))
	}
	return fmt.Sprintf("%s: %s in the baseline, %s now (%s)", d.Name, formatNumber(d.Baseline), formatNumber(d.Current), change(d.Baseline, d.Current))
}

// change is the relative change from b to c, as the report writes it.
func change(b, c float64) string {
	if b == 0 {
		return "new non-zero value"
	}
	return fmt.Sprintf("%+.2f%%", 100*(c-b)/math.Abs(b))
}

// SeriesDrift is a series whose values drifted from the baseline's, over
// the windows both have, or that is missing now. Trailing empty windows
// count as none, so a series one empty window longer is not a drift; a
// series that runs longer with values shows in the totals (attempts,
// convergence_ms) that drift with it.
type SeriesDrift struct {
	Name                    string
	BaselineLen, CurrentLen int  // windows in each, trailing empty ones left out
	Differ                  int  // windows both have whose values drifted
	First                   int  // the first of them
	Missing                 bool // the baseline has values, this run no series
	// Worst is the window whose value moved most, Baseline and Current
	// its values; Peak is the baseline's largest value (in magnitude).
	Worst             int
	Baseline, Current float64
	Peak              float64
}

// String is the report line of d.
func (d SeriesDrift) String() string {
	if d.Missing {
		return fmt.Sprintf("%s: %d values in the baseline, no series now", d.Name, d.BaselineLen)
	}
	both := min(d.BaselineLen, d.CurrentLen)
	lengths := ""
	if d.BaselineLen != d.CurrentLen {
		lengths = fmt.Sprintf(" (the baseline has %d windows, this run %d)", d.BaselineLen, d.CurrentLen)
	}
	from := ""
	if d.First != d.Worst {
		from = fmt.Sprintf(" from [%d] on", d.First)
	}
	return fmt.Sprintf("%s: %d of %d windows differ%s%s, the most at [%d]: %s in the baseline, %s now (%s)",
		d.Name, d.Differ, both, from, lengths, d.Worst, formatNumber(d.Baseline), formatNumber(d.Current), change(d.Baseline, d.Current))
}

// Comparison is the result of comparing a document with a baseline.
type Comparison struct {
	Compared int      // metrics of the baseline compared
	Drifts   []Drift  // in the baseline's metric order
	New      []string // metrics this run has that the baseline lacks

	// Series are compared only when the baseline holds them (see Compare).
	SeriesCompared int           // series of the baseline compared
	SeriesDrifts   []SeriesDrift // in the baseline's order
	NewSeries      []string      // series this run has that the baseline lacks
}

// Drifted reports whether any metric or series drifted.
func (c Comparison) Drifted() bool { return len(c.Drifts)+len(c.SeriesDrifts) > 0 }

// Worst returns the report lines of the n largest drifts, and how many
// more metrics and series drifted: metrics first, the most changed relative to their size
// first (missing ones, then new non-zero values lead), then series, the
// most changed relative to their baseline's peak first; ties in the
// baseline's order.
func (c Comparison) Worst(n int) (lines []string, moreMetrics, moreSeries int) {
	type ranked struct {
		size float64
		line string
	}
	byMetric := make([]ranked, len(c.Drifts))
	for i, d := range c.Drifts {
		byMetric[i] = ranked{2, d.String()}
		if !d.Missing {
			byMetric[i].size = math.Abs(d.Current-d.Baseline) / math.Max(math.Abs(d.Baseline), math.Abs(d.Current))
		}
	}
	bySeries := make([]ranked, len(c.SeriesDrifts))
	for i, d := range c.SeriesDrifts {
		bySeries[i] = ranked{math.Inf(1), d.String()}
		if !d.Missing && d.Peak > 0 {
			bySeries[i].size = math.Abs(d.Current-d.Baseline) / d.Peak
		}
	}
	larger := func(a, b ranked) int {
		switch {
		case a.size > b.size:
			return -1
		case a.size < b.size:
			return 1
		}
		return 0
	}
	slices.SortStableFunc(byMetric, larger)
	slices.SortStableFunc(bySeries, larger)
	for _, r := range append(byMetric, bySeries...) {
		lines = append(lines, r.line)
	}
	shown := min(n, len(lines))
	moreMetrics = max(0, len(byMetric)-shown)
	return lines[:shown], moreMetrics, len(lines) - shown - moreMetrics
}

// Compare compares every metric of baseline with current: a metric drifts
// when it moved by more than tol (Tolerance), up or down; with a zero
// tolerance and zero floors any change drifts. When the baseline holds
// series (a run's full result, as stormsim run writes it; not a baseline
// written by --update-baseline, whose series are empty), every series is
// compared window by window by the same rule.
func Compare(baseline, current *results.Document, tol Tolerance) Comparison {
	now := map[string]float64{}
	var order []string
	for _, m := range DocumentMetrics(current) {
		now[m.Name] = m.Value
		order = append(order, m.Name)
	}
	var c Comparison
	seen := map[string]bool{}
	for _, m := range DocumentMetrics(baseline) {
		c.Compared++
		seen[m.Name] = true
		v, ok := now[m.Name]
		switch {
		case !ok:
			c.Drifts = append(c.Drifts, Drift{Name: m.Name, Baseline: m.Value, Missing: true})
		case tol.drifts(fieldOf(m.Name), m.Value, v):
			c.Drifts = append(c.Drifts, Drift{Name: m.Name, Baseline: m.Value, Current: v})
		}
	}
	for _, name := range order {
		if !seen[name] {
			c.New = append(c.New, name)
		}
	}
	compareSeries(&c, DocumentSeries(baseline), DocumentSeries(current), tol)
	return c
}

// fieldOf is the result field a metric name ("p95(results[a].attempts)")
// refers to, for its unit.
func fieldOf(name string) string {
	if ref, err := results.ParseMetricRef(name); err == nil {
		return ref.Field
	}
	return name
}

// compareSeries adds the series comparison to c, if the baseline holds
// series: at least one that has values.
func compareSeries(c *Comparison, baseline, current []results.Series, tol Tolerance) {
	if !slices.ContainsFunc(baseline, func(s results.Series) bool { return len(s.Values) > 0 }) {
		return
	}
	now := make(map[string][]float64, len(current))
	for _, s := range current {
		now[s.Name] = s.Values
	}
	seen := make(map[string]bool, len(baseline))
	for _, b := range baseline {
		c.SeriesCompared++
		seen[b.Name] = true
		values, ok := now[b.Name]
		if !ok && len(trimEmpty(b.Values)) > 0 {
			c.SeriesDrifts = append(c.SeriesDrifts, SeriesDrift{Name: b.Name, BaselineLen: len(trimEmpty(b.Values)), Missing: true})
			continue
		}
		if d, drifted := seriesDrift(b.Name, b.Values, values, tol); drifted {
			c.SeriesDrifts = append(c.SeriesDrifts, d)
		}
	}
	for _, s := range current {
		if !seen[s.Name] {
			c.NewSeries = append(c.NewSeries, s.Name)
		}
	}
}

// trimEmpty is v without its trailing zeros: empty windows at the end
// are the same as no windows.
func trimEmpty(v []float64) []float64 {
	n := len(v)
	for n > 0 && v[n-1] == 0 {
		n--
	}
	return v[:n]
}

// seriesDrift compares one series window by window, over the windows both
// have once trailing empty ones are left out.
func seriesDrift(name string, baseline, current []float64, tol Tolerance) (SeriesDrift, bool) {
	baseline, current = trimEmpty(baseline), trimEmpty(current)
	field := fieldOf(name)
	d := SeriesDrift{Name: name, BaselineLen: len(baseline), CurrentLen: len(current), First: -1}
	worst := -1.0
	for i := range min(len(baseline), len(current)) {
		b, cur := baseline[i], current[i]
		if !tol.drifts(field, b, cur) {
			continue
		}
		d.Differ++
		if d.First < 0 {
			d.First = i
		}
		if diff := math.Abs(cur - b); diff > worst {
			worst, d.Worst, d.Baseline, d.Current = diff, i, b, cur
		}
	}
	for _, b := range baseline {
		d.Peak = math.Max(d.Peak, math.Abs(b))
	}
	return d, d.Differ > 0
}

// ParseTolerance reads a tolerance as a percentage ("5%") or a fraction
// ("0.05").
func ParseTolerance(s string) (float64, error) {
	text, percent := strings.CutSuffix(strings.TrimSpace(s), "%")
	f, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, fmt.Errorf("--tolerance must be a percentage such as 5%% or a fraction such as 0.05 (got %q)", s)
	}
	if percent {
		f /= 100
	}
	return f, nil
}

// String lists the floors that are set: "1ms, 1 count, 1/s"; "" for none.
func (f Floors) String() string {
	var parts []string
	if f.Ms > 0 {
		parts = append(parts, formatNumber(f.Ms)+"ms")
	}
	if f.Count > 0 {
		parts = append(parts, formatNumber(f.Count)+" count")
	}
	if f.PerS > 0 {
		parts = append(parts, formatNumber(f.PerS)+"/s")
	}
	if f.Fraction > 0 {
		parts = append(parts, formatNumber(100*f.Fraction)+"%")
	}
	return strings.Join(parts, ", ")
}
