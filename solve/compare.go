package solve

import (
	"fmt"
	"math"
	"strings"

	"stormsim/sweep"
)

// Comparison is a solve compared with a saved one (a golden): its
// answers and every probe.
type Comparison struct {
	Cases, Probes int      // compared
	Drifts        []string // one line each, baseline first
}

// Compare compares current with baseline: each case's status, answer,
// bracket, binding requirements, interval, closest value and relaxed
// bounds, exactly; then every probe, in order: its settings and
// verdict exactly, each observed value within tolerance (a fraction of
// the baseline's; 0 asks for identical values).
func Compare(baseline, current *Document, tolerance float64) Comparison {
	c := Comparison{}
	drift := func(format string, args ...any) { c.Drifts = append(c.Drifts, fmt.Sprintf(format, args...)) }
	if len(baseline.Cases) != len(current.Cases) {
		drift("%d cases in the baseline, %d now", len(baseline.Cases), len(current.Cases))
	}
	for i := range min(len(baseline.Cases), len(current.Cases)) {
		c.Cases++
		b, n := summary(baseline, &baseline.Cases[i]), summary(current, &current.Cases[i])
		for k := range max(len(b), len(n)) {
			bl, nl := at(b, k), at(n, k)
			if bl != nl {
				drift("case %d: %s in the baseline, %s now", i, bl, nl)
			}
		}
	}
	if len(baseline.Probes) != len(current.Probes) {
		drift("%d probes in the baseline, %d now", len(baseline.Probes), len(current.Probes))
	}
	for i := range min(len(baseline.Probes), len(current.Probes)) {
		c.Probes++
		b, n := baseline.Probes[i], current.Probes[i]
		id := idOf(n.Settings)
		switch {
		case idOf(b.Settings) != id:
			drift("probe %d: %s in the baseline, %s now", i, idOf(b.Settings), id)
			continue
		case b.Pass != n.Pass:
			drift("probe %d (%s): pass %v in the baseline, %v now", i, id, b.Pass, n.Pass)
		}
		for r := range min(len(b.Observations), len(n.Observations), len(current.Requirements)) {
			bo, no := float64(b.Observations[r].Observed), float64(n.Observations[r].Observed)
			if !within(bo, no, tolerance) {
				drift("probe %d (%s): %s %s in the baseline, %s now%s", i, id, current.Requirements[r].Metric, formatNumber(bo), formatNumber(no), change(bo, no))
			}
		}
	}
	return c
}

// summary lists what a case's answer says, one comparable line each.
func summary(d *Document, c *CaseDoc) []string {
	r := c.Result
	out := []string{"status " + r.Status, fmt.Sprintf("monotone %v", r.Monotone)}
	end := func(name string, e *EndDoc) {
		if e == nil {
			return
		}
		var binding []string
		for _, b := range e.Binding {
			binding = append(binding, fmt.Sprintf("%d %s", b.Requirement, b.Combination))
		}
		out = append(out, fmt.Sprintf("%s %s bracket %s binding [%s]", name, e.Value, bracketText(e), strings.Join(binding, ", ")))
	}
	end("answer", r.Answer)
	if iv := r.Interval; iv != nil {
		end("low end", &iv.Low)
		end("high end", &iv.High)
	}
	end("closest", r.Closest)
	for _, st := range r.Stretches {
		out = append(out, "stretch "+st.Low.Value+" to "+st.High.Value)
	}
	for _, rx := range c.Relax {
		at := "none"
		if rx.At != nil {
			at = rx.At.Value
		}
		out = append(out, fmt.Sprintf("relax %d: at %s needs %s", rx.Requirement, at, formatNumber(float64(rx.Needs))))
	}
	if s := c.Sensitivity; s != nil {
		for _, k := range s.Keys {
			for _, v := range k.Values {
				a := "none"
				if v.Answer != nil {
					a = v.Answer.Value
				}
				out = append(out, fmt.Sprintf("alone %s=%s: %s", k.Key, v.Given.Value, a))
			}
		}
	}
	return out
}

func at(lines []string, k int) string {
	if k < len(lines) {
		return lines[k]
	}
	return "(nothing)"
}

// within reports whether now is within tolerance of base; two missing
// values agree.
func within(base, now, tolerance float64) bool {
	if math.IsNaN(base) || math.IsNaN(now) {
		return math.IsNaN(base) == math.IsNaN(now)
	}
	return math.Abs(now-base) <= tolerance*math.Abs(base)
}

func change(base, now float64) string {
	if math.IsNaN(base) || math.IsNaN(now) || base == 0 {
		return ""
	}
	return fmt.Sprintf(" (%+.2f%%)", 100*(now-base)/math.Abs(base))
}

// idOf names a probe by its settings: "admission.rate=420".
func idOf(av sweep.AxisValues) string {
	parts := make([]string, len(av))
	for i, v := range av {
		parts[i] = v.Path + "=" + v.Label
	}
	return strings.Join(parts, " ")
}
