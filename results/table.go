package results

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteTable writes a summary of d: a title line, then one row per policy
// with its counts, the peak attempts in one metrics window, the time of the
// last connect and the connect-time median and 99th percentile. Numbers
// are right-aligned so rows compare at a glance.
func (d *Document) WriteTable(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "%s (seed %d, config %s)\n", d.Name, d.Seed, shortHash(d.ConfigHash)); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 0, ' ', tabwriter.AlignRight)
	policyWidth := len("policy")
	for _, r := range d.Results {
		policyWidth = max(policyWidth, len(r.Policy))
	}
	row := func(cells ...string) {
		// AlignRight right-aligns every column: padding the policy names
		// to one width keeps the first column left-aligned, and the gap
		// between columns is part of each later cell.
		cells[0] = fmt.Sprintf("%-*s", policyWidth, cells[0])
		fmt.Fprintln(tw, strings.Join(cells, "\t  ")+"\t")
	}
	header := []string{"policy", "attempts", "accepted", "rejected", "abandoned", "peak/" + d.windowLabel(), "last connect", "connect p50", "connect p99"}
	outcomes := d.hasOutcomes()
	if outcomes {
		header = append(header, "outcome", "connected", "timed out", "wasted", "shed", "skipped")
	}
	row(header...)
	for _, r := range d.Results {
		last := "-" // did not converge
		if ms, ok := r.Convergence(); ok {
			last = millis(ms)
		}
		p50, p99 := "-", "-" // nobody connected
		if r.OutcomeResult == nil || r.Connected > 0 {
			p50, p99 = millis(r.ConnectMs.P50), millis(r.ConnectMs.P99)
		}
		cells := []string{r.Policy, thousands(r.Attempts), thousands(r.Accepted), thousands(r.Rejected), thousands(r.Abandoned),
			thousands(r.PeakAttemptsPerWindow), last, p50, p99}
		if o := r.OutcomeResult; o != nil {
			cells = append(cells, string(o.Outcome), thousands(o.Connected), thousands(o.TimedOut), thousands(o.Wasted),
				thousands(o.Shed), thousands(o.Skipped))
		} else if outcomes {
			cells = append(cells, "-", "-", "-", "-", "-", "-")
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
	return millis(w)
}

func shortHash(h string) string {
	if len(h) > len("sha256:")+12 {
		return h[:len("sha256:")+12]
	}
	return h
}

// thousands formats n with comma separators, as the seed's tables do.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	digitsFrom := 0
	if n < 0 {
		digitsFrom = 1
	}
	for i := len(s) - 3; i > digitsFrom; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// millis formats a time in milliseconds for reading: whole milliseconds
// as seconds from 1 s up ("623.9s", "4.58s"), else milliseconds to the
// microsecond ("12.5ms").
func millis(ms float64) string {
	us := math.Round(ms * 1000)
	if math.Abs(us) >= 1e6 {
		return strconv.FormatFloat(math.Round(us/1000)/1000, 'f', -1, 64) + "s"
	}
	return strconv.FormatFloat(us/1000, 'f', -1, 64) + "ms"
}
