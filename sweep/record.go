package sweep

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"stormsim/results"
)

// Output files of a sweep directory.
const (
	ManifestFile = "sweep.json"   // what was swept: axes, metrics, hash
	PointsFile   = "sweep.ndjson" // one Record per line, in grid order
	CSVFile      = "sweep.csv"    // one row per point and policy
)

// Record is one line of sweep.ndjson: a grid point and, per policy, each
// metric's statistics over its replications (with each run's value). No
// series are kept, so lines stay small.
type Record struct {
	Sweep        string            `json:"sweep"` // Plan.Hash
	Index        int               `json:"index"`
	ID           string            `json:"id"`
	Values       AxisValues        `json:"values"` // axis path -> value label
	ConfigHash   string            `json:"config_hash"`
	Seed         uint64            `json:"seed"`
	Replications int               `json:"replications"`
	Results      []results.Summary `json:"results"`
}

// AxisValues are a point's axis values, written as a JSON object in axis
// order.
type AxisValues []AxisValue

// AxisValue is one axis's value at a point.
type AxisValue struct{ Path, Label string }

// MarshalJSON writes the values as an object in axis order.
func (av AxisValues) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, v := range av {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(v.Path)
		l, _ := json.Marshal(v.Label)
		b.Write(k)
		b.WriteByte(':')
		b.Write(l)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON writes, keeping the order.
func (av *AxisValues) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return errors.New("values: want an object")
	}
	*av = AxisValues{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return err
		}
		v, err := dec.Token()
		if err != nil {
			return err
		}
		path, _ := k.(string)
		label, ok := v.(string)
		if !ok {
			return fmt.Errorf("values: %s: want a string", path)
		}
		*av = append(*av, AxisValue{path, label})
	}
	_, err := dec.Token()
	return err
}

// line encodes r as one line of sweep.ndjson, newline included.
func (r *Record) line() ([]byte, error) {
	data, err := json.Marshal(r)
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

// readLines reads a sweep.ndjson file. complete is how many bytes hold
// whole lines: a line cut short (a killed run) is dropped, not an error.
func readLines(path string) (lines []Line, complete int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	rd := bufio.NewReader(f)
	for n := 1; ; n++ {
		raw, err := rd.ReadBytes('\n')
		if err == io.EOF {
			return lines, complete, nil // a last line without newline is cut short
		}
		if err != nil {
			return nil, 0, err
		}
		var head struct {
			Sweep string `json:"sweep"`
			Index *int   `json:"index"`
		}
		if err := json.Unmarshal(raw, &head); err != nil || head.Index == nil || head.Sweep == "" {
			return nil, 0, fmt.Errorf("%s:%d: not a sweep point record", path, n)
		}
		lines = append(lines, Line{Index: *head.Index, Sweep: head.Sweep, Raw: raw})
		complete += int64(len(raw))
	}
}

// readRecords decodes every line of a complete sweep.ndjson.
func readRecords(path string) ([]Record, error) {
	lines, _, err := readLines(path)
	if err != nil {
		return nil, err
	}
	out := make([]Record, len(lines))
	for i, l := range lines {
		if err := json.Unmarshal(l.Raw, &out[i]); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, i+1, err)
		}
	}
	return out, nil
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
	m := Manifest{SchemaVersion: results.SchemaVersion, Tool: "stormsim " + results.Version, Sweep: p.Hash, Name: p.Name,
		Seed: p.Seed, Replications: p.Replications, Points: len(p.Points), Policies: p.Labels, Metrics: []string{}}
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
	return m
}

// JSON encodes m as written to sweep.json.
func (m Manifest) JSON() ([]byte, error) {
	data, err := json.MarshalIndent(m, "", "  ")
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
		return m, nil, fmt.Errorf("%s/%s: not a sweep manifest: %v", dir, ManifestFile, err)
	}
	if m.SchemaVersion != results.SchemaVersion {
		return m, nil, fmt.Errorf("%s/%s: schema_version %d, this stormsim reads %d", dir, ManifestFile, m.SchemaVersion, results.SchemaVersion)
	}
	return m, data, nil
}
