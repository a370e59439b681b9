// Package results runs the storms a scenario describes and holds their
// outcome as a versioned JSON document and a text summary.
package results

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"stormsim/config"
	"stormsim/policies"
	"stormsim/sim"
)

// SchemaVersion is the version of the JSON layout of Document. It changes
// whenever a field is renamed, removed or changes meaning.
const SchemaVersion = 1

// Version is stormsim's release, reported in Document.Tool. It is a
// variable so a release build can set it with -ldflags -X.
var Version = "0.1.0"

// Document is the result of one `stormsim run`: the resolved config and
// one result per policy. Times inside Results are in milliseconds.
type Document struct {
	SchemaVersion int             `json:"schema_version"`
	Tool          string          `json:"tool"`        // "stormsim <version>"
	ConfigHash    string          `json:"config_hash"` // config.Hash of the resolved scenario
	Name          string          `json:"name"`
	Seed          uint64          `json:"seed"`
	Config        json.RawMessage `json:"config"`  // config.Echo of the resolved scenario
	Results       []sim.Result    `json:"results"` // with replications, the first one's (seed Seed)

	// With replications >= 2 only: the seeds run and, per policy, each
	// metric's statistics and per-run values. Series are kept for the first
	// replication only (in Results), so a document stays small.
	Replications *Replications `json:"replications,omitempty"`
	Summary      []Summary     `json:"summary,omitempty"`
}

// UnknownPolicyError says that a requested policy label is not in the
// scenario.
type UnknownPolicyError struct {
	Label     string
	Available []string // labels in config order
}

func (e *UnknownPolicyError) Error() string {
	return fmt.Sprintf("--policy %s: unknown policy; the config has %s", e.Label, strings.Join(e.Available, ", "))
}

// SelectPolicies returns the policies of s whose labels are in filter, in
// config order; an empty filter selects them all. s must be resolved, so
// that every label is set.
func SelectPolicies(s *sim.Scenario, filter []string) ([]policies.Spec, error) {
	if len(filter) == 0 {
		return s.Policies, nil
	}
	labels := make([]string, len(s.Policies))
	for i, p := range s.Policies {
		labels[i] = p.Label
	}
	for _, want := range filter {
		if !slices.Contains(labels, want) {
			return nil, &UnknownPolicyError{Label: want, Available: labels}
		}
	}
	var selected []policies.Spec
	for _, p := range s.Policies {
		if slices.Contains(filter, p.Label) {
			selected = append(selected, p)
		}
	}
	return selected, nil
}

// Build runs the storm of the resolved scenario s for each selected policy
// (see SelectPolicies) and each of its replications, on up to
// runtime.GOMAXPROCS goroutines. See BuildParallel.
func Build(s *sim.Scenario, policyFilter []string) (*Document, error) {
	return BuildParallel(s, policyFilter, 0)
}

// BuildParallel runs the storm of the resolved scenario s for each selected
// policy and each replication r in [0, s.Replications) with seed s.Seed+r,
// on up to workers goroutines (0 means runtime.GOMAXPROCS). Runs are
// collected by index, so the document is the same whatever workers is.
// With one replication the document has no Replications or Summary.
func BuildParallel(s *sim.Scenario, policyFilter []string, workers int) (*Document, error) {
	return BuildWith(s, policyFilter, BuildOptions{Workers: workers})
}

// BuildOptions say how BuildWith runs its storms; none changes a byte of
// the document.
type BuildOptions struct {
	Workers int // storms at once; 0 means runtime.GOMAXPROCS
	// Context, when cancelled, stops every storm and BuildWith returns
	// ErrStopped; nil never stops.
	Context context.Context
	// Progress, when set, is called from a storm's goroutine with where
	// storm (its index among Storms) stands, every sim.ProgressEvery
	// attempts, and with done true once it has finished.
	Progress func(storm int, p sim.Progress, done bool)
}

// ErrStopped is a run stopped by its context before it finished.
var ErrStopped = errors.New("stopped before the end")

// Storms is how many storms BuildWith runs for s with n policies
// selected; storm i is replication i/n of policy i%n.
func Storms(s *sim.Scenario, n int) int { return n * max(1, s.Replications) }

// BuildWith is BuildParallel with progress reports and a context that
// stops it.
func BuildWith(s *sim.Scenario, policyFilter []string, opt BuildOptions) (*Document, error) {
	specs, err := SelectPolicies(s, policyFilter)
	if err != nil {
		return nil, err
	}
	reps := max(1, s.Replications)
	first := make([]sim.Result, len(specs)) // only the first replication keeps its series
	runs := make([]*Runs, len(specs))
	for p := range runs {
		runs[p] = NewRuns(reps)
	}
	ctx := opt.Context
	if ctx == nil {
		ctx = context.Background()
	}
	err = ForEach(len(specs)*reps, opt.Workers, func(i int) error {
		rep, p := i/len(specs), i%len(specs)
		if ctx.Err() != nil {
			return ErrStopped
		}
		report := func(pr sim.Progress) bool {
			if opt.Progress != nil {
				opt.Progress(i, pr, false)
			}
			return ctx.Err() == nil
		}
		r, err := RunOneWith(s, specs[p], s.Seed+uint64(rep), report)
		if err != nil {
			return err
		}
		if opt.Progress != nil {
			opt.Progress(i, sim.Progress{}, true)
		}
		if reps > 1 {
			runs[p].Add(rep, ResultMetrics(&r))
		}
		if rep == 0 {
			first[p] = r
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ErrStopped
		}
		return nil, err
	}
	doc := New(s)
	doc.Results = append(doc.Results, first...)
	if reps < 2 {
		return doc, nil
	}
	doc.Replications = &Replications{Count: reps}
	for rep := range reps {
		doc.Replications.Seeds = append(doc.Replications.Seeds, s.Seed+uint64(rep))
	}
	for p, spec := range specs {
		doc.Summary = append(doc.Summary, runs[p].Summary(spec.Label))
	}
	return doc, nil
}

// New returns the document for s with no results yet.
func New(s *sim.Scenario) *Document {
	return &Document{
		SchemaVersion: SchemaVersion,
		Tool:          "stormsim " + Version,
		ConfigHash:    config.Hash(s),
		Name:          s.Name,
		Seed:          s.Seed,
		Config:        config.Echo(s),
		Results:       []sim.Result{},
	}
}

// RunOne runs one storm of s: every client uses policy spec and randomness
// comes from seed. It is the unit of work that replications and parallel
// runs schedule; it touches no shared state.
func RunOne(s *sim.Scenario, spec policies.Spec, seed uint64) (sim.Result, error) {
	return RunOneWith(s, spec, seed, nil)
}

// RunOneWith is RunOne calling report as sim.RunWithProgress does; when
// report returns false the storm stops and RunOneWith returns ErrStopped.
func RunOneWith(s *sim.Scenario, spec policies.Spec, seed uint64, report func(sim.Progress) bool) (sim.Result, error) {
	b, err := policies.New(spec)
	if err != nil {
		return sim.Result{}, fmt.Errorf("policy %s: %w", spec.Label, err)
	}
	if report == nil {
		return sim.Run(s, b, seed), nil
	}
	stopped := false
	r := sim.RunWithProgress(s, b, seed, func(p sim.Progress) bool {
		if !report(p) {
			stopped = true
		}
		return !stopped
	})
	if stopped {
		return sim.Result{}, ErrStopped
	}
	return r, nil
}
