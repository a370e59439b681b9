package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"stormsim/budget"
	"stormsim/check"
	"stormsim/config"
	"stormsim/internal/human"
	"stormsim/policies"
	"stormsim/results"
	"stormsim/sim"
)

// Plan is a sweep whose every grid point has been resolved and validated.
// Points are not kept: Point rebuilds any of them, so that a grid of a
// million points takes no more memory than one. Nothing in a plan depends
// on where or how it runs (workers, shard), so that shards of one sweep
// share its Hash.
type Plan struct {
	Name         string
	Axes         []Axis
	Metrics      []results.MetricRef // charted, in file order
	Replications int                 // runs per policy per point (the fewest, if an axis sets them)
	Seed         uint64              // the first point's seed; run r of a point uses its seed+r
	Labels       []string            // policy labels over all points, in order of appearance
	Size         int                 // grid points
	Hash         string              // identifies the sweep: "sha256:..."
	// Checks are the base scenario's checks: every point is held to them
	// (check's language), and the charts of their metrics mark the points
	// that fail one.
	Checks []check.Check
	// BaseEcho is the base scenario resolved and echoed (config.Echo), what
	// every point starts from.
	BaseEcho json.RawMessage

	base    *config.Document
	file    *config.SweepFile
	metrics []config.Located // as written, for errors found while checking
	checked bool
	values  [][]*config.Value // per axis, its values parsed
	cost    []float32         // per point: storms x clients, what the progress weighs
	storms  []uint32          // per point: policies x replications
	shape   budget.SweepShape
}

// Point is one grid point.
type Point struct {
	Index      int
	ID         string // the point's axis values, e.g. "lease.duration=500ms lease.sweep_every=100ms"
	Coords     []int  // value index along each axis
	Scenario   *sim.Scenario
	ConfigHash string // the hash of the point's config file (config.ScenarioFile.Hash)
}

// MaxPoints bounds a grid, so that a typo in a range cannot ask for a
// sweep that never ends.
const MaxPoints = 1_000_000

// Load reads the sweep file at path and checks every grid point (Open,
// then Check). replications > 0 overrides the file's and the scenario's
// replications. Every error is a one-line *config.Error naming the file
// and line.
func Load(path string, replications int) (*Plan, error) {
	p, err := Open(path, replications)
	if err != nil {
		return nil, err
	}
	return p, p.Check(nil)
}

// New resolves a parsed sweep file; see Load.
func New(f *config.SweepFile, replications int) (*Plan, error) {
	p, err := open(f, replications)
	if err != nil {
		return nil, err
	}
	return p, p.Check(nil)
}

// Open reads the sweep file at path, expands its axes and validates its
// base scenario, without building the grid's points: Size is known at
// once, so that a large grid can be announced before Check walks it.
func Open(path string, replications int) (*Plan, error) {
	f, err := config.LoadSweep(path)
	if err != nil {
		return nil, err
	}
	return open(f, replications)
}

