// Package results holds the outcome of a scenario's storms as a versioned
// JSON document and a text summary, and names and summarises the metrics
// of a result.
package results

import (
	"encoding/json"

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
	ConfigHash    string          `json:"config_hash"` // identifies the resolved config file (see New)
	Name          string          `json:"name"`
	Seed          uint64          `json:"seed"`
	Config        json.RawMessage `json:"config"`  // the resolved config file as JSON (see New)
	Results       []sim.Result    `json:"results"` // with replications, the first one's (seed Seed)

	// With replications >= 2 only: the seeds run and, per policy, each
	// metric's statistics and per-run values. Series are kept for the first
	// replication only (in Results), so a document stays small.
	Replications *Replications `json:"replications,omitempty"`
	Summary      []Summary     `json:"summary,omitempty"`
}

// New returns the document of a run of the resolved scenario s, with no
// results yet. configHash and config identify the resolved config file
// that s came from (its hash and its echo, as package config computes
// them); the document records them as given.
func New(s *sim.Scenario, configHash string, config json.RawMessage) *Document {
	return &Document{
		SchemaVersion: SchemaVersion,
		Tool:          "stormsim " + Version,
		ConfigHash:    configHash,
		Name:          s.Name,
		Seed:          s.Seed,
		Config:        config,
		Results:       []sim.Result{},
	}
}
