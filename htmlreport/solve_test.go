package htmlreport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"stormsim/solve"
)

// shippedSolves are the shipped solve configs' goldens (solve.json as
// stormsim check solves them): between them an infeasible answer with
// what to relax, given keys with their sensitivity, and a frontier.
var shippedSolves = []string{"solve-seed-window", "solve-seed-window-guesses", "solve-metastable-boundary"}

func readGolden(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "golden", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestSolvePageStructure compares the structure of the shipped solves'
// pages with testdata/solve.structure.golden (refresh with go test
// ./htmlreport -update and review the diff), and pins what each must
// say, read off its solve.json by hand: the seed window is infeasible
// (FAIL), fails the window at 50 and the budget at 5000, and has both
// relaxations; the guesses' answer 557 binds with a 30 s cap under
// least_connections, and a 5 s cap alone moves it to 448.9, 557 - 448.9
// = 108.1 lower; the boundary has a frontier chart and one answer row
// per client count.
func TestSolvePageStructure(t *testing.T) {
	var all strings.Builder
	pages := map[string]string{}
	for _, name := range shippedSolves {
		data := readGolden(t, name)
		p, err := SolvePage(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		s := structure(p)
		pages[name] = s
		all.WriteString(s + "\n")
		d, err := solve.ParseDocument(name, data)
		if err != nil {
			t.Fatal(err)
		}
		// Every probe is a row, every failing observation marked.
		var probes *Table
		for _, sec := range p.Sections {
			for i := range sec.Tables {
				if sec.Tables[i].ID == "probes-table" {
					probes = &sec.Tables[i]
				}
			}
		}
		if probes == nil || len(probes.Rows) != len(d.Probes) {
			t.Fatalf("%s: the probe table has %v rows, the solve %d probes", name, probes, len(d.Probes))
		}
		for i, pr := range d.Probes {
			row := probes.Rows[i]
			obs := row[len(row)-len(d.Requirements):]
			for r, o := range pr.Observations {
				if marked := strings.Contains(obs[r].Class, "marked"); marked == o.Pass {
					t.Errorf("%s: probe %d, requirement %d: pass %v, marked %v", name, i, r, o.Pass, marked)
				}
			}
			if verdict := row[len(row)-len(d.Requirements)-1].Text; verdict != map[bool]string{true: "PASS", false: "FAIL"}[pr.Pass] {
				t.Errorf("%s: probe %d reads %s, pass %v", name, i, verdict, pr.Pass)
			}
		}
		if len(p.Data) != 1 || string(p.Data[0].Body) != string(data) || p.Data[0].File != "solve.json" {
			t.Errorf("%s: the page does not embed solve.json as written", name)
		}
	}
	for name, wants := range map[string][]string{
		"solve-seed-window": {
			"verdict FAIL", "headline No admission.rate in [50, 5000] meets every requirement.",
			"INFEASIBLE {fail}", "at 50 fails p95(results[full].convergence_ms) <= 60s; at 5000 fails max(results[full].database.peak_rows_per_s) <= 25,000",
			"section #relax", "p95(results[full].convergence_ms) <= 60s | <= 161.881s {num} | +170% {num} | 177.7 {num}",
			"max(results[full].database.peak_rows_per_s) <= 25,000 | <= 56,500 {num} | +126% {num} | 552 {num}",
			"chart #chart-requirements", "admission.rate >= 415 {num} | (clients / survivors - burst) / window",
		},
		"solve-seed-window-guesses": {
			"verdict PASS", "headline The least admission.rate that meets every requirement is 557 (bracket [547, 557]); it binds on p95(results[full].convergence_ms) <= 60s with policies[0].cap=30s gateways.balancer=least_connections.",
			"section #sensitivity", "policies[0].cap | 5s | 448.9 {num} | -108.1 {num}", "policies[0].cap | spread | 108.1 {num}",
			"gateways.balancer | random | 537 {num} | -20 {num}",
			"probe | policies[0].cap | gateways.balancer | admission.rate | verdict",
		},
		"solve-metastable-boundary": {
			"verdict PASS", "fact across: clients (4 values)", "chart #chart-frontier",
			"25000 | ANSWER {pass} | 252 {num} | [243, 252] {num}", "200000 | ANSWER {pass} | 2034 {num} | [1962, 2034] {num}",
		},
	} {
		for _, want := range wants {
			if !strings.Contains(pages[name], want) {
				t.Errorf("%s: the page lacks %q", name, want)
			}
		}
	}
	if strings.Contains(pages["solve-seed-window"], "#sensitivity") || strings.Contains(pages["solve-metastable-boundary"], "#relax") {
		t.Error("a section shown without its content")
	}
	golden := filepath.Join("testdata", "solve.structure.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(all.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if all.String() != string(want) {
		t.Errorf("the pages' structure differs from %s (rerun with -update if intended):\n%s", golden, all.String())
	}
}

// TestSolvePageOfANonMonotoneSolve: a solve whose verdict changes side
// twice says so on its page, with the stretches a grid found. The
// seed model with full jitter and one seed is not monotone in the cap
// (solve's TestNonMonotoneOfTheSeedModel): the window fails at 1.6 s
// between two passes.
func TestSolvePageOfANonMonotoneSolve(t *testing.T) {
	model, _ := filepath.Abs("../configs/seed-backoff-model.yaml")
	path := filepath.Join(t.TempDir(), "s.yaml")
	os.WriteFile(path, []byte("name: wiggle\nbase: "+model+`
replications: 1
vary: {key: "policies[1].cap", min: 1200ms, max: 2800ms, goal: most, resolution: 10ms}
require:
  - results[full].convergence_ms <= 3.3s
  - results[full].attempts <= 5130
`), 0o644)
	p, err := solve.Load(path, solve.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, _, err := p.Run(solve.RunOptions{Dir: dir, NoCharts: true}); err != nil {
		t.Fatal(err)
	}
	page, err := FromDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := structure(page)
	for _, want := range []string{"kind solve", "NOT MONOTONE: results[full].convergence_ms <= 3.3s passes at policies[1].cap = ", " but fails at 1.6s",
		"Scanned on a grid of 16 values: every requirement holds in ["} {
		if !strings.Contains(s, want) {
			t.Errorf("the page lacks %q:\n%s", want, s)
		}
	}
}
