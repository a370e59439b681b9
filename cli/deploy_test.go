package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// stormsimOnPath makes a directory holding a stormsim command (this test
// binary, see TestMain) and returns a PATH that finds it first, and the
// environment to run it with.
func stormsimOnPath(t *testing.T) (bin string, environ []string) {
	t.Helper()
	dir := t.TempDir()
	bin = filepath.Join(dir, "stormsim")
	if err := os.Symlink(os.Args[0], bin); err != nil {
		t.Fatal(err)
	}
	return bin, batchEnv("PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH"))
}

// runScript runs a shell script with env, failing the test on error.
func runScript(t *testing.T, shell, script string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(shell, append([]string{"-c", script, "script"}, args...)...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	return string(out)
}

// unsharded runs the small sweep in one process and returns its files.
func unsharded(t *testing.T, cfg string) map[string][]byte {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "whole")
	if code, _, stderr := stormsim("sweep", "-c", cfg, "-o", dir, "--progress", "none"); code != ExitOK {
		t.Fatalf("unsharded: exit %d: %s", code, stderr)
	}
	return readDir(t, dir)
}

func sameFiles(t *testing.T, got, want map[string][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("merged %d files, unsharded %d", len(got), len(want))
	}
	for name, data := range want {
		if !bytes.Equal(got[name], data) {
			t.Errorf("%s differs between the merged shards and the unsharded sweep", name)
		}
	}
}

// TestSlurmScriptSubmitsAndRunsTheSweep runs deploy/slurm/sweep.sbatch as
// Slurm would: on the login node with an sbatch that records what it is
// asked to submit, then as each array task with the environment Slurm
// sets, then the merge job's command. The merged sweep must equal the
// unsharded one.
func TestSlurmScriptSubmitsAndRunsTheSweep(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to run the script")
	}
	script, err := filepath.Abs("../deploy/slurm/sweep.sbatch")
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "sweep.yaml")
	os.WriteFile(cfg, []byte(smallSweep), 0o644)
	want := unsharded(t, cfg)
	bin, env := stormsimOnPath(t)
	out := filepath.Join(t.TempDir(), "out")
	submitted := filepath.Join(t.TempDir(), "sbatch.log")
	sbatch := filepath.Join(filepath.Dir(bin), "sbatch")
	os.WriteFile(sbatch, []byte("#!/bin/sh\nprintf '%s\\n' \"$*\" >> "+submitted+"\necho 4242\n"), 0o755)
	env = append(env, "SWEEP="+cfg, "OUT="+out)

	said := runScript(t, "bash", `exec "$@"`, env, script)
	calls, _ := os.ReadFile(submitted)
	lines := strings.Split(strings.TrimSpace(string(calls)), "\n")
	if !strings.Contains(said, ": ok: sweep small, 6 points") || len(lines) != 2 ||
		!strings.HasPrefix(lines[0], "--parsable --export=ALL,SWEEP="+cfg+",OUT="+out+",STORMSIM=stormsim ") || !strings.HasSuffix(lines[0], script) ||
		!strings.Contains(lines[1], "--dependency=afterok:4242 ") {
		t.Fatalf("on the login node it said\n%s\nand submitted\n%s", said, calls)
	}
	wrap := regexp.MustCompile(`--wrap (.*)$`).FindStringSubmatch(lines[1])
	if wrap == nil {
		t.Fatalf("the merge is not a --wrap command: %s", lines[1])
	}
	// --array=1-3: ids from 1, as any range may be.
	for id := 1; id <= 3; id++ {
		task := append(env, fmt.Sprintf("SLURM_ARRAY_TASK_ID=%d", id), "SLURM_ARRAY_TASK_MIN=1", "SLURM_ARRAY_TASK_MAX=3",
			"SLURM_ARRAY_TASK_COUNT=3", "SLURM_ARRAY_JOB_ID=4242", "SLURM_JOB_ID=4243", "SLURM_CPUS_PER_TASK=2")
		runScript(t, "bash", `exec "$@"`, task, script)
	}
	runScript(t, "sh", wrap[1], env)
	sameFiles(t, readDir(t, filepath.Join(out, "merged")), want)
}

// TestKubernetesJobRunsTheSweep checks deploy/kubernetes/sweep-job.yaml:
// its shard count agrees in the three places that name it, and its two
// commands (the shard's, the merge's), run with the environment the
// Indexed Job gives its pods and the paths of its volumes moved into a
// test directory, merge into the unsharded sweep.
func TestKubernetesJobRunsTheSweep(t *testing.T) {
	data, err := os.ReadFile("../deploy/kubernetes/sweep-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	counts := regexp.MustCompile(`(?m)(?:completions: |value: ")(\d+)"? # SHARDS$`).FindAllStringSubmatch(text, -1)
	if len(counts) != 3 || counts[0][1] != counts[1][1] || counts[1][1] != counts[2][1] {
		t.Fatalf("the shard count must be given three times, equal: %v", counts)
	}
	scripts := blockScalars(text)
	if len(scripts) != 2 || !strings.Contains(scripts[0], `--shard "auto/$SHARDS"`) || !strings.Contains(scripts[1], "stormsim merge") {
		t.Fatalf("want the shard's and the merge's scripts, got %q", scripts)
	}
	cfg := filepath.Join(t.TempDir(), "sweep.yaml")
	os.WriteFile(cfg, []byte(smallSweep), 0o644)
	want := unsharded(t, cfg)
	_, env := stormsimOnPath(t)
	root := t.TempDir()
	move := strings.NewReplacer("/sweep/sweep.yaml", cfg, "/data/", root+"/")
	const shards = 3
	for i := range shards {
		runScript(t, "sh", move.Replace(scripts[0]), append(env, fmt.Sprintf("JOB_COMPLETION_INDEX=%d", i), fmt.Sprintf("SHARDS=%d", shards)))
	}
	runScript(t, "sh", move.Replace(scripts[1]), append(env, fmt.Sprintf("SHARDS=%d", shards)))
	sameFiles(t, readDir(t, filepath.Join(root, "merged")), want)
}

// blockScalars returns the literal block scalars (key: | or - |) of a
// YAML text, each with its indentation removed.
func blockScalars(text string) []string {
	var out []string
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		if !strings.HasSuffix(lines[i], "- |") && !strings.HasSuffix(lines[i], ": |") {
			continue
		}
		var body []string
		indent := -1
		for i++; i < len(lines); i++ {
			l := lines[i]
			n := len(l) - len(strings.TrimLeft(l, " "))
			if strings.TrimSpace(l) != "" && indent < 0 {
				indent = n
			}
			if strings.TrimSpace(l) != "" && n < indent {
				break
			}
			body = append(body, strings.TrimPrefix(l, strings.Repeat(" ", max(indent, 0))))
		}
		i--
		out = append(out, strings.Join(body, "\n"))
	}
	return out
}
