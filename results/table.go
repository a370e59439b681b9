package results

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"stormsim/internal/human"
	"stormsim/internal/safetext"
)

// Table is one block of a result's summary, as the terminal and the
// report show it: a title ("" for none), a header and rows of cells, the
// first column a label (a policy) and the others figures.
type Table struct {
	Title  string
	Header []string
	Rows   [][]string
}

// Tables are d's summary blocks: one row per policy with its counts, the
// peak attempts in one metrics window, the time of the last connect and
// the connect-time median and 99th percentile (and how a storm with an
// outcome ended); what the failure and load models measured, when one is
// on; and, over replications, the means with their confidence intervals.
func (d *Document) Tables() []Table {
	out := []Table{d.resultsTable()}
	if t, ok := d.modelsTable(); ok {
		out = append(out, t)
	}
	if t, ok := d.replicationsTable(); ok {
		out = append(out, t)
	}
	return out
}

// WriteTable writes a summary of d: a title line, then the results table
// and the models table (see Tables). Numbers are right-aligned so rows
// compare at a glance.
func (d *Document) WriteTable(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "%s (seed %d, config %s)\n", DisplayName(d.Name), d.Seed, shortHash(d.ConfigHash)); err != nil {
		return err
	}
	if err := writeAligned(w, d.resultsTable()); err != nil {
		return err
	}
	if t, ok := d.modelsTable(); ok {
		fmt.Fprintln(w)
		return writeAligned(w, t)
	}
	return nil
}

// resultsTable is the main block: a row per policy.
func (d *Document) resultsTable() Table {
	header := []string{"policy", "attempts", "accepted", "rejected", "abandoned", "peak/" + d.windowLabel(), "last connect", "connect p50", "connect p99"}
	outcomes := d.hasOutcomes()
	if outcomes {
		header = append(header, "outcome", "connected", "timed out", "wasted", "shed", "skipped")
	}
	t := Table{Header: header}
	for _, r := range d.Results {
		last := "-" // did not converge
		if ms, ok := r.Convergence(); ok {
			last = human.Millis(ms)
		}
		p50, p99 := "-", "-" // nobody connected
		if r.OutcomeResult == nil || r.Connected > 0 {
			p50, p99 = human.Millis(r.ConnectMs.P50), human.Millis(r.ConnectMs.P99)
		}
		cells := []string{r.Policy, human.Count(r.Attempts), human.Count(r.Accepted), human.Count(r.Rejected), human.Count(r.Abandoned),
			human.Count(r.PeakAttemptsPerWindow), last, p50, p99}
		if o := r.OutcomeResult; o != nil {
			cells = append(cells, string(o.Outcome), human.Count(o.Connected), human.Count(o.TimedOut), human.Count(o.Wasted),
				human.Count(o.Shed), human.Count(o.Skipped))
		} else if outcomes {
			cells = append(cells, "-", "-", "-", "-", "-", "-")
		}
		t.Rows = append(t.Rows, cells)
	}
	return t
}

// writeAligned prints t's header and rows with its figures right-aligned
// and its first column (terminal-safe) left-aligned.
func writeAligned(w io.Writer, t Table) error {
	tw := tabwriter.NewWriter(w, 0, 0, 0, ' ', tabwriter.AlignRight)
	width := 0
	for _, row := range append([][]string{t.Header}, t.Rows...) {
		width = max(width, utf8.RuneCountInString(safetext.Terminal(row[0])))
	}
	for _, row := range append([][]string{t.Header}, t.Rows...) {
		// AlignRight right-aligns every column: padding the first column
		// to one width keeps it left-aligned, and the gap between columns
		// is part of each later cell.
		cells := slices.Clone(row)
		cells[0] = fmt.Sprintf("%-*s", width, safetext.Terminal(cells[0]))
		fmt.Fprintln(tw, strings.Join(cells, "\t  ")+"\t")
	}
	return tw.Flush()
}

// hasOutcomes reports whether any result says how its storm ended (a
// horizon, timeouts or shedding were modelled).
func (d *Document) hasOutcomes() bool {
	for _, r := range d.Results {
		if r.OutcomeResult != nil {
			return true
		}
	}
	return false
}

// windowLabel is the metrics window shared by all results ("10ms"), or
// "window" if they differ.
func (d *Document) windowLabel() string {
	if len(d.Results) == 0 {
		return "window"
	}
	w := d.Results[0].WindowMs
	for _, r := range d.Results {
		if r.WindowMs != w {
			return "window"
		}
	}
	return human.Millis(w)
}

// DisplayName is a scenario name as a terminal shows it: control
// characters escaped, and "unnamed scenario" for none.
func DisplayName(name string) string {
	if name == "" {
		return "unnamed scenario"
	}
	return safetext.Terminal(name)
}

func shortHash(h string) string {
	if len(h) > len("sha256:")+12 {
		return h[:len("sha256:")+12]
	}
	return h
}
