package htmlreport

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"stormsim/check"
	"stormsim/config"
	"stormsim/plots"
	"stormsim/results"
	"stormsim/sim"
)

// RunFile is the document a run's page shows: result.json.
const RunFile = "result.json"

// RunPage is the page of a stormsim run: resultJSON is result.json as
// written. It holds the headline, the summary tables, the config's
// checks with PASS or FAIL, the charts, the config and the document.
func RunPage(resultJSON []byte) (*Page, error) {
	doc, err := check.ParseDocument(RunFile, resultJSON)
	if err != nil {
		return nil, err
	}
	file, err := scenarioFile(doc.Config)
	if err != nil {
		return nil, fmt.Errorf("%s: its config: %w", RunFile, err)
	}
	p := &Page{Kind: "run", Name: results.DisplayName(doc.Name), Headline: runHeadline(doc)}
	p.Facts = runFacts(doc)
	summary := Section{ID: "summary", Title: "summary", Text: horizonNotes(doc)}
	for i, t := range doc.Tables() {
		summary.Tables = append(summary.Tables, table(fmt.Sprintf("summary-%d", i+1), t))
	}
	p.Sections = append(p.Sections, summary)
	if len(file.Checks) > 0 {
		sec, verdict := runChecks(doc, file.Checks)
		p.Sections = append(p.Sections, sec)
		p.Verdict = verdict
	}
	charts, err := chartSection(plots.Charts([]plots.Run{ChartRun(doc, file.Scenario)}, chartOptions))
	if err != nil {
		return nil, err
	}
	p.Sections = append(p.Sections, charts)
	p.Config, err = configOf("config", doc.Config, doc.ConfigHash)
	if err != nil {
		return nil, err
	}
	p.Data = []Data{{ID: "data-result", File: RunFile, Body: resultJSON}}
	return p, nil
}

// scenarioFile decodes a config echo: the scenario and its checks.
func scenarioFile(echo []byte) (*config.ScenarioFile, error) {
	doc, err := config.ParseDocument("config", echo)
	if err != nil {
		return nil, err
	}
	return doc.ScenarioFile()
}

// configOf is a config echo as the page shows it: YAML with the
// defaults left out, which reads back as the echo the hash identifies.
func configOf(title string, echo []byte, hash string) (Config, error) {
	text, err := config.YAML(echo, config.YAMLOptions{Minimal: true})
	if err != nil {
		return Config{}, err
	}
	return Config{Title: title, Text: string(text), Hash: hash}, nil
}

// figure matches a cell that is a figure, right-aligned: a number with
// its unit or sign ("1,000", "4.522s", "+5.2%", "[180, 188]", "10/11
// pass", "0.25 ± 0.01"), not a sentence that holds one.
var figure = regexp.MustCompile(`^[-+\[(]?[0-9][0-9.,]*(\.[0-9]+)?(\s?(ms|s|µs|%|×|x|/s|k|M)?)?([ /±,\]][^ ]*){0,3}$`)

// table turns a results table into a page's: a column whose every cell
// is a figure (or "-") is right-aligned, the first column is a label.
func table(id string, t results.Table) Table {
	out := Table{ID: id, Caption: t.Title, Header: t.Header}
	numeric := make([]bool, len(t.Header))
	for j := 1; j < len(numeric); j++ {
		numeric[j] = true
		for _, row := range t.Rows {
			if j < len(row) && row[j] != "-" && row[j] != "" && !figure.MatchString(row[j]) {
				numeric[j] = false
			}
		}
	}
	for _, row := range t.Rows {
		cells := make([]Cell, len(row))
		for j, v := range row {
			cells[j] = Cell{Text: v}
			if j < len(numeric) && numeric[j] {
				cells[j].Class = "num"
			}
		}
		out.Rows = append(out.Rows, cells)
	}
	return out
}

func runFacts(doc *results.Document) []Fact {
	facts := []Fact{{"seed", fmt.Sprint(doc.Seed)}}
	if r := doc.Replications; r != nil {
		facts = append(facts, Fact{"replications", fmt.Sprint(r.Count)})
	}
	if len(doc.Results) > 0 {
		facts = append(facts, Fact{"clients", count(int64(doc.Results[0].Clients))})
	}
	return append(facts, Fact{"config", shortHash(doc.ConfigHash)}, Fact{"written by", doc.Tool})
}

func shortHash(h string) string { return h[:min(len(h), len("sha256:")+12)] }

// horizonNotes say which storms their horizon stopped before they ended.
func horizonNotes(doc *results.Document) []string {
	var out []string
	for _, r := range doc.Results {
		if o := r.OutcomeResult; o != nil && !o.Converged {
			out = append(out, fmt.Sprintf("%s stopped at its horizon, %s of simulated time, without converging (%s): %s of %s clients connected; its figures are those of a storm still going on.",
				r.Policy, seconds(o.HorizonMs), o.Outcome, count(o.Connected), count(int64(r.Clients))))
		}
	}
	return out
}

