package cli

import (
	"fmt"
	"strings"

	"stormsim/config"
	"stormsim/internal/human"
	"stormsim/internal/safetext"
	"stormsim/results"
)

func init() {
	register(command{
		name:    "validate",
		summary: "check a config (and its overrides) without running it",
		usage:   "-c FILE [--set path=value]... [--policy label]...",
		run:     validate,
	})
}

func validate(e *env, args []string) error {
	cmd, _ := lookup("validate")
	fs := flagSet(cmd.name)
	var sf scenarioFlags
	sf.add(fs)
	if done, err := parse(e, cmd, fs, args); done || err != nil {
		return err
	}
	s, err := sf.load(cmd.name)
	if err != nil {
		return err
	}
	specs, err := results.SelectPolicies(s, sf.policies)
	if err != nil {
		return badInput(err)
	}
	labels := make([]string, len(specs))
	for i, p := range specs {
		labels[i] = safetext.Terminal(p.Label)
	}
	_, err = fmt.Fprintf(e.stdout, "%s: ok: %s, %s clients, %s, policies %s (config %s)\n",
		safetext.Terminal(sf.configPath), results.DisplayName(s.Name), human.Count(int64(s.Clients)), s.Admission.New(), strings.Join(labels, ", "), config.Hash(s))
	return err
}
