// Package report is a calibration's document, calibration.json, and its
// renderings: the terminal summary, the tables and charts of its page,
// and calibrated.yaml. Every rendering is drawn from what the document
// holds, so that a page built again from a saved calibration.json is the
// page the calibration wrote.
package report

import (
	"encoding/json"
	"fmt"
	"math"
	"os"

	"stormsim/calibrate/compare"
	"stormsim/calibrate/fit"
	"stormsim/calibrate/measured"
	"stormsim/config"
	"stormsim/internal/atomicfile"
	"stormsim/internal/finitejson"
	"stormsim/models"
	"stormsim/sim"
)

// SchemaVersion is the version of Report's JSON layout. 3: a relative
// error against a real 0 is null, with the absolute error beside it; the
// report names a failure after the measurements (error). 4: the fitted
// and simulated sections (fit.model, fit.runs[].model,
// simulations[].sections) in the config's own keys and units, as
// calibrated.yaml writes them, where 3 wrote Go's field names and
// durations in nanoseconds.
const SchemaVersion = 4

// resumableSchema is the earlier layout Read still takes for --resume,
// which recomputes the fit and the simulations from the real runs: a
// version 3 report is read without them.
const resumableSchema = 3

// Role is what a simulated model stands for; its value is the
// simulation's label in calibration.json.
type Role string

// The models a calibration simulates, in the order it reports them.
const (
	// Predicted is the storm simulated with the sections fitted on another
	// storm (--model): nothing of this storm's real runs went into it.
	Predicted Role = "predicted"
	// Calibrated is the storm simulated with the sections fitted on each of
	// its own real runs alone (those that can be: Simulation.Runs),
	// replication r taking the (r mod K)-th's: the lab's run-to-run spread
	// as well as its level.
	Calibrated Role = "calibrated"
	// Pooled is the storm simulated with the sections fitted once on all
	// its real runs: what calibrated.yaml holds for stormsim run and sweep.
	Pooled Role = "pooled"
	// Uncalibrated is the storm as its config describes it.
	Uncalibrated Role = "uncalibrated"
)

// Checked reports whether the role's agreement with the real runs decides
// the calibration's verdict: the models fitted run by run, predicted and
// calibrated, do; the pooled one (no run-to-run spread) and the config as
// written are only shown.
func (r Role) Checked() bool { return r == Predicted || r == Calibrated }

// Report is calibration.json: the real runs, their checks, the fit, and
// each model simulated and compared with the real runs. Times are
// milliseconds.
type Report struct {
	SchemaVersion int    `json:"schema_version"`
	Tool          string `json:"tool"`
	Name          string `json:"name"`
	Seed          uint64 `json:"seed"`
	ConfigHash    string `json:"config_hash"`
	Clients       int    `json:"clients"`
	Policy        string `json:"policy"`
	Database      string `json:"database"` // where PostgreSQL came from
	// Models are the files the predicted model's sections come from
	// (--model), none without one.
	Models []string `json:"models,omitempty"`
	// DisturbedCores is the threshold of other work a run may see (cores).
	DisturbedCores float64 `json:"disturbed_cores"`
	// Config is the scenario calibrated, resolved and echoed (config.Echo).
	Config json.RawMessage `json:"config,omitempty"`
	// Sized is how the storm was sized to this machine before its real
	// runs (Clients and Config are the storm as sized); nil: as written.
	Sized *Sizing `json:"sized,omitempty"`
	// Frame is what the charts draw around the series.
	Frame Frame `json:"frame"`

	// Real are the runs fitted and compared; Replaced the runs that other
	// work disturbed and fresh runs replaced (neither fitted nor compared).
	Real     []*measured.Run  `json:"real"`
	Replaced []*measured.Run  `json:"replaced,omitempty"`
	Checks   []measured.Check `json:"checks"`
	Fit      fit.Fit          `json:"fit"`
	// FitError says why the runs could not be fitted, when a predicted
	// model (--model) stood in: there is then no calibrated or pooled
	// model, and Fit holds only the sections that could be measured.
	FitError string `json:"fit_error,omitempty"`
	// Error names what failed after the real runs were measured and
	// fitted (simulating, comparing, charting or writing): the document
	// then holds the runs, their checks, the fit and the models simulated
	// before the failure.
	Error string `json:"error,omitempty"`
	// Incomplete says how the calibration stopped before it ended
	// (interrupted, or out of time), and what it had done: Real and
	// Replaced hold the real runs that finished, which calibrate --resume
	// keeps. Empty for a calibration that ended.
	Incomplete string `json:"incomplete,omitempty"`
	// CalibratedConfig is the scenario with the calibrated model's sections,
	// in the config's own keys (also written to calibrated.yaml).
	CalibratedConfig json.RawMessage `json:"calibrated_config"`
	// Simulations are the models compared with the real runs: predicted
	// (with --model), calibrated, pooled, uncalibrated, in this order.
	Simulations []Simulation        `json:"simulations"`
	Agreement   []compare.Agreement `json:"agreement"`
}

