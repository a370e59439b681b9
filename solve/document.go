package solve

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"

	"stormsim/internal/atomicfile"
	"stormsim/internal/finitejson"
	"stormsim/results"
	"stormsim/sweep"
)

// SchemaVersion is the version of solve.json's layout; it changes when a
// field is renamed, removed or changes meaning.
const SchemaVersion = 1

// Kind is solve.json's kind, which tells it from stormsim's other
// documents.
const Kind = "stormsim solve"

// Document is solve.json: the problem as solved (key, requirements,
// cases, given values), each case's answer with the searches behind it,
// and every probe. Values of the key are written as the config takes
// them ("420", "1.5s") with their position x (milliseconds for a
// duration); observations and margins are in each requirement's unit; a
// number without a value (no data, an unbounded margin) is null.
type Document struct {
	SchemaVersion  int              `json:"schema_version"`
	Kind           string           `json:"kind"`
	Tool           string           `json:"tool"`
	Solve          string           `json:"solve"` // the problem's hash
	Name           string           `json:"name"`
	BaseConfigHash string           `json:"base_config_hash"`
	Seed           uint64           `json:"seed"`
	Replications   int              `json:"replications"` // runs per policy at every probe
	Seeds          []uint64         `json:"seeds"`        // the same at every probe
	Policies       []string         `json:"policies"`     // the policies run: those the requirements name
	Vary           VaryDoc          `json:"vary"`
	Requirements   []RequirementDoc `json:"requirements"`
	Across         *AxisDoc         `json:"across"`
	Given          []AxisDoc        `json:"given"`
	// FirstOrder are each case's first-order bounds (see CaseDoc.Bounds),
	// which depend on the config alone.
	FirstOrder [][]BoundDoc `json:"first_order"`
	// Status is "answer" when every case has one, "infeasible" when none
	// has, "partial" for a frontier with both.
	Status string     `json:"status"`
	Cases  []CaseDoc  `json:"cases"`
	Probes []ProbeDoc `json:"probes"`
}

// VaryDoc is the varied key and how it was searched.
type VaryDoc struct {
	Key        string    `json:"key"`
	Kind       string    `json:"kind"` // integer, number or duration
	Unit       string    `json:"unit"` // of x: "ms" for a duration, "" otherwise
	Min        ValueDoc  `json:"min"`
	Max        ValueDoc  `json:"max"`
	Start      *ValueDoc `json:"start"`
	Goal       Goal      `json:"goal"`
	Resolution string    `json:"resolution"` // as written: "1%", "10ms", "1"
	Scan       int       `json:"scan"`
	// Bisections bounds the probes of one bisection over [min, max] to
	// the resolution (see Domain.Bisections).
	Bisections int `json:"bisections"`
}

// ValueDoc is one value of a key: as the config takes it, and where a
// chart places it (ms for a duration, the index for a value that is not
// a number).
type ValueDoc struct {
	Value string  `json:"value"`
	X     float64 `json:"x"`
}

// RequirementDoc is one requirement, for one policy.
type RequirementDoc struct {
	Text   string  `json:"text"`   // as written in the solve file
	Metric string  `json:"metric"` // with its policy
	Op     string  `json:"op"`
	Bound  float64 `json:"bound"` // in Unit
	Unit   string  `json:"unit"`  // "ms", "s", or "" for counts, rates and fractions
}

// AxisDoc is the across key or a given key with its values.
type AxisDoc struct {
	Key    string     `json:"key"`
	Unit   string     `json:"unit"`
	Values []ValueDoc `json:"values"`
}

// CaseDoc is one case: the answer at one across value (or the only one).
type CaseDoc struct {
	Across *ValueDoc `json:"across"`
	// Result is the answer's: every requirement, for every combination
	// of given values.
	Result      ResultDoc       `json:"result"`
	Sensitivity *SensitivityDoc `json:"sensitivity"` // with given: each value alone
	Relax       []RelaxDoc      `json:"relax"`       // infeasible: what each requirement would have to allow
	Bounds      []BoundDoc      `json:"first_order_bounds"`
	Searches    []SearchDoc     `json:"searches"`
}

