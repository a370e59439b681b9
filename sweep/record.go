package sweep

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"stormsim/internal/finitejson"
	"stormsim/internal/orderedjson"
	"stormsim/results"
)

// Output files of a sweep directory.
const (
	ManifestFile = "sweep.json"   // what was swept: axes, metrics, hash
	PointsFile   = "sweep.ndjson" // one Record per line, in grid order
	CSVFile      = "sweep.csv"    // one row per point and policy
)

// SchemaVersion is the version of the layout of sweep.json and
// sweep.ndjson; it changes when a field is renamed, removed or changes
// meaning. Version 2: a line holds each run's values, not their
// statistics, which are computed when the CSV and charts are written.
const SchemaVersion = 2

// Record is one line of sweep.ndjson: a grid point and, per policy, the
// value of every metric in every replication. No series are kept and
// metric names are written once per line, so lines stay small; the
// statistics over replications (Summaries) are computed from the values.
type Record struct {
	Sweep        string       `json:"sweep"` // the sweep's LineID
	Index        int          `json:"index"`
	Values       AxisValues   `json:"values"` // axis path -> value label
	ConfigHash   string       `json:"config_hash"`
	Seed         uint64       `json:"seed"`
	Replications int          `json:"replications"`
	Metrics      []string     `json:"metrics"` // the names of each run's values
	Results      []PolicyRuns `json:"results"`
}

// PolicyRuns is one policy's runs at a point.
type PolicyRuns struct {
	Policy string `json:"policy"`
	// Metrics, when present, replaces the record's names for this policy.
	Metrics []string    `json:"metrics,omitempty"`
	Runs    [][]float64 `json:"runs"` // [replication][metric]
}

// LineID is how each line of sweep.ndjson names its sweep: the hash cut
// to 16 hex digits (64 bits), enough to tell sweeps apart in one
// directory at a fraction of the bytes.
func LineID(hash string) string { return hash[:min(len(hash), len("sha256:")+16)] }

// ID lists the point's axis values, "lease.duration=500ms
// lease.sweep_every=100ms".
func (r *Record) ID() string {
	parts := make([]string, len(r.Values))
	for i, v := range r.Values {
		parts[i] = v.Path + "=" + v.Label
	}
	return strings.Join(parts, " ")
}

// Summaries are each policy's metric statistics over the replications.
func (r *Record) Summaries() []results.Summary {
	out := make([]results.Summary, len(r.Results))
	for k, pr := range r.Results {
		names := r.Metrics
		if pr.Metrics != nil {
			names = pr.Metrics
		}
		sum := results.Summary{Policy: pr.Policy, Metrics: results.MetricStats{}}
		column := make([]float64, len(pr.Runs))
		for i, name := range names {
			for rep, run := range pr.Runs {
				column[rep] = run[i]
			}
			sum.Metrics = append(sum.Metrics, results.Summarize(name, column))
		}
		out[k] = sum
	}
	return out
}

// check reports a line whose runs do not match its names.
func (r *Record) check() error {
	if r.Replications < 1 {
		return fmt.Errorf("replications %d", r.Replications)
	}
	for _, pr := range r.Results {
		names := r.Metrics
		if pr.Metrics != nil {
			names = pr.Metrics
		}
		if len(pr.Runs) != r.Replications {
			return fmt.Errorf("policy %s: %d runs, replications %d", pr.Policy, len(pr.Runs), r.Replications)
		}
		for _, run := range pr.Runs {
			if len(run) != len(names) {
				return fmt.Errorf("policy %s: a run of %d values for %d metrics", pr.Policy, len(run), len(names))
			}
		}
	}
	return nil
}

// AxisValues are a point's axis values, written as a JSON object in axis
// order.
type AxisValues []AxisValue

// AxisValue is one axis's value at a point.
type AxisValue struct{ Path, Label string }

// MarshalJSON writes the values as an object in axis order.
func (av AxisValues) MarshalJSON() ([]byte, error) {
	return orderedjson.Marshal(av, "axis",
		func(v AxisValue) string { return v.Path },
		func(v AxisValue) any { return v.Label })
}

// UnmarshalJSON reads what MarshalJSON writes, keeping the order.
func (av *AxisValues) UnmarshalJSON(data []byte) error {
	*av = AxisValues{}
	return orderedjson.Unmarshal(data, "values", func(path string, dec *json.Decoder) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		label, ok := tok.(string)
		if !ok {
			return errors.New("want a string")
		}
		*av = append(*av, AxisValue{path, label})
		return nil
	})
}

// Line encodes r as one line of sweep.ndjson, newline included.
func (r *Record) Line() ([]byte, error) {
	data, err := finitejson.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("point %d: %w", r.Index, err)
	}
	return append(data, '\n'), nil
}

// Line is one line of sweep.ndjson, kept as written so that copying it
// (resume, merge) cannot change a byte.
type Line struct {
	Index int
	Sweep string
	Raw   []byte // with its newline
}

// lineReader reads a sweep.ndjson file a line at a time.
type lineReader struct {
	path     string
	source   io.Reader
	rd       *bufio.Reader
	n        int   // lines read
	complete int64 // bytes of whole lines read
}