// runChecks evaluates the config's checks on the document, as stormsim
// check does: a check without results[LABEL] once per policy.
func runChecks(doc *results.Document, texts []string) (Section, string) {
	t := Table{ID: "checks-table", Header: []string{"check", "observed", "verdict"}}
	failed, total := 0, 0
	var labels []string
	for _, r := range doc.Results {
		labels = append(labels, r.Policy)
	}
	add := func(text, observed string, pass bool) {
		total++
		verdict := Cell{Text: "PASS", Class: "pass"}
		if !pass {
			failed++
			verdict = Cell{Text: "FAIL", Class: "fail"}
		}
		t.Rows = append(t.Rows, []Cell{{Text: text}, {Text: observed, Class: "num"}, verdict})
	}
	for _, text := range texts {
		c, err := check.Parse(text)
		if err != nil {
			add(text, "not a check: "+err.Error(), false)
			continue
		}
		each := []check.Check{c}
		if c.Metric.Policy == "" {
			each = nil
			for _, l := range labels {
				each = append(each, c.ForPolicy(l))
			}
		} else if !slices.Contains(labels, c.Metric.Policy) {
			add(text, "no policy labelled "+c.Metric.Policy, false)
			continue
		}
		for _, pc := range each {
			o := pc.Eval(doc)
			observed := "no data"
			switch {
			case o.HasData && results.TimeUnit(pc.Metric.Field) == "ms":
				observed = seconds(o.Observed)
			case o.HasData:
				observed = strconv.FormatFloat(o.Observed, 'f', -1, 64)
			case o.Why != "":
				observed = "no data: " + o.Why
			}
			add(pc.Metric.String()+" "+pc.Op+" "+boundOf(text, pc.Op), observed, o.Pass())
		}
	}
	verdict := "PASS"
	if failed > 0 {
		verdict = "FAIL"
	}
	sec := Section{ID: "checks", Title: "checks", Tables: []Table{t},
		Text: []string{fmt.Sprintf("%d of %d checks pass (the config's checks:, as stormsim check evaluates them).", total-failed, total)}}
	return sec, verdict
}

// boundOf is what follows op in a check as written: "6s" of "x < 6s".
func boundOf(text, op string) string {
	if i := strings.Index(text, op); i >= 0 {
		return strings.TrimSpace(text[i+len(op):])
	}
	return text
}

// runHeadline is a run's outcome in a planner's words: who gets everyone
// back soonest, and at what cost beside the slowest; or that the storm
// never ends.
func runHeadline(doc *results.Document) string {
	var ended, open []*sim.Result
	for i := range doc.Results {
		r := &doc.Results[i]
		if _, ok := r.Convergence(); ok && (r.OutcomeResult == nil || r.Converged) {
			ended = append(ended, r)
		} else {
			open = append(open, r)
		}
	}
	if len(ended) == 0 {
		if len(open) == 0 {
			return "No storm ran."
		}
		return neverEnds(open[0])
	}
	conv := func(r *sim.Result) float64 { ms, _ := r.Convergence(); return ms }
	slices.SortStableFunc(ended, func(a, b *sim.Result) int { return cmp.Compare(conv(a), conv(b)) })
	best := ended[0]
	head := fmt.Sprintf("%s: %s in %s", best.Policy, back(best), seconds(conv(best)))
	switch {
	case len(open) > 0:
		return head + "; " + neverEnds(open[0])
	case len(ended) == 1:
		return head + fmt.Sprintf(", with %s attempts from %s clients.", count(best.Attempts), count(int64(best.Clients)))
	}
	worst := ended[len(ended)-1]
	return head + fmt.Sprintf(", %s attempts than %s (%s attempts, %s).",
		times(float64(best.Attempts), float64(worst.Attempts)), worst.Policy, count(worst.Attempts), seconds(conv(worst)))
}

// back is what "converged" means for r: everyone back, or everyone back
// or given up.
func back(r *sim.Result) string {
	if r.Abandoned > 0 {
		return fmt.Sprintf("everyone back or given up (%s gave up)", count(r.Abandoned))
	}
	return "everyone back"
}

// neverEnds says how a storm that did not converge stood at its horizon.
func neverEnds(r *sim.Result) string {
	o := r.OutcomeResult
	if o == nil {
		return fmt.Sprintf("%s: the storm did not converge.", r.Policy)
	}
	what := "the storm never ends (metastable)"
	if !o.Metastable {
		what = fmt.Sprintf("the storm had not ended by its horizon (%s)", o.Outcome)
	}
	s := fmt.Sprintf("%s: %s: %s of %s clients back after %s", r.Policy, what, count(o.Connected), count(int64(r.Clients)), seconds(o.HorizonMs))
	if o.Wasted > 0 {
		s += fmt.Sprintf(", %s of route claims wasted on clients that had left", percent(float64(o.Wasted)/float64(o.Wasted+o.Connected)))
	}
	return s + "."
}