// ResultDoc is one search's outcome.
type ResultDoc struct {
	Status    string       `json:"status"` // "answer" or "infeasible"
	Monotone  bool         `json:"monotone"`
	Answer    *EndDoc      `json:"answer"`   // the goal's end of the feasible values
	Interval  *IntervalDoc `json:"interval"` // the feasible values' outer ends
	Stretches []StretchDoc `json:"stretches"`
	// Violations are the requirements whose verdict changed side twice:
	// a pass on the wrong side of a fail.
	Violations  []ViolationDoc `json:"violations"`
	Closest     *EndDoc        `json:"closest"`      // infeasible: the value whose worst relative margin is least bad
	FailsAtMin  []int          `json:"fails_at_min"` // infeasible: the requirements failing at each end searched
	FailsAtMax  []int          `json:"fails_at_max"`
	Searched    [2]ValueDoc    `json:"searched"`
	Evaluations int            `json:"evaluations"` // values evaluated, each one probe per combination
}

// EndDoc is an answer, or one end of the feasible values: the value, its
// bracket [the failing neighbour, the value] in the key's order, the
// requirements that fail at the neighbour (none: the end of the range
// searched binds) and every requirement's observation at the value.
type EndDoc struct {
	ValueDoc
	Bracket      []ValueDoc   `json:"bracket"`
	Binding      []BindingDoc `json:"binding"`
	Observations []ObsDoc     `json:"observations"`
	Probes       []int        `json:"probes"`
}

// BindingDoc is a requirement that binds an end: it fails at the
// neighbour and holds at the end with Margin to spare.
type BindingDoc struct {
	Requirement int    `json:"requirement"`
	Margin      Number `json:"margin"`      // at the end, in the requirement's unit
	FailedWith  Number `json:"failed_with"` // observed at the neighbour
	Combination string `json:"combination"` // with given: whose observation failed at the neighbour
}

// IntervalDoc is the feasible values from Low to High.
type IntervalDoc struct {
	Low  EndDoc `json:"low"`
	High EndDoc `json:"high"`
}

// StretchDoc is a run of evaluated values that all pass.
type StretchDoc struct {
	Low  ValueDoc `json:"low"`
	High ValueDoc `json:"high"`
}

// ViolationDoc is a requirement that passes at Pass, on the wrong side of
// a fail at Fail.
type ViolationDoc struct {
	Requirement int      `json:"requirement"`
	Pass        ValueDoc `json:"pass"`
	Fail        ValueDoc `json:"fail"`
}

// ObsDoc is one requirement's observation: at a probe, or at a value
// (the worst over the given combinations, and whose).
type ObsDoc struct {
	Observed       Number `json:"observed"`
	Margin         Number `json:"margin"`
	RelativeMargin Number `json:"relative_margin"`
	Pass           bool   `json:"pass"`
	Why            string `json:"why,omitempty"`
	Combination    string `json:"combination,omitempty"`
}

// SearchDoc is one search of a case, its evaluations in the order asked.
type SearchDoc struct {
	Role         string    `json:"role"`  // answer, base, given or relax
	Given        string    `json:"given"` // given: the value alone, "key=value"
	Relax        *int      `json:"relax"` // relax: the requirement left out
	Goal         Goal      `json:"goal"`
	Requirements []int     `json:"requirements"`
	Combinations []string  `json:"combinations"`
	Seeded       int       `json:"seeded"` // evaluations taken from the answer's search
	Steps        []StepDoc `json:"steps"`
	Result       ResultDoc `json:"result"`
}

// StepDoc is one value a search evaluated.
type StepDoc struct {
	ValueDoc
	Pass         bool     `json:"pass"`
	Probes       []int    `json:"probes"`
	Observations []ObsDoc `json:"observations"`
}

