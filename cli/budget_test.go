package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBeyondTheMemoryBudgetIsRefusedUpFront pins that a config asking for
// more memory than the budget is refused by validate, run and check before
// anything runs: exit 2, one line at the key to change, with the estimate.
func TestBeyondTheMemoryBudgetIsRefusedUpFront(t *testing.T) {
	cfg := ownConfigs[0] // 2 policies
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"two billion clients", []string{"--set", "clients=2e9"},
			"--set clients=2e9: clients: 2,000,000,000 clients need about 119 GiB of memory (2 storms at once, 59.6 GiB each), over the budget of 4.00 GiB (set by --max-memory): lower clients, or run fewer storms at once (--workers; 2 now)\n"},
		{"one storm at a time still too many", []string{"--set", "clients=2e9", "--workers", "1"},
			"--set clients=2e9: clients: 2,000,000,000 clients need about 59.7 GiB of memory (1 storm at once, 59.6 GiB each), over the budget of 4.00 GiB (set by --max-memory): lower clients\n"},
		{"a billion replications in the config", []string{"--set", "replications=1000000000"},
			"--set replications=1000000000: replications: 1,000,000,000 replications (2,000,000,000 storms) keep about "},
		{"ten million replications by flag", []string{"--replications", "10000000"},
			"--replications 10000000: replications: 10,000,000 replications (20,000,000 storms) keep about "},
	}
	for _, tt := range tests {
		for _, cmd := range []string{"validate", "run", "check"} {
			t.Run(tt.name+"/"+cmd, func(t *testing.T) {
				args := append([]string{cmd, "-c", cfg, "--max-memory", "4GiB"}, tt.args...)
				if cmd == "check" {
					args = append(args, "--check", "attempts > 0")
				}
				code, stdout, stderr := stormsim(args...)
				if code != ExitUsage || stdout != "" || !strings.HasPrefix(stderr, tt.want) || strings.Count(stderr, "\n") != 1 {
					t.Errorf("exit %d, stdout %q, stderr\n %q\nwant exit 2 and\n %q", code, stdout, stderr, tt.want)
				}
			})
		}
	}
}

func TestValidatePrintsTheEstimate(t *testing.T) {
	code, stdout, stderr := stormsim("validate", "-c", ownConfigs[0], "--max-memory", "4GiB", "--workers", "2")
	lines := strings.Split(stdout, "\n")
	if code != ExitOK || stderr != "" || len(lines) != 3 ||
		!strings.HasPrefix(lines[1], "  estimate: 2 storms of up to 1,000 clients: about ") || !strings.Contains(lines[1], " of memory (budget 4.00 GiB), at least ") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestValidateBoundsTheTimeOfAnAdmissionBoundStorm pins the time lower
// bound for a storm admission holds back: 10^8 clients, 5 admitted per 10
// ms (R = 500/s, B = 10), waits capped at 3.2 s, a 24 h horizon. The
// client-seconds spent waiting are (4.32e7)^2/1000 + (1e8 - 43,200,010) x
// 86,400 = 6.774e12, so each storm makes at least 6.774e12/3.2 - 1e8 =
// 2.1167e12 attempts; at 40 M attempts/s, a storm on each of 2 cores,
// that is 52,917 s, 14h42m. validate says so, and warns that it is over
// the 10-minute limit; run and check refuse it, at the key to change,
// until --max-time allows it.
func TestValidateBoundsTheTimeOfAnAdmissionBoundStorm(t *testing.T) {
	args := []string{"-c", ownConfigs[0], "--set", "clients=1e8", "--max-memory", "16GiB", "--workers", "2"}
	refusal := "--set clients=1e8: clients: 2 storms of 100,000,000 clients need at least 14h42m of computing, over the limit of 10m00s: lower clients, or allow it with --max-time 15h"
	code, stdout, stderr := stormsim(append([]string{"validate"}, args...)...)
	if code != ExitOK || !strings.Contains(stdout, ", at least 14h42m of computing on 2 cores\n") || stderr != "stormsim validate: warning: "+refusal+"; run and check refuse it\n" {
		t.Errorf("validate: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	for _, cmd := range []string{"run", "check"} {
		a := append([]string{cmd}, args...)
		if cmd == "check" {
			a = append(a, "--check", "attempts > 0")
		}
		if code, stdout, stderr := stormsim(a...); code != ExitUsage || stdout != "" || stderr != refusal+"\n" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and %q", cmd, code, stdout, stderr, refusal)
		}
	}
	// With --max-time the limit is the flag's, and the refusal says so.
	code, _, stderr = stormsim(append([]string{"run", "--max-time", "2h"}, args...)...)
	if want := "--max-time 2h0m0s: clients: 2 storms of 100,000,000 clients need at least 14h42m of computing, over the limit of 2h00m: lower clients, or allow it with --max-time 15h\n"; code != ExitUsage || stderr != want {
		t.Errorf("--max-time 2h: exit %d, stderr %q, want %q", code, stderr, want)
	}
	if code, _, stderr := stormsim(append([]string{"validate", "--max-time", "15h"}, args...)...); code != ExitOK ||
		stderr != "stormsim validate: warning: running it takes at least 14h42m of computing (2 storms of up to 100,000,000 clients on 2 cores, about 6.04 GiB of memory)\n" {
		t.Errorf("--max-time 15h: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := stormsim("run", "-c", ownConfigs[0], "--max-time", "-1s"); code != ExitUsage || !strings.HasPrefix(stderr, "stormsim run: --max-time must be >= 0") {
		t.Errorf("--max-time -1s: exit %d, stderr %q", code, stderr)
	}
}

// TestValidateEstimatesASweep pins validate on a sweep file: every point
// checked, the grid and the whole sweep's estimate on one line each; and
// --policy, which a sweep's points do the work of, refused.
func TestValidateEstimatesASweep(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "sweep.yaml")
	os.WriteFile(cfg, []byte(smallSweep), 0o644)
	code, stdout, stderr := stormsim("validate", "-c", cfg, "--workers", "1", "--max-memory", "1GiB")
	lines := strings.Split(stdout, "\n")
	if code != ExitOK || stderr != "" || len(lines) != 3 ||
		!strings.HasPrefix(lines[0], cfg+": ok: sweep small, 6 points (policies[0].base 2 x admission.per_slot 3), 2 replications of 1 policy a point (sweep sha256:") ||
		!strings.HasPrefix(lines[1], "  estimate: 12 storms of up to 30 clients: about ") || !strings.Contains(lines[1], " (budget 1.00 GiB), at least ") ||
		!strings.Contains(lines[1], " of computing on 1 core; about ") || !strings.HasSuffix(lines[1], " of files") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, stdout, stderr = stormsim("validate", "-c", cfg, "--policy", "full")
	if want := "stormsim validate: " + cfg + " is a sweep file: --policy applies to a scenario"; code != ExitUsage || stdout != "" || !strings.HasPrefix(stderr, want) {
		t.Errorf("--policy on a sweep: exit %d, stdout %q, stderr %q; want exit 2 and %q", code, stdout, stderr, want)
	}
	// The shipped cluster example is a valid sweep of 10,000 points.
	code, stdout, stderr = stormsim("validate", "-c", "../deploy/sweep-10k.yaml")
	if code != ExitOK || !strings.Contains(stdout, ": ok: sweep sweep-10k, 10,000 points (admission.rate 100 x admission.burst 100)") {
		t.Errorf("deploy/sweep-10k.yaml: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
