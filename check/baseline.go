package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"stormsim/results"
)

// DocumentMetrics lists every numeric metric of doc under the names checks
// use: results[LABEL].FIELD for each result and STAT(results[LABEL].FIELD)
// for each statistic of the summary over replications.
func DocumentMetrics(doc *results.Document) []results.Metric {
	var out []results.Metric
	for i := range doc.Results {
		r := &doc.Results[i]
		for _, m := range results.ResultMetrics(r) {
			name := results.MetricRef{Policy: r.Policy, Field: m.Name}.String()
			out = append(out, results.Metric{Name: name, Value: m.Value})
		}
	}
	for _, s := range doc.Summary {
		for _, ms := range s.Metrics {
			for _, stat := range results.Stats {
				if v, ok := ms.Stat(stat); ok {
					name := results.MetricRef{Stat: stat, Policy: s.Policy, Field: ms.Name}.String()
					out = append(out, results.Metric{Name: name, Value: v})
				}
			}
		}
	}
	return out
}

// Drift is a metric that moved from its baseline value by more than the
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
	change := "new non-zero value"
	if d.Baseline != 0 {
		change = fmt.Sprintf("%+.2f%%", 100*(d.Current-d.Baseline)/math.Abs(d.Baseline))
	}
	return fmt.Sprintf("%s: %s in the baseline, %s now (%s)", d.Name, formatNumber(d.Baseline), formatNumber(d.Current), change)
}

// DocumentSeries lists every series of doc's results (results.ResultSeries)
// under the names checks use: results[LABEL].FIELD.
func DocumentSeries(doc *results.Document) []results.Series {
	var out []results.Series
	for i := range doc.Results {
		r := &doc.Results[i]
		for _, s := range results.ResultSeries(r) {
			s.Name = results.MetricRef{Policy: r.Policy, Field: s.Name}.String()
			out = append(out, s)
		}
	}
	return out
}

// SeriesDrift is a series that differs from its baseline: some of its
// values drifted, it has more or fewer of them, or it is missing now.
type SeriesDrift struct {
	Name                    string
	BaselineLen, CurrentLen int  // values in each
	Differ                  int  // values that drifted, or that one side lacks
	First                   int  // the index of the first of them
	Missing                 bool // the baseline has it, this run does not
	// Baseline and Current are the values at First; NaN where that side
	// has none.
	Baseline, Current float64
}

// String is the report line of d.
func (d SeriesDrift) String() string {
	if d.Missing {
		return fmt.Sprintf("%s: %d values in the baseline, no series now", d.Name, d.BaselineLen)
	}
	lengths := ""
	if d.BaselineLen != d.CurrentLen {
		lengths = fmt.Sprintf(" (%d in the baseline, %d now)", d.BaselineLen, d.CurrentLen)
	}
	at := func(v float64) string {
		if math.IsNaN(v) {
			return "none"
		}
		return formatNumber(v)
	}
	first := Drift{Name: fmt.Sprintf("first at [%d]", d.First), Baseline: d.Baseline, Current: d.Current}.String()
	if math.IsNaN(d.Baseline) || math.IsNaN(d.Current) {
		first = fmt.Sprintf("first at [%d]: %s in the baseline, %s now", d.First, at(d.Baseline), at(d.Current))
	}
	return fmt.Sprintf("%s: %d of %d values differ%s, the %s", d.Name, d.Differ, max(d.BaselineLen, d.CurrentLen), lengths, first)
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

// Compare compares every metric of baseline with current. A metric drifts
// when |current - baseline| > tolerance * |baseline| (tolerance is a
// fraction: 0.05 for 5%), up or down; so with a zero baseline any change
// drifts, and tolerance 0 asks for identical values. When the baseline
// holds series (a run's full result, as stormsim run writes it; not a
// baseline written by --update-baseline, whose series are empty), every
// series is compared value by value by the same rule.
func Compare(baseline, current *results.Document, tolerance float64) Comparison {
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
		case math.Abs(v-m.Value) > tolerance*math.Abs(m.Value):
			c.Drifts = append(c.Drifts, Drift{Name: m.Name, Baseline: m.Value, Current: v})
		}
	}
	for _, name := range order {
		if !seen[name] {
			c.New = append(c.New, name)
		}
	}
	compareSeries(&c, DocumentSeries(baseline), DocumentSeries(current), tolerance)
	return c
}

