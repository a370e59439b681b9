package htmlreport

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"stormsim/calibrate/report"
	"stormsim/results"
)

// CalibrationFile is the document that marks a calibration's directory.
const CalibrationFile = "calibration.json"

// calibratedFile is the scenario a calibration fitted, beside it.
const calibratedFile = "calibrated.yaml"

func calibrationFromDir(dir string) (*Page, error) {
	data, err := os.ReadFile(filepath.Join(dir, CalibrationFile))
	if err != nil {
		return nil, err
	}
	calibrated, err := os.ReadFile(filepath.Join(dir, calibratedFile))
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	return CalibrationPage(data, calibrated)
}

// CalibrationPage is the page of a calibration: reportJSON is
// calibration.json as written, calibratedYAML calibrated.yaml (nil when
// the runs could not be fitted). It holds the verdict, the agreement of
// each model with the real runs, the runs with the machine's load, the
// lab checks, the fit, each model metric by metric and window by window,
// the charts, the config and the document.
func CalibrationPage(reportJSON, calibratedYAML []byte) (*Page, error) {
	var version struct {
		SchemaVersion int `json:"schema_version"`
	}
	if err := json.Unmarshal(reportJSON, &version); err != nil {
		return nil, fmt.Errorf("not a calibration document: %w", err)
	}
	if version.SchemaVersion != report.SchemaVersion {
		return nil, fmt.Errorf("schema_version %d, this stormsim reads %d", version.SchemaVersion, report.SchemaVersion)
	}
	var rep report.Report
	if err := json.Unmarshal(reportJSON, &rep); err != nil {
		return nil, fmt.Errorf("not a calibration document: %w", err)
	}
	p := &Page{Kind: "calibration", Name: results.DisplayName(rep.Name), Headline: calibrationHeadline(&rep), Verdict: "PASS"}
	if len(rep.Failures()) > 0 {
		p.Verdict = "FAIL"
	}
	clients := count(int64(rep.Clients))
	if z := rep.Sized; z != nil {
		clients += fmt.Sprintf(" (sized to the machine; the config wrote %s)", count(int64(z.WrittenClients)))
	}
	p.Facts = []Fact{{"clients", clients}, {"policy", rep.Policy}, {"real runs", fmt.Sprint(len(rep.Real))},
		{"replications per model", fmt.Sprint(replicationsOf(&rep))}, {"seed", fmt.Sprint(rep.Seed)},
		{"machine", loadFact(&rep)}, {"database", rep.Database}, {"config", shortHash(rep.ConfigHash)}, {"written by", rep.Tool}}
	tables := rep.Tables()
	byTitle := func(prefix string) []Table {
		var out []Table
		for i, t := range tables {
			if strings.HasPrefix(t.Title, prefix) {
				out = append(out, verdictTable(fmt.Sprintf("table-%d", i+1), t))
			}
		}
		return out
	}
	agreement := Section{ID: "agreement", Title: "agreement", Tables: append(byTitle("models compared"), byTitle("agreement")...),
		Text: []string{"Real against each model. The checked models (fitted run by run: predicted, calibrated) decide the verdict; pooled (calibrated.yaml, one set of sections) and uncalibrated (the config as written) are shown beside them."}}
	if f := rep.Failures(); len(f) > 0 {
		agreement.Text = append(agreement.Text, "Why it does not pass: "+strings.Join(f, "; ")+".")
	}
	if rep.FitError != "" {
		agreement.Text = append(agreement.Text, "Not fitted on these runs: "+rep.FitError+".")
	}
	if rep.Error != "" {
		agreement.Text = append(agreement.Text, "The calibration failed after the real runs were measured: "+rep.Error+".")
	}
	runs := Section{ID: "runs", Title: "real runs and the machine", Tables: append(byTitle("runs"), byTitle("lab checks")...)}
	if z := rep.Sized; z != nil {
		runs.Text = append(runs.Text, strings.ToUpper(z.Line()[:1])+z.Line()[1:]+".")
	}
	p.Sections = append(p.Sections, agreement, runs)
	if fitted := byTitle("fit on"); len(fitted) > 0 {
		p.Sections = append(p.Sections, Section{ID: "fit", Title: "fit", Tables: fitted})
	}
	var models []Table
	for _, sm := range rep.Simulations {
		models = append(models, byTitle(string(sm.Role)+" model")...)
	}
	p.Sections = append(p.Sections, Section{ID: "models", Title: "models metric by metric", Tables: models})
	charts, err := chartSection(rep.Charts(chartOptions))
	if err != nil {
		return nil, err
	}
	p.Sections = append(p.Sections, charts)
	if len(calibratedYAML) > 0 {
		p.Sections = append(p.Sections, Section{ID: "calibrated", Title: "calibrated scenario",
			Text: []string{calibratedFile + ", beside this page: the pooled fit, a config stormsim run and sweep take as it is."},
			Code: string(calibratedYAML)})
	}
	p.Config = Config{Title: "config", Hash: rep.ConfigHash}
	if len(rep.Config) > 0 {
		if p.Config, err = configOf("config", rep.Config, rep.ConfigHash); err != nil {
			return nil, err
		}
	}
	p.Data = []Data{{ID: "data-calibration", File: CalibrationFile, Body: reportJSON}}
	return p, nil
}

