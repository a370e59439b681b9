package cli

import (
	"stormsim/config"
	"stormsim/results"
	"stormsim/sim"
)

// scenarioOf decodes the config echoed in a saved document, or returns nil
// if this stormsim cannot read it (then charts draw no capacity line).
func scenarioOf(path string, doc *results.Document) *sim.Scenario {
	s, err := config.Parse(path+": config", doc.Config, nil)
	if err != nil {
		return nil
	}
	return s
}
