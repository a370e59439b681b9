package results

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"stormsim/internal/human"
	"stormsim/internal/safetext"
)

// WriteTable writes a summary of d: a title line, then one row per policy
// with its counts, the peak attempts in one metrics window, the time of the
// last connect and the connect-time median and 99th percentile. Numbers
// are right-aligned so rows compare at a glance.
func (d *Document) WriteTable(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "%s (seed %d, config %s)\n", DisplayName(d.Name), d.Seed, shortHash(d.ConfigHash)); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 0, ' ', tabwriter.AlignRight)
	policyWidth := len("policy")
	for _, r := range d.Results {
		policyWidth = max(policyWidth, utf8.RuneCountInString(safetext.Terminal(r.Policy)))
	}
	row := func(cells ...string) {
		// AlignRight right-aligns every column: padding the policy names
		// to one width keeps the first column left-aligned, and the gap
		// between columns is part of each later cell.
		cells[0] = fmt.Sprintf("%-*s", policyWidth, safetext.Terminal(cells[0]))
		fmt.Fprintln(tw, strings.Join(cells, "\t  ")+"\t")
	}
	header := []string{"policy", "attempts", "accepted", "rejected", "abandoned", "peak/" + d.windowLabel(), "last connect", "connect p50", "connect p99"}
	outcomes := d.hasOutcomes()
	if outcomes {
		header = append(header, "outcome", "connected", "timed out", "wasted", "shed", "skipped", "waiting")
	}
	row(header...)
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
				human.Count(o.Shed), human.Count(o.Skipped), human.Count(o.Waiting))
		} else if outcomes {
			cells = append(cells, "-", "-", "-", "-", "-", "-", "-")
		}
		row(cells...)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return d.writeModelsTable(w)
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