// verdictTable is a report table whose verdict cells read as verdicts.
func verdictTable(id string, t results.Table) Table {
	out := table(id, t)
	for _, row := range out.Rows {
		for i := range row {
			switch row[i].Text {
			case "pass", "yes", "checked":
				if row[i].Text != "checked" {
					row[i].Class = "pass"
				}
			case "FAIL", "NO", "DISTURBED":
				row[i].Class = "fail"
			}
		}
	}
	return out
}

func replicationsOf(rep *report.Report) int {
	if len(rep.Simulations) == 0 {
		return 0
	}
	return rep.Simulations[0].Replications
}

// loadFact is the machine's load over the real runs, in one line.
func loadFact(rep *report.Report) string {
	lo, hi, other, disturbed := 0.0, 0.0, 0.0, 0
	for i, run := range rep.Real {
		l := run.Load
		if i == 0 || l.Average1m < lo {
			lo = l.Average1m
		}
		hi = max(hi, l.Average1m)
		other = max(other, l.OtherBeforeCores, l.OtherDuringCores)
		if l.Disturbed {
			disturbed++
		}
	}
	s := fmt.Sprintf("load %.2f", lo)
	if hi > lo {
		s = fmt.Sprintf("load %.2f-%.2f", lo, hi)
	}
	s += fmt.Sprintf(", other work ≤ %.2f cores", other)
	if disturbed > 0 {
		s += fmt.Sprintf(", %d run%s disturbed", disturbed, map[bool]string{true: "", false: "s"}[disturbed == 1])
	}
	return s
}

// calibrationHeadline is the verdict in a planner's words: whether the
// checked model agrees with the real runs, by how much, and why not.
func calibrationHeadline(rep *report.Report) string {
	var sm *report.Simulation
	for i := range rep.Simulations {
		if rep.Simulations[i].Role.Checked() {
			sm = &rep.Simulations[i]
			break
		}
	}
	if sm == nil {
		if rep.FitError != "" {
			return "The real runs could not be fitted: " + rep.FitError + "."
		}
		return "No model was checked against the real runs."
	}
	agrees := true
	for _, a := range rep.Agreement {
		if a.Model == string(sm.Role) && !a.Pass {
			agrees = false
		}
	}
	runs := fmt.Sprintf("%d real runs", len(rep.Real))
	if len(rep.Real) == 1 {
		runs = "the real run"
	}
	verb := "agrees with"
	if !agrees {
		verb = "misses"
	}
	var parts []string
	for _, m := range sm.Metrics {
		switch m.Metric {
		case "attempts", "convergence_ms", "useful_per_s", "wasted_per_s":
			if m.RelError != nil {
				parts = append(parts, fmt.Sprintf("%s %+.1f%%", metricWords[m.Metric], 100**m.RelError))
			}
		}
	}
	for _, c := range sm.Series {
		if c.Series == "attempts" && c.Pass != nil {
			parts = append(parts, fmt.Sprintf("%d of %d windows of attempts inside its spread", c.WindowsInsideEnvelope, c.Windows))
		}
	}
	s := fmt.Sprintf("The %s model %s %s", sm.Role, verb, runs)
	if len(parts) > 0 {
		s += ": " + strings.Join(parts, ", ")
	}
	s += "."
	if d := rep.Disturbed(); len(d) > 0 {
		s += " Other work disturbed the runs: measure again on a quiet machine."
	}
	return s
}

// metricWords name the metrics of a calibration's headline.
var metricWords = map[string]string{
	"attempts":       "attempts",
	"convergence_ms": "time to all reconnected",
	"useful_per_s":   "useful claims/s",
	"wasted_per_s":   "wasted claims/s",
}
