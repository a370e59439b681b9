package solve

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"stormsim/budget"
	"stormsim/check"
	"stormsim/config"
	"stormsim/plots"
	"stormsim/results"
	"stormsim/sim"
	"stormsim/sweep"
)

// Problem is a solve file checked before anything runs: its key's
// domain, its requirements one per policy, the cases it solves (one per
// across value, or one) and the given combinations each answer must
// hold for. Every case and combination is built and validated at both
// ends of the range, so that a config error never waits for a probe.
type Problem struct {
	Name         string
	File         string // the solve file
	Domain       Domain
	Requirements []Requirement
	Across       *sweep.Axis  // nil: one case
	Given        []sweep.Axis // the guesses, each with its values
	Replications int          // runs per policy per probe, seeds Seed to Seed+Replications-1
	Seed         uint64
	Policies     []string // the policies the requirements name, in the scenario's order
	Hash         string   // identifies the solve: "sha256:..."
	BaseHash     string   // the base scenario's config hash, --set and replications applied

	base        *config.Document
	file        *config.SolveFile
	cases       []caseSpec
	combos      []combo           // the given values crossed, the first key slowest; one empty without given
	givenValues [][]sweep.Setting // per given key, its values
	varyWhere   string            // FILE:LINE of vary:
	firstOrder  [][]BoundDoc      // per case, without the simulated ends
	base0       *sim.Scenario
	modelsOn    map[string]bool
	probeShape  budget.SweepShape // the most one probe asks for
	firstWork   budget.Work       // the least computing of the probes every case starts with
}

// caseSpec is one independent solve: the base with an across value set.
type caseSpec struct {
	index    int
	setting  *sweep.Setting // nil without across
	clients  int            // what a storm of the case weighs, for the progress
	position float64        // where charts place it: the across value's X
}

// label names the case: "clients=100000", or "" without across.
func (c caseSpec) label() string {
	if c.setting == nil {
		return ""
	}
	return c.setting.Path + "=" + c.setting.Label
}

// combo is one combination of given values.
type combo struct {
	settings []sweep.Setting
}

func (c combo) label() string { return sweep.SettingsID(c.settings) }

// Options say how a solve file becomes a problem.
type Options struct {
	Replications int      // > 0 replaces the file's and the scenario's
	Sets         []string // --set overrides of the base scenario
	// ForCheck takes check: {replications} when the file has one, the
	// cheaper solve stormsim check runs.
	ForCheck bool
}

// MaxCombinations bounds the given values crossed: every probe runs
// each combination.
const MaxCombinations = 64

// MaxCases bounds the across values: each is a whole solve, and each is
// built and checked before anything runs.
const MaxCases = 1000

// Load reads the solve file at path and checks it (see Problem). Every
// error is a one-line *config.Error naming the file and line.
func Load(path string, opt Options) (*Problem, error) {
	f, err := config.LoadSolve(path)
	if err != nil {
		return nil, err
	}
	return New(f, opt)
}

// New checks a parsed solve file; see Load.
func New(f *config.SolveFile, opt Options) (*Problem, error) {
	p := &Problem{Name: f.Name, File: f.File, file: f, base: f.Base.Clone(), modelsOn: map[string]bool{}, varyWhere: f.Vary.Where}
	for _, set := range opt.Sets {
		if err := p.base.SetArg(set); err != nil {
			return nil, err
		}
	}
	reps := f.Replications
	if opt.ForCheck && f.CheckReplications > 0 {
		reps = f.CheckReplications
	}
	if opt.Replications > 0 {
		reps = opt.Replications
	}
	if reps > 0 {
		if err := p.base.Set("replications", strconv.Itoa(reps)); err != nil {
			return nil, err
		}
	}
	file, err := p.base.ScenarioFile()
	if err != nil {
		return nil, err
	}
	p.base0, p.BaseHash = file.Scenario, file.Hash()
	p.Replications, p.Seed = max(1, p.base0.Replications), p.base0.Seed
	if p.Domain, err = newDomain(f.Vary); err != nil {
		return nil, err
	}
	if err := p.readRequirements(); err != nil {
		return nil, err
	}
	if err := p.readCases(); err != nil {
		return nil, err
	}
	if err := p.readGiven(); err != nil {
		return nil, err
	}
	if err := p.checkEveryCase(); err != nil {
		return nil, err
	}
	for _, r := range p.Requirements {
		if err := sweep.NoData(r.Check.Metric, p.modelsOn, "probe of the solve"); err != nil {
			return nil, &config.Error{Where: r.Where, Path: "require", Problem: err.Error()}
		}
	}
	if p.firstOrder, err = p.firstOrderBounds(); err != nil {
		return nil, err
	}
	p.hash()
	return p, nil
}

