package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"stormsim/models"
	"stormsim/policies"
)

// cmdPolicies is stormsim policies.
var cmdPolicies = &command{
	name:    "policies",
	summary: "list the backoff policies, drain paces and reconnect hints with their formulas, defaults and sources",
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
	writeDrainPaces(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeDrainPaces lists the drain section's paces and hints, as the
// backoff policies are listed.
func writeDrainPaces(b *strings.Builder) {
	b.WriteString("\nDrain paces (drain.pace). i is a connection's place in the drain's order from 0,\n")
	b.WriteString("n the connections the gateway holds; a goaway the pace would send after the\n")
	b.WriteString("drain's grace is sent at the grace. A preset's shutdown is the grace's default.\n")
	width := len("reserved")
	for _, p := range models.DrainPaces {
		width = max(width, len(p.Name))
	}
	indent := strings.Repeat(" ", width+2)
	for _, p := range models.DrainPaces {
		formula := p.Formula
		if p.Rule != p.Name {
			formula = string(p.Rule) + " with " + paceDefaults(p.Defaults)
		}
		fmt.Fprintf(b, "\n%-*s  %s\n", width, p.Name, formula)
		if p.Shutdown > 0 {
			fmt.Fprintf(b, "%sshutdown: %s\n", indent, seconds(p.Shutdown))
		}
		if p.Source != "" {
			fmt.Fprintf(b, "%ssource: %s\n", indent, p.Source)
		}
	}
	b.WriteString("\nReconnect hints (drain.reconnect_hint): the delay a goaway carries\n")
	b.WriteString("(reconnect_after_ms), in whole milliseconds, waited instead of the initial jitter.\n\n")
	for _, h := range []struct{ name, formula string }{
		{"none", "no delay (default)"},
		{"fixed", "delay"},
		{"uniform", "uniform[0, over) in whole milliseconds, drawn by the gateway"},
		{"reserved", "ceil(slot_k - goaway_k), slot_k = max(0, k+1-burst)/rate: consecutive token-bucket slots"},
	} {
		fmt.Fprintf(b, "%-*s  %s\n", width, h.name, h.formula)
	}
	fmt.Fprintf(b, "%srate and burst default to the admission that takes the drained clients\n", indent)
}

// paceDefaults lists a preset's parameters.
func paceDefaults(p models.DrainPaceSpec) string {
	var parts []string
	if p.Size != 0 {
		parts = append(parts, "size "+strconv.Itoa(p.Size))
	}
	for _, f := range []struct {
		key string
		v   time.Duration
	}{{"interval", p.Interval}, {"grace", p.Grace}, {"over", p.Over}, {"max_gap", p.MaxGap}} {
		if f.v != 0 {
			parts = append(parts, f.key+" "+seconds(f.v))
		}
	}
	return strings.Join(parts, ", ")
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