// Simulation is one model run over many seeds and its comparison with the
// real runs.
type Simulation struct {
	Role Role `json:"label"`
	// Sections are the model's capacity, network and detection; with
	// several, replication r took Sections[r mod len(Sections)].
	Sections []Sections `json:"sections"`
	// Runs, for the calibrated model, are the real runs Sections were
	// fitted on, each alone: a run that cannot be fitted alone is not
	// among them (Fit.Runs says why).
	Runs []int `json:"runs,omitempty"`
	// Borrowed names what a model takes from elsewhere: for a calibrated
	// model of runs that could not be fitted whole (Report.FitError), the
	// sections of the predicted model (its capacity measured on each run);
	// for a predicted model of a sized storm, the claim rate of the
	// warm-up that sized it.
	Borrowed     string                     `json:"borrowed,omitempty"`
	Replications int                        `json:"replications"`
	FirstSeed    uint64                     `json:"first_seed"`
	Metrics      []compare.MetricComparison `json:"metrics"`
	Series       []compare.SeriesComparison `json:"series"`
	// Outcome, for a storm with a horizon, is how the real runs and the
	// replications ended.
	Outcome *compare.OutcomeComparison `json:"outcome,omitempty"`
	// PerReplication are the figures of each replication the charts
	// draw.
	PerReplication ReplicationFigures `json:"per_replication"`
}

// ReplicationFigures are, for each replication of a model in order, what
// its charts draw: total attempts, the last connect (ms; null for a storm
// that did not converge), the connect-time p99 (ms) and, with a lease,
// the reclaim time (ms).
type ReplicationFigures struct {
	Attempts      []float64 `json:"attempts"`
	ConvergenceMs []float64 `json:"convergence_ms"`
	ConnectP99Ms  []float64 `json:"connect_p99_ms"`
	ReclaimMs     []float64 `json:"reclaim_ms,omitempty"`
}

// FiguresOf are the chart figures of replications reps.
func FiguresOf(reps []sim.Result) ReplicationFigures {
	var f ReplicationFigures
	for i := range reps {
		r := &reps[i]
		f.Attempts = append(f.Attempts, float64(r.Attempts))
		c, ok := r.Convergence()
		if !ok {
			c = math.NaN()
		}
		f.ConvergenceMs = append(f.ConvergenceMs, c)
		f.ConnectP99Ms = append(f.ConnectP99Ms, r.ConnectMs.P99)
		if r.Reclaim != nil {
			f.ReclaimMs = append(f.ReclaimMs, r.Reclaim.ReclaimMs)
		}
	}
	return f
}

// Sections are a scenario's capacity, network and detection; nil: the
// section is off.
type Sections struct {
	Capacity  *models.CapacitySpec
	Network   *models.NetworkSpec
	Detection *models.DetectionSpec
}

// sectionsJSON is Sections as calibration.json holds them: each in the
// config's own keys and units, null when off.
type sectionsJSON struct {
	Capacity  json.RawMessage `json:"capacity"`
	Network   json.RawMessage `json:"network"`
	Detection json.RawMessage `json:"detection"`
}