// readRequirements parses require:, one requirement per policy, and
// selects the policies they name.
func (p *Problem) readRequirements() error {
	s := p.base0
	var labels []string
	for _, spec := range s.Policies {
		labels = append(labels, spec.Label)
	}
	cat := results.Catalog{Labels: labels, Replications: p.Replications}
	named := map[string]bool{}
	for _, req := range p.file.Require {
		fail := func(problem string) error {
			return &config.Error{Where: req.Where, Path: "require", Problem: problem}
		}
		c, err := check.Parse(req.Value)
		if err != nil {
			return fail(err.Error())
		}
		if _, ok := c.Margin(c.Bound); !ok {
			return fail(fmt.Sprintf("%s: a requirement needs a side to fail on: use <, <=, > or >= (got %s)", c.Text, c.Op))
		}
		if err := cat.Check(c.Metric); err != nil {
			return fail(err.Error())
		}
		for _, label := range labels {
			if c.Metric.Policy == "" || c.Metric.Policy == label {
				p.Requirements = append(p.Requirements, Requirement{Check: c.ForPolicy(label), Where: req.Where})
				named[label] = true
			}
		}
	}
	for _, label := range labels {
		if named[label] {
			p.Policies = append(p.Policies, label)
		}
	}
	return nil
}

// readCases expands across:, whose key must differ from the varied one.
func (p *Problem) readCases() error {
	a := p.file.Across
	if a == nil {
		p.cases = []caseSpec{{clients: p.base0.Clients}}
		return nil
	}
	if a.Path == p.Domain.Key {
		return &config.Error{Where: a.Where, Path: "across.key", Problem: "is the key vary: solves for; across needs another key"}
	}
	ax, err := sweep.ExpandAxis(*a)
	if err != nil {
		return err
	}
	if len(ax.Values) > MaxCases {
		return &config.Error{Where: a.Where, Path: "across", Problem: fmt.Sprintf("%d values: at most %d, each a whole solve", len(ax.Values), MaxCases)}
	}
	p.Across = &ax
	for i, v := range ax.Values {
		pv, err := config.ParseValue(v.YAML)
		if err != nil {
			return &config.Error{Where: a.Where, Path: "across", Problem: "invalid YAML value " + v.YAML + ": " + err.Error()}
		}
		x := v.X
		if !ax.Numeric() {
			x = float64(i)
		}
		p.cases = append(p.cases, caseSpec{index: i, setting: &sweep.Setting{Path: a.Path, Label: v.Label, Value: pv, Where: a.Where}, position: x})
	}
	return nil
}

// readGiven expands given: and crosses its values, first key slowest.
func (p *Problem) readGiven() error {
	p.combos = []combo{{}}
	for _, g := range p.file.Given {
		switch {
		case g.Path == p.Domain.Key:
			return &config.Error{Where: g.Where, Path: "given." + g.Path, Problem: "is the key vary: solves for; a guess is another key"}
		case p.Across != nil && g.Path == p.Across.Path:
			return &config.Error{Where: g.Where, Path: "given." + g.Path, Problem: "is the across key; a guess is another key"}
		}
		ax, err := sweep.ExpandAxis(g)
		if err != nil {
			return err
		}
		p.Given = append(p.Given, ax)
		var values []sweep.Setting
		for _, v := range ax.Values {
			pv, err := config.ParseValue(v.YAML)
			if err != nil {
				return &config.Error{Where: g.Where, Path: "given." + g.Path, Problem: "invalid YAML value " + v.YAML + ": " + err.Error()}
			}
			values = append(values, sweep.Setting{Path: g.Path, Label: v.Label, Value: pv, Where: g.Where})
		}
		p.givenValues = append(p.givenValues, values)
		var next []combo
		for _, c := range p.combos {
			for _, v := range values {
				next = append(next, combo{settings: append(slices.Clone(c.settings), v)})
			}
		}
		if len(next) > MaxCombinations {
			return &config.Error{Where: g.Where, Path: "given", Problem: fmt.Sprintf("the given values cross into more than %d combinations, each run at every probe", MaxCombinations)}
		}
		p.combos = next
	}
	return nil
}

