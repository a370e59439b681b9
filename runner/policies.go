package runner

import (
	"fmt"
	"slices"
	"strings"

	"stormsim/internal/suggest"
	"stormsim/policies"
	"stormsim/sim"
)

// UnknownPolicyError says that a requested policy label is not in the
// scenario.
type UnknownPolicyError struct {
	Label     string
	Available []string // labels in config order
}

func (e *UnknownPolicyError) Error() string {
	if best, ok := suggest.Closest(e.Label, e.Available); ok {
		return fmt.Sprintf("--policy %s: unknown policy; did you mean %s? (the config has %s)", e.Label, best, strings.Join(e.Available, ", "))
	}
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
