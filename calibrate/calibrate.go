// Package calibrate runs a scenario's storm for real and simulated, side by
// side, and reports how far apart they are.
//
// A calibration starts PostgreSQL access and the real gateway processes the
// scenario needs (gw-a, gw-b, and gw-c for the drain), connects the
// scenario's clients to gw-a with the project's own client (the simulator's
// exact draws), SIGKILLs gw-a, lets the clients storm gw-b, then drains gw-b
// to gw-c. It records every attempt and lifecycle event, checks the seed
// lab's claims on the real run, fits the simulator's network and detection
// parameters to the latencies it saw, and compares the simulator with and
// without them against the real runs, metric by metric and window by
// window.
package calibrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"stormsim/config"
	"stormsim/models"
	"stormsim/policies"
	"stormsim/results"
	"stormsim/runner"
	"stormsim/sim"
)

// Defaults of Options.
const (
	DefaultRuns         = 1
	DefaultReplications = 200
	DefaultMaxClients   = 2000
	DefaultTimeout      = 10 * time.Minute
)

// Output file names inside Options.OutDir.
const (
	ReportFile     = "calibration.json"
	RecordFile     = "real.ndjson"
	ChartsDir      = "charts"
	CalibratedFile = "calibrated.yaml" // the scenario with the fitted capacity, network and detection, for stormsim run and sweep
)

// Options configures a calibration. Zero values take the defaults above.
type Options struct {
	OutDir       string // created if missing
	DatabaseURL  string // "" = $DATABASE_URL, then a throwaway cluster
	GatewayBin   string // "" = go build ./cmd/gateway into a temporary directory
	Runs         int    // real storms; run k uses seed Seed+k-1
	Replications int    // simulated storms per model
	MaxClients   int    // refuse larger scenarios
	Timeout      time.Duration
	Policy       string // policy label under test; "" = the scenario's first
	// Progress, if set, receives one line per step.
	Progress io.Writer
}