// checkEveryCase builds every case and combination, and every given
// value alone, at both ends of the range (and at start), so that a bad
// value is found before anything runs; it gathers what one probe asks of
// the machine at most, and what the first probes of each case ask.
func (p *Problem) checkEveryCase() error {
	first := []float64{p.Domain.Min, p.Domain.Max}
	if p.Domain.HasStart {
		first = []float64{p.Domain.Start}
	}
	for ci := range p.cases {
		c := &p.cases[ci]
		for i, cb := range append(slices.Clone(p.combos), p.aloneCombos()...) {
			for _, x := range []float64{p.Domain.Min, p.Domain.Max, p.Domain.Start} {
				if x == p.Domain.Start && !p.Domain.HasStart {
					continue
				}
				pr, err := p.build(*c, cb, x)
				if err != nil {
					return err
				}
				s := pr.scenario
				c.clients = max(c.clients, s.Clients)
				for _, key := range results.ModelsOn(s) {
					p.modelsOn[key] = true
				}
				var one budget.SweepShape
				sweep.AddShape(&one, s, pr.id)
				p.probeShape = maxShape(p.probeShape, one)
				if i < len(p.combos) && slices.Contains(first, x) {
					p.firstWork = p.firstWork.Add(one.Work)
				}
			}
		}
	}
	return nil
}

// maxShape is the larger of two probes' demands, field by field.
func maxShape(a, b budget.SweepShape) budget.SweepShape {
	return budget.SweepShape{Points: 1, Storms: max(a.Storms, b.Storms), ClientStorms: max(a.ClientStorms, b.ClientStorms),
		Work:          budget.Work{Solo: max(a.Work.Solo, b.Work.Solo), Core: max(a.Work.Core, b.Work.Core), Longest: max(a.Work.Longest, b.Work.Longest)},
		MaxClients:    max(a.MaxClients, b.MaxClients),
		MaxStormBytes: max(a.MaxStormBytes, b.MaxStormBytes), PointValues: max(a.PointValues, b.PointValues), OutputBytes: max(a.OutputBytes, b.OutputBytes)}
}

// aloneCombos are the combinations of the sensitivity table: each given
// value alone, the other keys as the base has them.
func (p *Problem) aloneCombos() []combo {
	var out []combo
	for _, values := range p.givenValues {
		for _, v := range values {
			out = append(out, combo{settings: []sweep.Setting{v}})
		}
	}
	return out
}

// probeSpec is one probe resolved: its settings, scenario and config.
type probeSpec struct {
	id         string
	settings   []sweep.Setting
	scenario   *sim.Scenario // with the requirements' policies only
	configHash string
}

// settings are what the probe of case c, combination cb, at value x
// sets: the across value, the given values, the key's value.
func (p *Problem) settings(c caseSpec, cb combo, x float64) probeSpec {
	var settings []sweep.Setting
	if c.setting != nil {
		settings = append(settings, *c.setting)
	}
	settings = append(settings, cb.settings...)
	label := p.Domain.Label(x)
	settings = append(settings, sweep.Setting{Path: p.Domain.Key, Label: label, Where: p.varyWhere})
	return probeSpec{id: sweep.SettingsID(settings), settings: settings}
}

