package cli

import (
	"fmt"
	"strings"

	"stormsim/internal/budget"
	"stormsim/internal/human"
	"stormsim/internal/safetext"
	"stormsim/results"
	"stormsim/runner"
)

// cmdValidate is stormsim validate.
var cmdValidate = &command{
	name:    "validate",
	summary: "check a config (and its overrides) without running it",
	usage:   "-c FILE [--set path=value]... [--policy label]... [--replications R] [--workers N] [--max-memory SIZE]",
	run:     runValidate,
}

func runValidate(e *env, cmd *command, args []string) error {
	fs := flagSet(cmd.name)
	var sf scenarioFlags
	sf.add(fs)
	var rf runFlags
	rf.add(fs)
	if done, err := parse(e, cmd, fs, args); done || err != nil {
		return err
	}
	if err := rf.check(cmd.name); err != nil {
		return err
	}
	sf.sets = rf.sets(sf.sets)
	file, doc, err := sf.loadDocument(cmd.name)
	if err != nil {
		return err
	}
	s := file.Scenario
	specs, err := runner.SelectPolicies(s, sf.policies)
	if err != nil {
		return badInput(err)
	}
	limits, err := rf.limits(cmd.name)
	if err != nil {
		return err
	}
	est := budget.Run(s, specs, limits, rf.workers)
	if err := est.CheckRun(limits, s.Replications); err != nil {
		return rf.overBudget(err, doc)
	}
	labels := make([]string, len(specs))
	for i, p := range specs {
		labels[i] = safetext.Terminal(p.Label)
	}
	_, err = fmt.Fprintf(e.stdout, "%s: ok: %s, %s clients, %s, policies %s (config %s)\n  estimate: %s\n",
		safetext.Terminal(sf.configPath), results.DisplayName(s.Name), human.Count(int64(s.Clients)), s.Admission.New(), strings.Join(labels, ", "), file.Hash(),
		est.Summary(limits))
	return err
}
