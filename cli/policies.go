package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"stormsim/policies"
)

// cmdPolicies is stormsim policies.
var cmdPolicies = &command{
	name:    "policies",
	summary: "list the backoff policies with their formulas, defaults and sources",
	usage:   "",
	run:     runPolicies,
}

func runPolicies(e *env, cmd *command, args []string) error {
	fs := flagSet(cmd.name)
	if done, err := parse(e, cmd, fs, args); done || err != nil {
		return err
	}
	return writePolicies(e.stdout)
}

func writePolicies(w io.Writer) error {
	var b strings.Builder
	b.WriteString("Backoff policies. n is the number of earlier failures; every policy also takes\n")
	b.WriteString("label, max_attempts, honor_retry_after, min_delay_after_reject and timeout\n")
	b.WriteString("(the handshake timeout; 0, the default, waits for every answer).\n")
	width := 0
	for _, k := range policies.Kinds {
		width = max(width, len(k.Name))
	}
	indent := strings.Repeat(" ", width+2)
	for _, k := range policies.Kinds {
		fmt.Fprintf(&b, "\n%-*s  %s\n", width, k.Name, k.Formula)
		if d := defaults(k.Defaults); d != "" {
			fmt.Fprintf(&b, "%sdefaults: %s\n", indent, d)
		}
		if k.Source != "" {
			fmt.Fprintf(&b, "%ssource: %s\n", indent, k.Source)
		}
		if k.TimeoutSource != "" {
			timeout := "none"
			if k.LibraryTimeout > 0 {
				timeout = seconds(k.LibraryTimeout)
			}
			fmt.Fprintf(&b, "%slibrary's handshake timeout: %s (%s), listed, not applied\n", indent, timeout, k.TimeoutSource)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// defaults lists the non-zero parameters of a kind's default spec.
func defaults(s policies.Spec) string {
	var parts []string
	add := func(key, value string) { parts = append(parts, key+" "+value) }
	if s.Base != 0 {
		add("base", seconds(s.Base))
	}
	if s.Multiplier != 0 {
		add("multiplier", strconv.FormatFloat(s.Multiplier, 'g', -1, 64))
	}
	if s.Cap != 0 {
		add("cap", seconds(s.Cap))
	}
	if s.Jitter != 0 {
		add("jitter", strconv.FormatFloat(s.Jitter, 'g', -1, 64))
	}
	if s.MinGap != 0 {
		add("min_gap", seconds(s.MinGap))
	}
	return strings.Join(parts, ", ")
}

// seconds writes whole seconds as "120s" rather than time's "2m0s", the way
// client libraries document them.
func seconds(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return d.String()
}