func open(f *config.SweepFile, replications int) (*Plan, error) {
	p := &Plan{Name: f.Name, Size: 1, metrics: f.Metrics, file: f}
	for _, fa := range f.Axes {
		ax, err := ExpandAxis(fa)
		if err != nil {
			return nil, err
		}
		p.Axes = append(p.Axes, ax)
		var parsed []*config.Value
		for _, v := range ax.Values {
			pv, err := config.ParseValue(v.YAML)
			if err != nil {
				return nil, &config.Error{Where: fa.Where, Path: "axes." + fa.Path, Problem: "invalid YAML value " + v.YAML + ": " + err.Error()}
			}
			parsed = append(parsed, pv)
		}
		p.values = append(p.values, parsed)
		p.Size *= len(ax.Values)
		if p.Size > MaxPoints {
			return nil, &config.Error{Where: fa.Where, Path: "axes", Problem: fmt.Sprintf("the grid has more than %s points (%s)", human.Count(MaxPoints), p.Dimensions())}
		}
	}
	if replications == 0 {
		replications = f.Replications
	}
	p.base = f.Base
	if replications > 0 {
		p.base = p.base.Clone()
		if err := p.base.Set("replications", strconv.Itoa(replications)); err != nil {
			return nil, err
		}
	}
	base, err := p.base.ScenarioFile()
	if err != nil {
		return nil, err // the base alone is wrong: say so without a point
	}
	p.BaseEcho = base.Echo()
	for i, text := range base.Checks {
		c, err := check.Parse(text)
		if err != nil {
			key := fmt.Sprintf("checks[%d]", i)
			return nil, &config.Error{Where: p.base.Where(key), Path: key, Problem: err.Error()}
		}
		p.Checks = append(p.Checks, c)
	}
	for _, m := range f.Metrics {
		ref, err := results.ParseMetricRef(m.Value)
		if err != nil {
			return nil, &config.Error{Where: m.Where, Path: "metrics", Problem: err.Error()}
		}
		p.Metrics = append(p.Metrics, ref)
	}
	return p, nil
}

// Override applies --set overrides (path=value) to the base scenario of
// every point, before Check: a key an axis sets (or a section holding it)
// is refused, since the axis would replace it at every point.
func (p *Plan) Override(sets []string) error {
	if len(sets) == 0 {
		return nil
	}
	if p.checked {
		return errors.New("sweep: Override after Check")
	}
	p.base = p.base.Clone()
	for _, set := range sets {
		path, _, _ := strings.Cut(set, "=")
		for _, ax := range p.Axes {
			if path == ax.Path || strings.HasPrefix(path, ax.Path+".") || strings.HasPrefix(path, ax.Path+"[") {
				return &config.Error{Where: "--set " + set, Path: path, Problem: "an axis of the sweep sets " + ax.Path + " at every point: change the axis, or leave out --set"}
			}
		}
		if err := p.base.SetArg(set); err != nil {
			return err
		}
	}
	_, err := p.base.Scenario()
	return err
}

// Dimensions describes the grid by its axes: "admission.rate 6 x
// admission.burst 4".
func (p *Plan) Dimensions() string {
	parts := make([]string, len(p.Axes))
	for i, ax := range p.Axes {
		parts[i] = fmt.Sprintf("%s %d", ax.Path, len(ax.Values))
	}
	return strings.Join(parts, " x ")
}

// Check builds and validates every grid point in grid order, computing the
// sweep's Hash, policy labels and replications, what the points ask of the
// machine (Shape) and whether every charted metric can have data. It keeps
// nothing per point but its cost. progress, when set, is called now and
// then with the points checked so far; when it returns false the check
// stops with an *InterruptedError.
func (p *Plan) Check(progress func(done int) bool) error {
	if p.checked {
		return nil
	}
	h := sha256.New()
	fmt.Fprintf(h, "stormsim sweep\n%s\n", results.Version)
	p.cost = make([]float32, p.Size)
	p.storms = make([]uint32, p.Size)
	modelsOn := map[string]bool{}
	var sh budget.SweepShape
	for i := range p.Size {
		// Every 64 points: on a loaded machine under the race detector
		// 1,024 of them outlast a Ctrl-C's 750 ms grace.
		if progress != nil && i%64 == 0 && !progress(i) {
			return &InterruptedError{Done: i, Points: p.Size, Checking: true}
		}
		pt, err := p.Point(i)
		if err != nil {
			return err
		}
		s := pt.Scenario
		if i == 0 || s.Replications < p.Replications {
			p.Replications = s.Replications
		}
		if i == 0 {
			p.Seed = s.Seed
		}
		for _, pol := range s.Policies {
			if !slices.Contains(p.Labels, pol.Label) {
				p.Labels = append(p.Labels, pol.Label)
			}
		}
		for _, key := range results.ModelsOn(s) {
			modelsOn[key] = true
		}
		fmt.Fprintf(h, "%d %s %s\n", i, pt.ID, pt.ConfigHash)
		storms := int64(len(s.Policies) * s.Replications)
		p.cost[i] = float32(float64(storms) * float64(s.Clients))
		p.storms[i] = uint32(min(storms, 1<<32-1))
		AddShape(&sh, s, pt.ID)
	}
	if progress != nil {
		progress(p.Size)
	}
	p.Hash = "sha256:" + hex.EncodeToString(h.Sum(nil))
	if err := p.checkMetrics(modelsOn); err != nil {
		return err
	}
	sh.ChartFiles = p.chartCount()
	sh.ChartValues = int64(p.Size) * int64(len(p.Metrics)*max(1, len(p.Labels))) * 3
	p.shape = sh
	p.checked = true
	return nil
}