func newLineReader(path string, r io.Reader) *lineReader {
	return &lineReader{path: path, source: r, rd: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next whole line; io.EOF at the end. A last line without
// its newline (a killed run's) is cut short and reads as the end.
func (lr *lineReader) next() (Line, error) {
	raw, err := lr.rd.ReadBytes('\n')
	if err == io.EOF {
		return Line{}, io.EOF
	}
	if err != nil {
		return Line{}, err
	}
	lr.n++
	var head struct {
		Sweep string `json:"sweep"`
		Index *int   `json:"index"`
	}
	if err := json.Unmarshal(raw, &head); err != nil || head.Index == nil || head.Sweep == "" {
		return Line{}, fmt.Errorf("%s:%d: not a sweep point record", lr.path, lr.n)
	}
	lr.complete += int64(len(raw))
	return Line{Index: *head.Index, Sweep: head.Sweep, Raw: raw}, nil
}

// EachLine calls f for each whole line of the sweep.ndjson at path, in
// order, and returns how many bytes hold whole lines.
func EachLine(path string, f func(k int, l Line) error) (complete int64, err error) {
	file, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer file.Close()
	lr := newLineReader(path, file)
	for {
		l, err := lr.next()
		if err == io.EOF {
			return lr.complete, nil
		}
		if err != nil {
			return 0, err
		}
		if err := f(lr.n, l); err != nil {
			return 0, err
		}
	}
}

// Decode reads a line's record, checked: line k of the file at path, for errors.
func (l Line) Decode(path string, k int) (Record, error) {
	var r Record
	if err := json.Unmarshal(l.Raw, &r); err != nil {
		return r, fmt.Errorf("%s:%d: %v", path, k, err)
	}
	if err := r.check(); err != nil {
		return r, fmt.Errorf("%s:%d: %v", path, k, err)
	}
	return r, nil
}

// Manifest is sweep.json: what a sweep varies and charts, enough to draw
// its charts and merge its shards without the sweep file.
type Manifest struct {
	SchemaVersion int            `json:"schema_version"`
	Tool          string         `json:"tool"`
	Sweep         string         `json:"sweep"` // Plan.Hash
	Name          string         `json:"name"`
	Seed          uint64         `json:"seed"`
	Replications  int            `json:"replications"`
	Points        int            `json:"points"`
	Policies      []string       `json:"policies"`
	Axes          []ManifestAxis `json:"axes"`
	Metrics       []string       `json:"metrics"`
	// Checks are the base scenario's checks as written: every point is
	// held to them.
	Checks []string `json:"checks,omitempty"`
	// Base is the base scenario, resolved and echoed: what every point
	// starts from (each sets the axes' keys).
	Base json.RawMessage `json:"base,omitempty"`
}

// ManifestAxis is an axis as the charts need it.
type ManifestAxis struct {
	Path   string    `json:"path"`
	Unit   string    `json:"unit"` // "ms" for durations
	Log    bool      `json:"log"`
	Labels []string  `json:"labels"`
	X      []float64 `json:"x"` // chart positions: ms for durations, the numbers, or 0, 1, 2, ... for other values
}

// Manifest describes p.
func (p *Plan) Manifest() Manifest {
	m := Manifest{SchemaVersion: SchemaVersion, Tool: "stormsim " + results.Version, Sweep: p.Hash, Name: p.Name,
		Seed: p.Seed, Replications: p.Replications, Points: p.Size, Policies: p.Labels, Metrics: []string{}}
	for _, ax := range p.Axes {
		ma := ManifestAxis{Path: ax.Path, Unit: ax.Unit, Log: ax.Log}
		for i, v := range ax.Values {
			ma.Labels = append(ma.Labels, v.Label)
			x := v.X
			if !ax.Numeric() {
				x = float64(i)
			}
			ma.X = append(ma.X, x)
		}
		m.Axes = append(m.Axes, ma)
	}
	for _, ref := range p.Metrics {
		m.Metrics = append(m.Metrics, ref.String())
	}
	for _, c := range p.Checks {
		m.Checks = append(m.Checks, c.Text)
	}
	m.Base = p.BaseEcho
	return m
}

// JSON encodes m as written to sweep.json.
func (m Manifest) JSON() ([]byte, error) {
	data, err := finitejson.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

func readManifest(dir string) (Manifest, []byte, error) {
	var m Manifest
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return m, nil, err
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, nil, fmt.Errorf("%s: not a sweep manifest: %v", filepath.Join(dir, ManifestFile), err)
	}
	if m.SchemaVersion != SchemaVersion {
		return m, nil, fmt.Errorf("%s: schema_version %d, this stormsim reads %d (run the sweep again into a fresh -o)", filepath.Join(dir, ManifestFile), m.SchemaVersion, SchemaVersion)
	}
	return m, data, nil
}

// Files lists every file a sweep described by m writes into its
// directory: sweep.json, sweep.ndjson, sweep.csv and its charts.
func (m Manifest) Files() []string {
	files := []string{ManifestFile, PointsFile, CSVFile}
	for _, c := range chartJobs(m) {
		files = append(files, c.files()...)
	}
	return files
}

// ReadManifest reads dir's sweep.json, as a sweep or a merge wrote it.
func ReadManifest(dir string) (Manifest, error) {
	m, _, err := readManifest(dir)
	return m, err
}