// build resolves the probe of case c, combination cb, at value x.
func (p *Problem) build(c caseSpec, cb combo, x float64) (probeSpec, error) {
	pr := p.settings(c, cb, x)
	last := &pr.settings[len(pr.settings)-1]
	v, err := config.ParseValue(last.Label)
	if err != nil {
		return pr, err
	}
	last.Value = v
	file, err := sweep.Configure(p.base, pr.settings, "solve probe")
	if err != nil {
		return pr, err
	}
	s := *file.Scenario
	s.Policies = nil
	for _, spec := range file.Scenario.Policies {
		if slices.Contains(p.Policies, spec.Label) {
			s.Policies = append(s.Policies, spec)
		}
	}
	pr.scenario, pr.configHash = &s, file.Hash()
	return pr, nil
}

// hash identifies the solve by everything that decides its probes and
// verdicts, so that shards of one solve share it and a resume into
// another's directory is refused.
func (p *Problem) hash() {
	h := sha256.New()
	d := p.Domain
	fmt.Fprintf(h, "stormsim solve\n%s\nbase %s\nvary %s %s %s %s %s %s start %v %s scan %d\n", results.Version, p.BaseHash,
		d.Key, d.Kind, formatNumber(d.Min), formatNumber(d.Max), d.Goal, d.ResolutionText, d.HasStart, formatNumber(d.Start), d.Scan)
	for _, r := range p.Requirements {
		fmt.Fprintf(h, "require %s\n", r)
	}
	fmt.Fprintf(h, "policies %s\n", strings.Join(p.Policies, ","))
	for _, c := range p.cases {
		fmt.Fprintf(h, "case %s\n", c.label())
	}
	for _, c := range p.combos {
		fmt.Fprintf(h, "combo %s\n", c.label())
	}
	p.Hash = "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Cases is how many independent solves the problem has: one per across
// value, or one.
func (p *Problem) Cases() int { return len(p.cases) }

// Combinations is how many combinations of given values each probe runs.
func (p *Problem) Combinations() int { return len(p.combos) }

// Where locates a key to change, for errors about the whole solve:
// replications where the solve file sets them, vary's keys at vary:,
// any other key in the base scenario.
func (p *Problem) Where(key string) string {
	switch {
	case key == "replications" && p.file.ReplicationsWhere != "":
		return p.file.ReplicationsWhere
	case strings.HasPrefix(key, "vary"):
		return p.file.Vary.Where
	}
	return p.file.Base.Where(key)
}

// maxEvaluations bounds the values one search evaluates: its bracket
// (min and max, or the walk from start), both ends' bisections, the
// search for the closest value, and a grid scan with its refinement,
// each bisection with one more for rounding.
func (p *Problem) maxEvaluations() int {
	b := p.Domain.Bisections() + 1
	bracket := 2
	if p.Domain.HasStart {
		bracket += 2 + int(math.Ceil(math.Log2(max(p.Domain.Max/p.Domain.Start, p.Domain.Start/max(p.Domain.Min, 1e-300), 2))))
	}
	return bracket + 2*b + b + p.Domain.Scan + 1 + b
}

// MaxProbes bounds the probes the whole solve runs: per case, the
// answer's search over every combination of given values, the searches
// of each given value alone, and, for an infeasible answer, one search
// per requirement, which starts from the answer's probes.
func (p *Problem) MaxProbes() int {
	e, c := p.maxEvaluations(), len(p.combos)
	perCase := e * c
	if len(p.Given) > 0 {
		perCase += e * (1 + len(p.aloneCombos()))
	}
	perCase += len(p.Requirements) * (p.Domain.Bisections() + 2) * c
	return perCase * len(p.cases)
}

// Shape is what the solve asks of the machine at most, for
// budget.Sweep: MaxProbes probes each asking what the largest one does,
// every probe's runs kept until the end; its least computing time is
// that of the probes every case starts with.
func (p *Problem) Shape() budget.SweepShape {
	one, n := p.probeShape, int64(p.MaxProbes())
	return budget.SweepShape{Points: int(n), Storms: n * one.Storms, ClientStorms: float64(n) * one.ClientStorms,
		Work: p.firstWork, MaxClients: one.MaxClients, MaxStormBytes: one.MaxStormBytes,
		PointValues: one.PointValues, KeptValues: n * one.PointValues,
		OutputBytes: n * (one.OutputBytes + int64(len(p.Requirements))*budget.NameBytes*12),
		ChartFiles:  len(plots.FileNames(RequirementsChart, FrontierChart))}
}