// checkMetrics refuses a charted metric that names no field or policy of
// the sweep's points, a statistic without replications, or a field whose
// model is off at every point (modelsOn lists those on somewhere).
func (p *Plan) checkMetrics(modelsOn map[string]bool) error {
	cat := results.Catalog{Labels: p.Labels, Replications: p.Replications}
	for i, ref := range p.Metrics {
		err := cat.Check(ref)
		if err == nil {
			err = NoData(ref, modelsOn, "point of the sweep")
		}
		if err != nil {
			return &config.Error{Where: p.metrics[i].Where, Path: "metrics", Problem: err.Error()}
		}
	}
	for i, c := range p.Checks {
		if err := cat.Check(c.Metric); err != nil {
			key := fmt.Sprintf("checks[%d]", i)
			return &config.Error{Where: p.base.Where(key), Path: key, Problem: err.Error()}
		}
		if !slices.ContainsFunc(p.Metrics, func(m results.MetricRef) bool { return m.Field == c.Metric.Field }) {
			key := fmt.Sprintf("checks[%d]", i)
			return &config.Error{Where: p.base.Where(key), Path: key, Problem: fmt.Sprintf(
				"%s: a sweep keeps only its metrics, so it can hold its points to a check on one of them only: add %s to metrics:", c.Metric.Field, c.Metric.Field)}
		}
	}
	return nil
}

// NoData refuses a metric that no point can have: its model is off
// everywhere (modelsOn lists the scenario keys of the models on at some
// point), so its chart would be empty. what names the points: "point of
// the sweep", "probe of the solve".
func NoData(ref results.MetricRef, modelsOn map[string]bool, what string) error {
	keys := results.ModelKeys(ref.Field)
	if keys == nil {
		return nil
	}
	for _, k := range keys {
		if modelsOn[k] {
			return nil
		}
	}
	return fmt.Errorf("%s: no %s has data for it: it comes from the %s: model, which is off", ref, what, strings.Join(keys, ": or "))
}

// AddShape adds to sh the demands of a point (id names it) that runs s:
// each of its policies once per replication.
func AddShape(sh *budget.SweepShape, s *sim.Scenario, id string) {
	storms := int64(len(s.Policies) * s.Replications)
	sh.Points++
	sh.Storms += storms
	sh.ClientStorms += float64(storms) * float64(s.Clients)
	for _, spec := range s.Policies {
		if b, err := policies.New(spec); err == nil {
			sh.Work = sh.Work.Add(budget.StormWork(s, b).Times(float64(s.Replications)))
		}
	}
	sh.MaxClients = max(sh.MaxClients, s.Clients)
	sh.MaxStormBytes = max(sh.MaxStormBytes, budget.StormBytes(s))
	metrics := int64(budget.MetricsPerResult(s))
	sh.PointValues = max(sh.PointValues, storms*metrics)
	// A line: its header and values, each metric's name once, each run's
	// values; a CSV row per policy with every statistic of every metric.
	columns := int64(1)
	if s.Replications > 1 {
		columns = int64(len(results.Stats))
	}
	line := int64(160+len(id)*2) + metrics*budget.NameBytes + storms*metrics*budget.TextValueBytes
	row := int64(len(id)*2+64) + metrics*columns*budget.TextValueBytes
	sh.OutputBytes += line + int64(len(s.Policies))*row
}

