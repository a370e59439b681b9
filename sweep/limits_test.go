package sweep

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"stormsim/plots"
	"stormsim/results"
	"stormsim/runner"
)

// checked is small with checks: one on a statistic over replications, one
// on the first replication of one policy.
const checked = `name: checked
replications: 2
scenario:
  name: checked
  seed: 7
  clients: 20
  admission: {kind: slots, slot: 10ms, per_slot: 4}
  policies:
    - {name: full, base: 50ms, cap: 400ms}
    - {name: equal, base: 50ms, cap: 400ms}
  checks:
    - max(convergence_ms) <= 150ms
    - results[equal].attempts < 45
axes:
  admission.per_slot: [2, 4, 8]
  policies[0].base: {from: 25ms, to: 100ms, steps: 2}
metrics:
  - max(convergence_ms)
  - attempts
`

// TestPointsAreHeldToTheBaseChecks: the points a sweep marks as failing
// a check are those where stormsim check, run on that point's storms as
// a document, fails it: the oracle is check.Eval on a document the
// runner builds directly.
func TestPointsAreHeldToTheBaseChecks(t *testing.T) {
	p := plan(t, checked, 0)
	if len(p.Checks) != 2 || p.Manifest().Checks[1] != "results[equal].attempts < 45" {
		t.Fatalf("checks %v, manifest %v", p.Checks, p.Manifest().Checks)
	}
	dir := t.TempDir()
	mustRun(t, p, Options{Dir: dir, NoCharts: true})
	res, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	meeting, sawFail, sawPass := 0, false, false
	for i, pr := range res.Points {
		pt, err := p.Point(i)
		if err != nil {
			t.Fatal(err)
		}
		doc := results.New(pt.Scenario, pt.ConfigHash, nil)
		if err := runner.Build(doc, pt.Scenario, pt.Scenario.Policies, runner.Options{Workers: 1}); err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, c := range p.Checks {
			for _, label := range p.Labels {
				if c.Metric.Policy != "" && c.Metric.Policy != label {
					continue
				}
				if !c.ForPolicy(label).Eval(doc).Pass() {
					text := c.Text
					if c.Metric.Policy == "" {
						text += " (" + label + ")"
					}
					want = append(want, text)
				}
			}
		}
		var got []string
		for _, f := range pr.Failing {
			got = append(got, f.String())
		}
		if !slices.Equal(got, want) {
			t.Errorf("point %d (%s): failing %q, check says %q", i, pt.ID, got, want)
		}
		if len(want) == 0 {
			meeting++
		}
		sawFail, sawPass = sawFail || len(want) > 0, sawPass || len(want) == 0
	}
	if res.Meeting != meeting || !sawFail || !sawPass {
		t.Errorf("meeting %d, want %d (a grid with both passing and failing points: %v %v)", res.Meeting, meeting, sawPass, sawFail)
	}
	charts, err := res.Charts(plots.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(charts) == 0 || !strings.Contains(charts[0].Title, "points meet max(convergence_ms) <= 150ms") {
		t.Errorf("first chart's title %q does not count the points meeting its check", charts[0].Title)
	}
}

// TestACheckOnAMetricNotSweptIsRefused: a sweep keeps only its metrics,
// so a check on another cannot be held: refused at its line.
func TestACheckOnAMetricNotSweptIsRefused(t *testing.T) {
	yaml := strings.Replace(checked, "  - attempts\n", "", 1)
	dir := t.TempDir()
	path := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path, 0)
	if err == nil || !strings.Contains(err.Error(), "s.yaml:13") || !strings.Contains(err.Error(), "add attempts to metrics") {
		t.Errorf("err = %v, want one at s.yaml:13 asking for attempts in metrics", err)
	}
}