func (o Options) withDefaults() Options {
	if o.Runs == 0 {
		o.Runs = DefaultRuns
	}
	if o.Replications == 0 {
		o.Replications = DefaultReplications
	}
	if o.MaxClients == 0 {
		o.MaxClients = DefaultMaxClients
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	return o
}

// UsageError is bad input: a flag or a scenario the lab cannot run.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error, for errors.Is and errors.As.
func (e *UsageError) Unwrap() error { return e.Err }

// Report is calibration.json: the real runs, their checks, the fit, and
// both simulations compared with the real runs. Times are milliseconds.
type Report struct {
	SchemaVersion int    `json:"schema_version"`
	Tool          string `json:"tool"`
	Name          string `json:"name"`
	Seed          uint64 `json:"seed"`
	ConfigHash    string `json:"config_hash"`
	Clients       int    `json:"clients"`
	Policy        string `json:"policy"`
	Database      string `json:"database"` // where PostgreSQL came from

	Real   []*RealRun `json:"real"`
	Checks []Check    `json:"checks"`
	Fit    Fit        `json:"fit"`
	// CalibratedConfig is the scenario with the fitted sections, in the
	// config's own keys (also written to calibrated.yaml).
	CalibratedConfig json.RawMessage `json:"calibrated_config"`
	Simulations      []Simulation    `json:"simulations"`
	// Variants are other fitted models, compared alike but not checked:
	// what each part of the calibrated model contributes.
	Variants []Simulation `json:"variants"`
	// Agreement is the calibrated simulation's checks (attempts, time to
	// all reconnected, per-window series), as listed with their tolerances.
	Agreement []Agreement `json:"agreement"`
}

// ReportSchemaVersion is the version of Report's JSON layout.
const ReportSchemaVersion = 1

// Simulation is one model run over many seeds and its comparison with the
// real runs.
type Simulation struct {
	Label     string                `json:"label"`
	Capacity  *models.CapacitySpec  `json:"capacity"`  // nil: gateways answer at once
	Network   *models.NetworkSpec   `json:"network"`   // nil: no latency
	Detection *models.DetectionSpec `json:"detection"` // nil: clients notice at once
	// PerRun, for a model fitted on each real run alone, are the fitted
	// sections per run (replication r took run r mod K's); Capacity,
	// Network and Detection above are then run 1's.
	PerRun       []FittedSections   `json:"per_run,omitempty"`
	Replications int                `json:"replications"`
	FirstSeed    uint64             `json:"first_seed"`
	Metrics      []MetricComparison `json:"metrics"`
	Series       []SeriesComparison `json:"series"`

	results []sim.Result
}

// FittedSections are the fitted sections of one scenario.
type FittedSections struct {
	Capacity  *models.CapacitySpec  `json:"capacity"`  // nil: no backlog seen in the run
	Network   *models.NetworkSpec   `json:"network"`   // the run's legs, server time and shared_every
	Detection *models.DetectionSpec `json:"detection"` // the run's first arrivals
}

// Agreement is one tolerance check of a simulation against the real runs.
type Agreement struct {
	Simulation string `json:"simulation"`
	Name       string `json:"name"`
	Criterion  string `json:"criterion"`
	Observed   string `json:"observed"`
	Pass       bool   `json:"pass"`
}

// Passed reports whether every lab check and every agreement of the
// calibrated simulation passed.
func (r *Report) Passed() bool {
	for _, c := range r.Checks {
		if !c.Pass {
			return false
		}
	}
	for _, a := range r.Agreement {
		if a.Simulation == LabelCalibrated && !a.Pass {
			return false
		}
	}
	return true
}

// Run calibrates the resolved scenario s: real runs, fit, simulations,
// calibration.json, real.ndjson and charts in opt.OutDir. ctx's
// cancellation (Ctrl-C) stops everything and removes every process and
// schema it started. Errors about the scenario or the flags are
// *UsageError.
func Run(ctx context.Context, s *sim.Scenario, opt Options) (*Report, error) {
	opt = opt.withDefaults()
	logf := func(format string, args ...any) {
		if opt.Progress != nil {
			fmt.Fprintf(opt.Progress, "calibrate: "+format+"\n", args...)
		}
	}
	switch {
	case opt.OutDir == "":
		return nil, &UsageError{errors.New("an output directory is required")}
	case opt.Runs < 1 || opt.Runs > 100:
		return nil, &UsageError{fmt.Errorf("--runs must be in [1, 100] (got %d)", opt.Runs)}
	case opt.Replications < 2 || opt.Replications > 100_000:
		return nil, &UsageError{fmt.Errorf("--replications must be in [2, 100000] (got %d)", opt.Replications)}
	case s.Clients > opt.MaxClients:
		return nil, &UsageError{fmt.Errorf("clients: %d real clients exceed --max-clients %d", s.Clients, opt.MaxClients)}
	case opt.Replications < opt.Runs:
		return nil, &UsageError{fmt.Errorf("--replications (%d) must be at least --runs (%d), so every real run has its simulated twin", opt.Replications, opt.Runs)}
	}
	spec, err := pickPolicy(s, opt.Policy)
	if err != nil {
		return nil, &UsageError{err}
	}
	p, err := newPlan(s, spec)
	if err != nil {
		return nil, &UsageError{err}
	}
	ctx, cancel := context.WithTimeout(ctx, opt.Timeout)
	defer cancel()
	if err := os.MkdirAll(opt.OutDir, 0o755); err != nil {
		return nil, &UsageError{fmt.Errorf("output directory: %w", err)}
	}

	db, err := OpenDatabase(ctx, opt.DatabaseURL)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	logf("PostgreSQL from %s at %s", db.Source, hostOf(db.URL))
	bin := opt.GatewayBin
	if bin == "" {
		tmp, err := os.MkdirTemp("", "stormsim-gateway-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		logf("building cmd/gateway")
		if bin, err = buildGateway(ctx, tmp); err != nil {
			return nil, err
		}
	} else if !isExecutable(bin) {
		return nil, &UsageError{fmt.Errorf("--gateway-bin %s: not an executable file", bin)}
	}
	record, err := os.Create(filepath.Join(opt.OutDir, RecordFile))
	if err != nil {
		return nil, err
	}
	defer record.Close()

	rep := &Report{SchemaVersion: ReportSchemaVersion, Tool: "stormsim " + results.Version, Name: s.Name, Seed: s.Seed,
		ConfigHash: config.Hash(s), Clients: s.Clients, Policy: spec.Label, Database: db.Source}
	env := labEnv{bin: bin, dbURL: db.URL, dir: opt.OutDir, maxClients: opt.MaxClients, record: record}
	for k := 1; k <= opt.Runs; k++ {
		r, err := runLab(ctx, env, p, k, s.Seed+uint64(k-1), logf)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("real run %d: %w", k, context.Cause(ctx))
			}
			return nil, fmt.Errorf("real run %d: %w", k, err)
		}
		rep.Real = append(rep.Real, r)
		rep.Checks = append(rep.Checks, labChecks(p, r)...)
	}

	var handshakes []Handshake
	var starts [][]float64
	var claims [][]Claim
	var rejects [][]float64
	for _, r := range rep.Real {
		handshakes = append(handshakes, r.Handshakes...)
		starts = append(starts, r.StartDelaysMs)
		claims = append(claims, r.Claims)
		rejects = append(rejects, r.RejectsMs)
	}
	if rep.Fit, err = fitModel(handshakes, starts, claims, rejects); err != nil {
		return nil, err
	}
	rep.Fit.fitStalls(rep.Real)
	rep.Fit.fitBacklog(rep.Real)
	rep.Fit.fitFirstArrival(rep.Real)
	rep.Fit.fitShared(rep.Real)
	variants, err := fittedModels(s, rep.Fit)
	if err != nil {
		return nil, err
	}
	// The checked model is the pooled one fitted run by run; with runs
	// that cannot be fitted alone, the pooled one itself.
	calibrated, ok := perRunModel(s, rep.Real, LabelPooled, LabelCalibrated)
	if !ok {
		calibrated = variants[0]
		calibrated.label = LabelCalibrated
	}
	fitted := append([]labelled{calibrated, {label: LabelUncalibrated, s: s}}, variants...)
	rep.CalibratedConfig = config.Echo(variants[0].s) // the pooled fit: one scenario for planners
	logf("fitted capacity %s, first arrival %s, retry legs out %s back %s shared every %v", describeCapacity(rep.Fit.Capacity),
		describeDistPtr(rep.Fit.FirstArrival), describeDistPtr(rep.Fit.NetworkWithLegs.OutLeg), describeDistPtr(rep.Fit.NetworkWithLegs.BackLeg),
		rep.Fit.SharedEvery)
	for i, m := range fitted {
		reps, err := simulate(m.scenarios(), spec, opt.Replications)
		if err != nil {
			return nil, err
		}
		sm := Simulation{Label: m.label, Capacity: m.s.Capacity, Network: m.s.Network, Detection: m.s.Detection,
			Replications: opt.Replications, FirstSeed: s.Seed, results: reps,
			Metrics: compareMetrics(rep.Real, reps), Series: compareSeries(rep.Real, reps, ms(s.Metrics.Window))}
		for _, r := range m.perRun {
			sm.PerRun = append(sm.PerRun, FittedSections{r.Capacity, r.Network, r.Detection})
		}
		if i >= 2 {
			rep.Variants = append(rep.Variants, sm)
			continue
		}
		rep.Simulations = append(rep.Simulations, sm)
		rep.Agreement = append(rep.Agreement, agreements(sm)...)
		logf("simulated %d replications (%s)", opt.Replications, m.label)
	}
	if err := writeReport(filepath.Join(opt.OutDir, ReportFile), rep); err != nil {
		return nil, err
	}
	if err := writeAtomic(filepath.Join(opt.OutDir, CalibratedFile), calibratedYAML(s, rep)); err != nil {
		return nil, err
	}
	if _, err := writeCharts(filepath.Join(opt.OutDir, ChartsDir), s, p, rep); err != nil {
		return nil, err
	}
	return rep, nil
}

