package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

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