// Point builds grid point i: the base with each axis set to its value,
// resolved. The first axis varies slowest.
func (p *Plan) Point(i int) (Point, error) {
	pt := Point{Index: i, Coords: make([]int, len(p.Axes))}
	rest := i
	for a := len(p.Axes) - 1; a >= 0; a-- {
		n := len(p.Axes[a].Values)
		pt.Coords[a] = rest % n
		rest /= n
	}
	settings := make([]Setting, len(p.Axes))
	for a, ax := range p.Axes {
		settings[a] = Setting{Path: ax.Path, Label: ax.Values[pt.Coords[a]].Label, Value: p.values[a][pt.Coords[a]], Where: ax.Where}
	}
	pt.ID = SettingsID(settings)
	file, err := Configure(p.base, settings, "sweep point")
	if err != nil {
		return pt, err
	}
	pt.Scenario = file.Scenario
	pt.ConfigHash = file.Hash()
	return pt, nil
}

// Setting is one config key set at a point: an axis's value at a sweep
// point, or a key a solve sets at a probe.
type Setting struct {
	Path  string        // config key path, e.g. "admission.rate"
	Label string        // the value as ids, charts and the CSV name it
	Value *config.Value // parsed once
	Where string        // FILE:LINE of what set it, where an error in the value belongs
}

// SettingsID names a point by its settings: "lease.duration=500ms
// lease.sweep_every=100ms".
func SettingsID(settings []Setting) string {
	ids := make([]string, len(settings))
	for i, st := range settings {
		ids[i] = st.Path + "=" + st.Label
	}
	return strings.Join(ids, " ")
}

// Configure is base with every setting applied in order, resolved and
// validated. An error names the point (what it is, e.g. "sweep point",
// and its settings) and, when a setting's value is wrong, is placed at
// that setting's Where.
func Configure(base *config.Document, settings []Setting, what string) (*config.ScenarioFile, error) {
	doc := base.Clone()
	for a, st := range settings {
		if err := doc.SetValue(st.Path, st.Value); err != nil {
			return nil, pointError(err, settings, a+1, what)
		}
	}
	file, err := doc.ScenarioFile()
	if err != nil {
		return nil, pointError(err, settings, len(settings), what)
	}
	return file, nil
}

// pointError places an error found at a point: on the setting whose value
// caused it when the value itself is wrong, and with the first applied
// settings named.
func pointError(err error, settings []Setting, applied int, what string) error {
	var ce *config.Error
	if !errors.As(err, &ce) {
		return err
	}
	out := *ce
	for _, st := range settings {
		if strings.HasPrefix(ce.Where, "--set "+st.Path+"=") && st.Where != "" {
			out.Where = st.Where
		}
	}
	out.Problem += " [at " + what + " " + SettingsID(settings[:applied]) + "]"
	return &out
}

// Where locates a key to change, for errors about the whole sweep: an
// axis by its path ("axes" is the first axis), replications where the
// sweep file sets them, any other key in the base scenario.
func (p *Plan) Where(key string) string {
	for _, ax := range p.Axes {
		if ax.Path == key || key == "axes" {
			return ax.Where
		}
	}
	if key == "replications" && p.file.ReplicationsWhere != "" {
		return p.file.ReplicationsWhere
	}
	return p.file.Base.Where(key)
}

// Shape is what the checked points ask of the machine, for budget.Sweep.
func (p *Plan) Shape() budget.SweepShape { return p.shape }

// ShardSize is how many points shard i of n runs: those whose index is i
// modulo n.
func (p *Plan) ShardSize(i, n int) int {
	if i >= p.Size {
		return 0
	}
	return (p.Size-1-i)/n + 1
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