// SensitivityDoc is how the answer moves with each given value alone,
// the other keys as the base has them.
type SensitivityDoc struct {
	Base *ValueDoc      `json:"base"` // the answer with no given value set; null if none
	Keys []SensitiveKey `json:"keys"`
}

// SensitiveKey is one given key: the answer at each of its values, and
// how far apart they are.
type SensitiveKey struct {
	Key    string           `json:"key"`
	Values []SensitiveValue `json:"values"`
	Spread Number           `json:"spread"` // largest answer minus smallest, in the key's position unit; null if one has none
}

// SensitiveValue is the answer with one given value alone.
type SensitiveValue struct {
	Given  ValueDoc  `json:"given"`
	Answer *ValueDoc `json:"answer"` // null: infeasible with it
	Change Number    `json:"change"` // from the base answer, in the position unit; null without both
}

// RelaxDoc is what requirement Requirement would have to allow for the
// others to be met: at At, the end of their feasible values where it has
// the most room, it observes Needs.
type RelaxDoc struct {
	Requirement int       `json:"requirement"`
	Feasible    bool      `json:"feasible"` // the others can be met at all
	At          *ValueDoc `json:"at"`
	Needs       Number    `json:"needs"`  // the bound that would pass at At, in the requirement's unit
	Change      Number    `json:"change"` // Needs against the bound, a fraction
	Why         string    `json:"why,omitempty"`
	Search      int       `json:"search"` // its search among the case's
}

// BoundDoc is a first-order bound a planner works out by hand from the
// config: the key's value at which requirement Requirement would bind by
// Formula, and how far the simulated end is from it.
type BoundDoc struct {
	Requirement int       `json:"requirement"`
	Formula     string    `json:"formula"`
	Bound       ValueDoc  `json:"bound"`
	Side        string    `json:"side"`      // ">=" or "<=": where the formula says the key must lie
	Simulated   *ValueDoc `json:"simulated"` // the simulated end this requirement binds, null if none
	Distance    Number    `json:"distance"`  // simulated against the bound, a fraction; null without one
}

// ProbeDoc is one probe: a configuration run with every seed.
type ProbeDoc struct {
	ID           int              `json:"id"`
	Settings     sweep.AxisValues `json:"settings"`
	ConfigHash   string           `json:"config_hash"`
	Seed         uint64           `json:"seed"`
	Replications int              `json:"replications"`
	Pass         bool             `json:"pass"` // every requirement holds
	Observations []ObsDoc         `json:"observations"`
}

// JSON encodes d as written to solve.json: as finitejson writes it,
// with <, > and & as themselves, since every requirement has one.
func (d *Document) JSON() ([]byte, error) {
	data, err := finitejson.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(unescapeHTML(data), '\n'), nil
}

// unescapeHTML turns encoding/json's \u003c, \u003e and \u0026 back into
// the characters: an escape is one only after an even run of backslashes
// (an escaped backslash is two).
func unescapeHTML(data []byte) []byte {
	out := make([]byte, 0, len(data))
	for i := 0; i < len(data); i++ {
		if data[i] != '\\' {
			out = append(out, data[i])
			continue
		}
		if i+5 < len(data) && data[i+1] == 'u' && data[i+2] == '0' && data[i+3] == '0' {
			switch string(data[i+4 : i+6]) {
			case "3c":
				out, i = append(out, '<'), i+5
				continue
			case "3e":
				out, i = append(out, '>'), i+5
				continue
			case "26":
				out, i = append(out, '&'), i+5
				continue
			}
		}
		out = append(out, data[i], data[i+1]) // any other escape, kept whole
		i++
	}
	return out
}

// Write writes d to path atomically.
func (d *Document) Write(path string) error {
	data, err := d.JSON()
	if err != nil {
		return err
	}
	return atomicfile.Write(path, data)
}