// compareSeries adds the series comparison to c, if the baseline holds
// series: at least one that has values.
func compareSeries(c *Comparison, baseline, current []results.Series, tolerance float64) {
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
		if !ok {
			c.SeriesDrifts = append(c.SeriesDrifts, SeriesDrift{Name: b.Name, BaselineLen: len(b.Values), Missing: true})
			continue
		}
		if d, drifted := seriesDrift(b.Name, b.Values, values, tolerance); drifted {
			c.SeriesDrifts = append(c.SeriesDrifts, d)
		}
	}
	for _, s := range current {
		if !seen[s.Name] {
			c.NewSeries = append(c.NewSeries, s.Name)
		}
	}
}

// seriesDrift compares one series value by value.
func seriesDrift(name string, baseline, current []float64, tolerance float64) (SeriesDrift, bool) {
	d := SeriesDrift{Name: name, BaselineLen: len(baseline), CurrentLen: len(current), First: -1}
	for i := range max(len(baseline), len(current)) {
		b, cur := math.NaN(), math.NaN()
		if i < len(baseline) {
			b = baseline[i]
		}
		if i < len(current) {
			cur = current[i]
		}
		if !math.IsNaN(b) && !math.IsNaN(cur) && math.Abs(cur-b) <= tolerance*math.Abs(b) {
			continue
		}
		d.Differ++
		if d.First < 0 {
			d.First, d.Baseline, d.Current = i, b, cur
		}
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

// ReadDocument reads a result document written by stormsim run or
// stormsim check --update-baseline. Every error names path and says what
// is wrong in one line.
func ReadDocument(path string) (*results.Document, error) {
	data, err := readDocument(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: cannot read: %v", path, err)
	}
	return ParseDocument(path, data)
}

// maxStreamedDocument bounds a document read from a pipe or a device,
// whose size is not known before reading (a regular file is read whole).
const maxStreamedDocument = 256 << 20

func readDocument(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		return io.ReadAll(f)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxStreamedDocument+1))
	if err == nil && len(data) > maxStreamedDocument {
		err = fmt.Errorf("more than %d MiB and not a regular file; is it a result document?", maxStreamedDocument>>20)
	}
	return data, err
}

// ParseDocument is ReadDocument for a document already in memory; name is
// the file name errors report.
func ParseDocument(name string, data []byte) (*results.Document, error) {
	var head struct {
		SchemaVersion *int `json:"schema_version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%s: not a stormsim result document: %v", name, err)
	}
	if head.SchemaVersion == nil {
		return nil, fmt.Errorf("%s: not a stormsim result document: it has no schema_version (stormsim run -o DIR writes one as DIR/%s)", name, "result.json")
	}
	if *head.SchemaVersion != results.SchemaVersion {
		return nil, fmt.Errorf("%s: schema_version %d, this stormsim reads %d", name, *head.SchemaVersion, results.SchemaVersion)
	}
	var doc results.Document
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: not a stormsim result document: %v", name, err)
	}
	// A policy is a document's key: two results (or summaries) of one
	// would make its metrics ambiguous.
	seen := map[string]bool{}
	for _, r := range doc.Results {
		if seen[r.Policy] {
			return nil, fmt.Errorf("%s: not a valid result document: two results for policy %q", name, r.Policy)
		}
		seen[r.Policy] = true
	}
	clear(seen)
	for _, s := range doc.Summary {
		if seen[s.Policy] {
			return nil, fmt.Errorf("%s: not a valid result document: two summaries for policy %q", name, s.Policy)
		}
		seen[s.Policy] = true
	}
	return &doc, nil
}

// DropSeries empties every array of numbers inside doc's results (the
// per-window series), which baselines do not compare, so that a baseline
// file stays small and its diffs readable. The summary's per-run values
// are kept. It works on the JSON, so it needs no list of series fields.
func DropSeries(doc *results.Document) error {
	data, err := json.Marshal(doc.Results)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return err
	}
	if data, err = json.Marshal(dropNumberArrays(tree)); err != nil {
		return err
	}
	doc.Results = nil
	return json.Unmarshal(data, &doc.Results)
}

func dropNumberArrays(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = dropNumberArrays(e)
		}
	case []any:
		numbers := true
		for i, e := range x {
			_, isNumber := e.(json.Number)
			numbers = numbers && isNumber
			x[i] = dropNumberArrays(e)
		}
		if numbers {
			return []any{}
		}
	}
	return v
}