// pickPolicy returns the policy labelled label, or the first one.
func pickPolicy(s *sim.Scenario, label string) (policies.Spec, error) {
	if label == "" {
		return s.Policies[0], nil
	}
	picked, err := runner.SelectPolicies(s, []string{label})
	if err != nil {
		return policies.Spec{}, err
	}
	return picked[0], nil
}

// agreements are a simulation's tolerance checks.
func agreements(sm Simulation) []Agreement {
	var out []Agreement
	for _, m := range sm.Metrics {
		if m.Pass == nil {
			continue
		}
		out = append(out, Agreement{Simulation: sm.Label, Name: m.Metric,
			Criterion: fmt.Sprintf("|sim mean - real mean| <= %.0f%% of real", 100*m.Tolerance),
			Observed:  fmt.Sprintf("sim %.1f vs real %.1f: %+.1f%%", m.SimMean, m.Real, 100*m.RelError),
			Pass:      *m.Pass})
	}
	for _, c := range sm.Series {
		if c.Pass == nil {
			continue
		}
		out = append(out, Agreement{Simulation: sm.Label, Name: c.Series + " per window",
			Criterion: fmt.Sprintf("inside the simulated spread (min-max of the replications) in all but %d windows", c.AllowedOutside),
			Observed: fmt.Sprintf("%d of %d windows inside the spread, %d inside the 95%% band; W1 %.0f ms (p %.2f)",
				c.WindowsInsideEnvelope, c.Windows, c.WindowsInside, c.W1Ms, c.W1P),
			Pass: *c.Pass})
	}
	return out
}

// loadAverage is /proc/loadavg's first three fields: the machine's load,
// which shows in every real latency.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// describeCapacity prints a capacity in one short phrase.
func describeCapacity(c *models.CapacitySpec) string {
	if c == nil {
		return "none (no backlog seen)"
	}
	if c.DecidePerS > 0 {
		return fmt.Sprintf("decide %.0f/s, then admit %.1f/s", c.DecidePerS, c.AdmitPerS)
	}
	return fmt.Sprintf("admit %.1f/s, reject %.0f/s, decided at %s", c.AdmitPerS, c.RejectPerS, c.Decide)
}

// describeDistPtr is describeDist, "none" for nil.
func describeDistPtr(d *models.Distribution) string {
	if d == nil {
		return "none"
	}
	return describeDist(*d)
}

// describeDist prints a distribution in one short phrase.
func describeDist(d models.Distribution) string {
	switch d.Dist {
	case "lognormal":
		return fmt.Sprintf("lognormal(median %v, sigma %.2f, cap %v)", d.Median, d.Sigma, d.Cap)
	case "uniform":
		return fmt.Sprintf("uniform[%v, %v)", d.Min, d.Max)
	case "empirical":
		p := d.Points
		return fmt.Sprintf("empirical(%d points: min %v, median %v, max %v)", len(p), p[0], p[(len(p)-1)/2], p[len(p)-1])
	}
	return fmt.Sprintf("fixed %v", d.Value)
}
