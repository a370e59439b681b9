package cli

import (
	"errors"
	"fmt"
	"strings"

	"stormsim/budget"
	"stormsim/config"
	"stormsim/internal/human"
	"stormsim/internal/safetext"
	"stormsim/results"
	"stormsim/runner"
	"stormsim/solve"
	"stormsim/sweep"
)

// cmdValidate is stormsim validate.
var cmdValidate = &command{
	name:    "validate",
	summary: "check a config, a sweep or a solve file without running it, and estimate its memory, time and files",
	usage:   "-c FILE [--set path=value]... [--policy label]... [--replications R] [--workers N] [--max-memory SIZE] [--max-time D]",
	run:     runValidate,
}

func runValidate(e *env, cmd *command, args []string) error {
	fs := flagSet(cmd.name)
	var sf scenarioFlags
	sf.add(fs)
	var rf runFlags
	rf.add(fs)
	rf.addMaxTime(fs)
	if done, err := parse(e, cmd, fs, args); done || err != nil {
		return err
	}
	if err := rf.check(cmd.name); err != nil {
		return err
	}
	limits, err := rf.limits(cmd.name)
	if err != nil {
		return err
	}
	if sf.configPath != "" {
		doc, err := config.LoadDocument(sf.configPath, nil)
		if err != nil {
			return badInput(err)
		}
		if doc.HasKey("axes") {
			return validateSweep(e, sf, rf, limits)
		}
		if doc.HasKey("vary") {
			return validateSolve(e, sf, rf, limits)
		}
	}
	return validateScenario(e, cmd, sf, rf, limits)
}

// validateScenario checks a scenario with its overrides and prints what
// running it takes.
func validateScenario(e *env, cmd *command, sf scenarioFlags, rf runFlags, limits budget.Limits) error {
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
	warnInert(e.stderr, file)
	est := budget.Run(s, specs, limits, rf.workers)
	if err := est.CheckRun(limits, s.Replications); err != nil {
		return rf.overBudget(err, doc)
	}
	// A run over the time limit is valid: run and check refuse it
	// without --max-time, and validate says so.
	if err := rf.overBudget(est.CheckTime(limits, s), doc); err != nil {
		fmt.Fprintf(e.stderr, "stormsim validate: warning: %v; run and check refuse it\n", err)
	} else {
		warnLong(e.stderr, cmd.name, est, limits)
	}
	labels := make([]string, len(specs))
	for i, p := range specs {
		labels[i] = safetext.Terminal(p.Label)
	}
	_, err = fmt.Fprintf(e.stdout, "%s: ok: %s, %s clients, %s, policies %s (config %s)\n  estimate: %s\n",
		safetext.Terminal(sf.configPath), results.DisplayName(s.Name), human.Count(int64(s.Clients)), s.Admission.New(), strings.Join(labels, ", "), file.Hash(),
		est.Summary(limits))
	for _, w := range s.Warnings() {
		if err == nil {
			_, err = fmt.Fprintf(e.stdout, "  warning: %s\n", w)
		}
	}
	return err
}

// validateSweep checks every point of a sweep file and prints what the
// whole sweep takes (its shards split the storms, the time and the
// lines among them), so that it can be planned before it runs.
func validateSweep(e *env, sf scenarioFlags, rf runFlags, limits budget.Limits) error {
	if len(sf.policies) > 0 {
		return usageErrorf("stormsim validate: %s is a sweep file: --policy applies to a scenario (a sweep runs every policy of its points)", safetext.Terminal(sf.configPath))
	}
	plan, err := sweep.Open(sf.configPath, rf.replications)
	if err != nil {
		return badInput(err)
	}
	if err := plan.Override(sf.sets); err != nil {
		return badInput(err)
	}
	// A million points take tens of seconds to check: Ctrl-C stops it.
	ctx, stop := interruptible()
	defer stop()
	err = plan.Check(func(int) bool { return ctx.Err() == nil })
	var ie *sweep.InterruptedError
	if errors.As(err, &ie) {
		return interruptedf("stormsim validate: interrupted while checking the grid (%s of %s points checked)", human.Count(int64(ie.Done)), human.Count(int64(ie.Points)))
	}
	if err != nil {
		return badInput(err)
	}
	est := budget.Sweep(plan.Shape(), limits, rf.workers)
	if err := est.CheckSweep(limits, -1, plan.Replications, ""); err != nil {
		return sweepOverBudget(err, plan, rf)
	}
	_, err = fmt.Fprintf(e.stdout, "%s: ok: sweep %s, %s points (%s), %d replication%s of %d polic%s a point (sweep %s)\n  estimate: %s; about %s of files\n",
		safetext.Terminal(sf.configPath), results.DisplayName(plan.Name), human.Count(int64(plan.Size)), plan.Dimensions(),
		plan.Replications, plural(plan.Replications, "", "s"), len(plan.Labels), plural(len(plan.Labels), "y", "ies"), plan.Hash,
		est.Summary(limits), human.Bytes(est.OutputBytes))
	return err
}

// validateSolve checks a solve file, every case and combination at both
// ends of its range, and prints what the solve can ask for at most.
func validateSolve(e *env, sf scenarioFlags, rf runFlags, limits budget.Limits) error {
	if len(sf.policies) > 0 {
		return usageErrorf("stormsim validate: %s is a solve file: it runs the policies its requirements name", safetext.Terminal(sf.configPath))
	}
	p, err := solve.Load(sf.configPath, solve.Options{Replications: rf.replications, Sets: sf.sets})
	if err != nil {
		return badInput(err)
	}
	sh := p.Shape()
	est := budget.Sweep(sh, limits, rf.workers)
	if err := est.CheckSweep(limits, -1, p.Replications, ""); err != nil {
		return solveOverBudget(err, p, rf)
	}
	_, err = fmt.Fprintf(e.stdout, "%s: ok: solve %s for the %s %s, %d requirement%s, %d case%s x %d combination%s of given values, %d replication%s of %s a probe (solve %s)\n  estimate: at most %s probes; %s; about %s of files\n",
		safetext.Terminal(sf.configPath), results.DisplayName(p.Name), p.Domain.Goal, safetext.Terminal(p.Domain.Key), len(p.Requirements), plural(len(p.Requirements), "", "s"),
		p.Cases(), plural(p.Cases(), "", "s"), p.Combinations(), plural(p.Combinations(), "", "s"), p.Replications, plural(p.Replications, "", "s"),
		safetext.Terminal(strings.Join(p.Policies, ", ")), p.Hash, human.Count(int64(sh.Points)), est.Summary(limits), human.Bytes(est.OutputBytes))
	return err
}