// ReadDocument reads a solve.json; every error names path.
func ReadDocument(path string) (*Document, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read: %v", path, err)
	}
	return ParseDocument(path, data)
}

// ParseDocument is ReadDocument for a document in memory; name is the
// file name errors report.
func ParseDocument(name string, data []byte) (*Document, error) {
	var head struct {
		SchemaVersion *int   `json:"schema_version"`
		Kind          string `json:"kind"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%s: not a solve document: %v", name, err)
	}
	switch {
	case head.Kind != Kind:
		return nil, fmt.Errorf("%s: not a solve document (kind %q, want %q)", name, head.Kind, Kind)
	case head.SchemaVersion == nil || *head.SchemaVersion != SchemaVersion:
		return nil, fmt.Errorf("%s: not a solve document of schema_version %d", name, SchemaVersion)
	}
	var d Document
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("%s: not a solve document: %v", name, err)
	}
	return &d, nil
}

// value is x as a document names it.
func (p *Problem) value(x float64) ValueDoc {
	return ValueDoc{Value: p.Domain.Label(x), X: p.Domain.Position(x)}
}

func (p *Problem) valuePtr(x float64) *ValueDoc {
	v := p.value(x)
	return &v
}

// obsDoc is an observation as written; combination names whose it is.
func obsDoc(o Observation, combination string) ObsDoc {
	return ObsDoc{Observed: Number(o.Observed), Margin: Number(o.Margin), RelativeMargin: Number(o.Relative), Pass: o.Pass, Why: o.Why, Combination: combination}
}

// header is the document's description of the problem, without results.
func (p *Problem) header() *Document {
	d := &Document{SchemaVersion: SchemaVersion, Kind: Kind, Tool: "stormsim " + results.Version, Solve: p.Hash, Name: p.Name,
		BaseConfigHash: p.BaseHash, Seed: p.Seed, Replications: p.Replications, Policies: p.Policies,
		Given: []AxisDoc{}, Cases: []CaseDoc{}, Probes: []ProbeDoc{}}
	for r := range p.Replications {
		d.Seeds = append(d.Seeds, p.Seed+uint64(r))
	}
	dm := p.Domain
	d.Vary = VaryDoc{Key: dm.Key, Kind: dm.Kind.String(), Unit: dm.Unit(), Min: p.value(dm.Min), Max: p.value(dm.Max),
		Goal: dm.Goal, Resolution: dm.ResolutionText, Scan: dm.Scan, Bisections: dm.Bisections()}
	if dm.HasStart {
		d.Vary.Start = p.valuePtr(dm.Start)
	}
	for _, r := range p.Requirements {
		d.Requirements = append(d.Requirements, RequirementDoc{Text: r.Check.Text, Metric: r.Check.Metric.String(), Op: r.Check.Op, Bound: r.Check.Bound, Unit: r.Unit()})
	}
	if p.Across != nil {
		d.Across = axisDoc(*p.Across)
	}
	d.FirstOrder = p.firstOrder
	for _, g := range p.Given {
		d.Given = append(d.Given, *axisDoc(g))
	}
	return d
}

// axisDoc is a sweep axis as a document names it.
func axisDoc(ax sweep.Axis) *AxisDoc {
	a := &AxisDoc{Key: ax.Path, Unit: ax.Unit}
	for i, v := range ax.Values {
		x := v.X
		if !ax.Numeric() {
			x = float64(i)
		}
		a.Values = append(a.Values, ValueDoc{Value: v.Label, X: x})
	}
	return a
}

// Number is a number of a document that may have none: NaN in memory,
// null in JSON, both ways (encoding/json would read null as 0).
type Number float64

// nan is the Number of a number a document has none of.
var nan = Number(math.NaN())

// MarshalJSON writes n, null for NaN or an infinity.
func (n Number) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (n *Number) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		*n = nan
		return nil
	}
	var f float64
	if err := json.Unmarshal(data, &f); err != nil {
		return err
	}
	*n = Number(f)
	return nil
}
