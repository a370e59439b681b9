package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"stormsim/config"
	"stormsim/results"
	"stormsim/sim"
)

// Plan is a loaded sweep: every grid point resolved and validated, ready
// to run. Nothing in it depends on where or how it runs (workers, shard),
// so that shards of one sweep share its Hash.
type Plan struct {
	Name         string
	Axes         []Axis
	Metrics      []results.MetricRef // charted, in file order
	Replications int                 // runs per policy per point (the fewest, if an axis sets them)
	Seed         uint64              // the first point's seed; run r of a point uses its seed+r
	Labels       []string            // policy labels over all points, in order of appearance
	Points       []Point             // in grid order
	Hash         string              // identifies the sweep: "sha256:..."
}

// Point is one grid point.
type Point struct {
	Index      int
	ID         string // the point's axis values, e.g. "lease.duration=500ms lease.sweep_every=100ms"
	Coords     []int  // value index along each axis
	Scenario   *sim.Scenario
	ConfigHash string // config.Hash of Scenario
}

// MaxPoints bounds a grid, so that a typo in a range cannot ask for a
// sweep that never ends.
const MaxPoints = 1_000_000

// Load reads the sweep file at path and resolves every grid point.
// replications > 0 overrides the file's and the scenario's replications.
// Every error is a one-line *config.Error naming the file and line.
func Load(path string, replications int) (*Plan, error) {
	f, err := config.LoadSweep(path)
	if err != nil {
		return nil, err
	}
	return New(f, replications)
}

// New resolves a parsed sweep file; see Load.
func New(f *config.SweepFile, replications int) (*Plan, error) {
	p := &Plan{Name: f.Name}
	total := 1
	for _, fa := range f.Axes {
		ax, err := expandAxis(fa)
		if err != nil {
			return nil, err
		}
		p.Axes = append(p.Axes, ax)
		total *= len(ax.Values)
		if total > MaxPoints {
			return nil, &config.Error{Where: fa.Where, Path: "axes", Problem: fmt.Sprintf("the grid has more than %d points", MaxPoints)}
		}
	}
	if replications == 0 {
		replications = f.Replications
	}
	base := f.Base
	if replications > 0 {
		base = base.Clone()
		if err := base.Set("replications", strconv.Itoa(replications)); err != nil {
			return nil, err
		}
	}
	if _, err := base.Scenario(); err != nil {
		return nil, err // the base alone is wrong: say so without a point
	}
	h := sha256.New()
	fmt.Fprintf(h, "stormsim sweep\n%s\n", results.Version)
	for i := range total {
		pt, err := p.point(base, i)
		if err != nil {
			return nil, err
		}
		if i == 0 || pt.Scenario.Replications < p.Replications {
			p.Replications = pt.Scenario.Replications
		}
		if i == 0 {
			p.Seed = pt.Scenario.Seed
		}
		for _, pol := range pt.Scenario.Policies {
			if !slices.Contains(p.Labels, pol.Label) {
				p.Labels = append(p.Labels, pol.Label)
			}
		}
		pt.ConfigHash = config.Hash(pt.Scenario)
		fmt.Fprintf(h, "%d %s %s\n", i, pt.ID, pt.ConfigHash)
		p.Points = append(p.Points, pt)
	}
	p.Hash = "sha256:" + hex.EncodeToString(h.Sum(nil))
	cat := results.Catalog{Labels: p.Labels, Replications: p.Replications}
	for _, m := range f.Metrics {
		ref, err := results.ParseMetricRef(m.Value)
		if err == nil {
			err = cat.Check(ref)
		}
		if err != nil {
			return nil, &config.Error{Where: m.Where, Path: "metrics", Problem: err.Error()}
		}
		p.Metrics = append(p.Metrics, ref)
	}
	return p, nil
}

// point builds grid point i: the base with each axis set to its value.
// The first axis varies slowest.
func (p *Plan) point(base *config.Document, i int) (Point, error) {
	pt := Point{Index: i, Coords: make([]int, len(p.Axes))}
	rest := i
	for a := len(p.Axes) - 1; a >= 0; a-- {
		n := len(p.Axes[a].Values)
		pt.Coords[a] = rest % n
		rest /= n
	}
	doc := base.Clone()
	ids := make([]string, len(p.Axes))
	for a, ax := range p.Axes {
		v := ax.Values[pt.Coords[a]]
		ids[a] = ax.Path + "=" + v.Label
		if err := doc.Set(ax.Path, v.YAML); err != nil {
			return pt, p.pointError(err, ids[:a+1])
		}
	}
	pt.ID = strings.Join(ids, " ")
	s, err := doc.Scenario()
	if err != nil {
		return pt, p.pointError(err, ids)
	}
	pt.Scenario = s
	return pt, nil
}

// pointError places an error found at one grid point: on the axis whose
// value caused it when the value itself is wrong, and with the point named.
func (p *Plan) pointError(err error, ids []string) error {
	var ce *config.Error
	if !errors.As(err, &ce) {
		return err
	}
	out := *ce
	for _, ax := range p.Axes {
		if strings.HasPrefix(ce.Where, "--set "+ax.Path+"=") {
			out.Where = ax.Where
		}
	}
	out.Problem += " [at sweep point " + strings.Join(ids, " ") + "]"
	return &out
}

// Shard returns the points shard i of n runs: those whose index is i
// modulo n, in grid order.
func (p *Plan) Shard(i, n int) []Point {
	var out []Point
	for _, pt := range p.Points {
		if pt.Index%n == i {
			out = append(out, pt)
		}
	}
	return out
}

// Caption is the caption of the sweep's charts.
func (p *Plan) Caption() string {
	return fmt.Sprintf("%s, seed %d, %d replication%s per point", p.Name, p.Seed, p.Replications, plural(p.Replications))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
