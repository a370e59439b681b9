package results

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"stormsim/internal/suggest"
	"stormsim/policies"
	"stormsim/sim"
)

// MetricRef names a metric of a result document:
//
//	results[LABEL].FIELD        the value in the policy's result (the first
//	                            replication's, i.e. the scenario's own seed)
//	STAT(results[LABEL].FIELD)  a statistic over all replications
//
// where FIELD is a path from ResultFieldNames with indexes filled in
// ("connect_ms.p99", "gateways[0].accepted") and STAT one of Stats. Sweep
// files may leave out "results[LABEL]." to mean every policy.
type MetricRef struct {
	Stat   string // "" for the value itself, else one of Stats
	Policy string // policy label; "" means every policy (sweeps only)
	Field  string // path inside one result
}

// Stats are the statistics over replications a MetricRef can ask for, as
// computed by Summarize.
var Stats = []string{"mean", "std", "p50", "p95", "p99", "min", "max", "ci95_lo", "ci95_hi"}

// ParseMetricRef parses a metric name as written in a check or a sweep
// file. It checks the syntax only; Catalog.Check checks that it exists.
func ParseMetricRef(s string) (MetricRef, error) {
	var m MetricRef
	text := strings.TrimSpace(s)
	if open := strings.IndexByte(text, '('); open >= 0 {
		if !strings.HasSuffix(text, ")") {
			return m, fmt.Errorf("metric %q: missing ) after %s(", s, text[:open])
		}
		m.Stat = strings.TrimSpace(text[:open])
		if !slices.Contains(Stats, m.Stat) {
			return m, fmt.Errorf("metric %q: unknown statistic %q (want one of %s)", s, m.Stat, strings.Join(Stats, ", "))
		}
		text = strings.TrimSpace(text[open+1 : len(text)-1])
	}
	if rest, ok := strings.CutPrefix(text, "results["); ok {
		label, field, ok := strings.Cut(rest, "].")
		if !ok || label == "" {
			return m, fmt.Errorf("metric %q: want results[LABEL].FIELD, e.g. results[full].convergence_ms", s)
		}
		m.Policy, text = label, field
	}
	if text == "" || strings.ContainsAny(text, " \t()") {
		return m, fmt.Errorf("metric %q: want a field path such as convergence_ms or connect_ms.p99", s)
	}
	m.Field = text
	return m, nil
}

// String writes m as ParseMetricRef reads it.
func (m MetricRef) String() string {
	s := m.Field
	if m.Policy != "" {
		s = "results[" + m.Policy + "]." + s
	}
	if m.Stat != "" {
		s = m.Stat + "(" + s + ")"
	}
	return s
}

// Catalog is the set of metric names one scenario's runs can produce:
// its policy labels crossed with ResultFieldNames.
type Catalog struct {
	Labels       []string // policy labels in config order
	Replications int      // runs per policy; statistics need >= 2
}

// NewCatalog is the catalog of resolved scenario s run with the policies
// specs (all of s's, or those a --policy filter selects).
func NewCatalog(s *sim.Scenario, specs []policies.Spec) Catalog {
	c := Catalog{Replications: s.Replications}
	for _, p := range specs {
		c.Labels = append(c.Labels, p.Label)
	}
	return c
}

// Check reports whether m can name a metric of the catalog's runs, with a
// suggestion of the closest valid name when it cannot.
func (c Catalog) Check(m MetricRef) error {
	fieldOK := slices.Contains(ResultFieldNames(), Pattern(m.Field))
	labelOK := m.Policy == "" || slices.Contains(c.Labels, m.Policy)
	if !fieldOK || !labelOK {
		problem := "unknown metric"
		if fieldOK {
			problem = "no policy labelled " + m.Policy + " (the config has " + strings.Join(c.Labels, ", ") + ")"
		}
		if best := c.closest(m); best != "" {
			return fmt.Errorf("%s: %s; did you mean %s?", m, problem, best)
		}
		return fmt.Errorf("%s: %s", m, problem)
	}
	if m.Stat != "" && c.Replications < 2 {
		plain := m
		plain.Stat = ""
		return fmt.Errorf("%s: statistics over replications need replications >= 2 (got %d); use %s", m, c.Replications, plain)
	}
	return nil
}

// closest is the valid name nearest to m in edit distance, written with
// index 0 where the name has a list.
func (c Catalog) closest(m MetricRef) string {
	want := m.String()
	best, bestDist := "", -1
	labels := c.Labels
	if m.Policy == "" {
		labels = []string{""}
	}
	for _, label := range labels {
		for _, f := range ResultFieldNames() {
			cand := MetricRef{Stat: m.Stat, Policy: label, Field: strings.ReplaceAll(f, "[]", "[0]")}.String()
			if d := suggest.Distance(want, cand); bestDist < 0 || d < bestDist {
				best, bestDist = cand, d
			}
		}
	}
	if bestDist > max(3, len(want)/3) {
		return ""
	}
	return best
}

// TimeUnit is the time unit of a metric field, from the nearest part of
// its path that names one: "ms" for _ms, "s" for _seconds, "" for a count
// or a rate (_per_s).
func TimeUnit(field string) string {
	parts := strings.Split(Pattern(field), ".")
	for i := len(parts) - 1; i >= 0; i-- {
		p := strings.TrimSuffix(parts[i], "[]")
		switch {
		case strings.HasSuffix(p, "_per_s"):
			return ""
		case strings.HasSuffix(p, "_ms"):
			return "ms"
		case strings.HasSuffix(p, "_seconds"):
			return "s"
		}
	}
	return ""
}

// sectionModels names, for each result section that a model produces,
// the scenario keys that turn it on (any of them).
var sectionModels = map[string][]string{
	"detection": {"detection"},
	"reclaim":   {"lease"},
	"drain":     {"then_drain", "failure"},
	"deploy":    {"deploy"},
	"database":  {"database"},
	"gateways":  {"gateways"},
}

// ModelKeys are the scenario keys of the models that produce field's
// section ("reclaim.reclaim_ms" needs lease:); nil for a field every run
// has.
func ModelKeys(field string) []string {
	section, _, _ := strings.Cut(Pattern(field), ".")
	return sectionModels[strings.TrimSuffix(section, "[]")]
}

// ModelsOn lists the top-level scenario keys of s whose optional section
// is set (a model that is on): "lease", "network", ...
func ModelsOn(s *sim.Scenario) []string {
	var on []string
	v := reflect.ValueOf(s).Elem()
	for i := range v.NumField() {
		f := v.Type().Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if f.Type.Kind() == reflect.Pointer && key != "" && !v.Field(i).IsNil() {
			on = append(on, key)
		}
	}
	return on
}