// MarshalJSON writes the sections in the config's keys and units, as
// calibrated.yaml does.
func (s Sections) MarshalJSON() ([]byte, error) {
	return json.Marshal(sectionsJSON{config.EchoValue(s.Capacity), config.EchoValue(s.Network), config.EchoValue(s.Detection)})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (s *Sections) UnmarshalJSON(data []byte) error {
	var j sectionsJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	var got Sections
	if err := decodeSection("capacity", j.Capacity, &got.Capacity); err != nil {
		return err
	}
	if err := decodeSection("network", j.Network, &got.Network); err != nil {
		return err
	}
	if err := decodeSection("detection", j.Detection, &got.Detection); err != nil {
		return err
	}
	*s = got
	return nil
}

// decodeSection reads one section config.EchoValue wrote into *v,
// leaving it nil for null.
func decodeSection[T any](key string, data json.RawMessage, v **T) error {
	if len(data) == 0 || string(data) == "null" {
		return nil
	}
	section := new(T)
	if err := config.DecodeValue("sections."+key, data, section); err != nil {
		return err
	}
	*v = section
	return nil
}

// SectionsOf are s's sections.
func SectionsOf(s *sim.Scenario) Sections {
	return Sections{Capacity: s.Capacity, Network: s.Network, Detection: s.Detection}
}

// Disturbed are the compared runs that other work disturbed: those a
// calibration had to keep when it ran out of replacements.
func (r *Report) Disturbed() []int {
	var out []int
	for _, run := range r.Real {
		if run.Load.Disturbed {
			out = append(out, run.Run)
		}
	}
	return out
}

// Failures says why the calibration does not pass: a lab check failed, a
// checked model's agreement failed, or a compared run was disturbed by
// other work (its figures measure that work as much as the gateway). None:
// it passes.
func (r *Report) Failures() []string {
	var out []string
	for _, c := range r.Checks {
		if !c.Pass {
			out = append(out, fmt.Sprintf("run %d: lab check %q: %s", c.Run, c.Name, c.Observed))
		}
	}
	checked := map[string]bool{}
	for _, sm := range r.Simulations {
		checked[string(sm.Role)] = sm.Role.Checked()
	}
	for _, a := range r.Agreement {
		if checked[a.Model] && !a.Pass {
			out = append(out, fmt.Sprintf("%s model: %s: %s", a.Model, a.Name, a.Observed))
		}
	}
	if d := r.Disturbed(); len(d) > 0 {
		out = append(out, fmt.Sprintf("runs %v were disturbed by other work (more than %.2f cores): rerun on a quiet machine", d, r.DisturbedCores))
	}
	return out
}

// Read reads a report that WriteJSON wrote.
func Read(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var version struct {
		SchemaVersion int `json:"schema_version"`
	}
	if err := json.Unmarshal(data, &version); err != nil {
		return nil, fmt.Errorf("%s: not a calibration report: %v", path, err)
	}
	switch version.SchemaVersion {
	case SchemaVersion:
	case resumableSchema:
		if data, err = withoutModels(data); err != nil {
			return nil, fmt.Errorf("%s: not a calibration report: %v", path, err)
		}
	default:
		return nil, fmt.Errorf("%s: schema_version %d, this stormsim reads %d (and %d for --resume)", path, version.SchemaVersion, SchemaVersion, resumableSchema)
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: not a calibration report: %v", path, err)
	}
	return &r, nil
}

// withoutModels is a version 3 report without its fit and simulations,
// whose sections that layout wrote in Go's field names.
func withoutModels(data []byte) ([]byte, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil {
		return nil, err
	}
	delete(members, "fit")
	delete(members, "simulations")
	return json.Marshal(members)
}

// WriteJSON writes the report to path, atomically and readable by all
// (0644, as stormsim run writes result.json).
func (r *Report) WriteJSON(path string) error {
	data, err := finitejson.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(data, '\n'))
}

// YAMLDigits are the significant digits of a calibrated scenario's
// figures: a fit is good to a few per cent, and a file with 0.6315 reads
// better than one with 0.6315000000000001.
const YAMLDigits = 4

// ScenarioYAML is a calibrated scenario as a file, in the shipped
// configs' style: a comment saying where it comes from (fitted on what),
// then the scenario, its figures to YAMLDigits digits and its defaults
// left out. stormsim run, sweep and calibrate --model take it as it is;
// the calibration simulates what it reads back (config.Parse), so that
// the file is the model it checked.
func ScenarioYAML(name, fittedOn string, echo []byte) ([]byte, error) {
	head := fmt.Sprintf("%s calibrated against %s of the gateway (stormsim calibrate): capacity,\n"+
		"network and detection fitted as calibration.json's fit.method says; the rest as in the config.", name, fittedOn)
	return config.YAML(echo, config.YAMLOptions{Header: head, Digits: YAMLDigits, Minimal: true})
}
