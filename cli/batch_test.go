package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// asStormsim, set to 1 in its environment, makes the test binary run as
// the stormsim command (see TestMain), so that tests start real stormsim
// processes without building one.
const asStormsim = "STORMSIM_TEST_AS_STORMSIM"

func TestMain(m *testing.M) {
	if os.Getenv(asStormsim) == "1" {
		os.Exit(MainProcess(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// batchEnv is this process's environment without any batch engine's
// variables, plus vars and asStormsim.
func batchEnv(vars ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SLURM_") && !strings.HasPrefix(kv, envJobIndex+"=") && !strings.HasPrefix(kv, asStormsim+"=") {
			out = append(out, kv)
		}
	}
	return append(append(out, asStormsim+"=1"), vars...)
}

// TestBatchArrayShardsMergeToTheUnshardedSweep runs a sweep's shards as a
// batch engine would: separate stormsim processes at once, each told
// which shard it is only by the environment a Kubernetes Indexed Job or
// a Slurm array sets, each writing its own directory. Merged, they must
// equal the unsharded sweep byte for byte, charts included.
func TestBatchArrayShardsMergeToTheUnshardedSweep(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "sweep.yaml")
	os.WriteFile(cfg, []byte(smallSweep), 0o644)
	whole := filepath.Join(t.TempDir(), "whole")
	if code, _, stderr := stormsim("sweep", "-c", cfg, "-o", whole, "--progress", "none"); code != ExitOK {
		t.Fatalf("unsharded: exit %d: %s", code, stderr)
	}
	want := readDir(t, whole)
	const shards = 3
	engines := []struct {
		name  string
		flag  string
		env   func(task int) []string
		where func(task int) string // how stderr names the shard's source
	}{
		{"kubernetes indexed job", fmt.Sprintf("auto/%d", shards),
			func(task int) []string { return []string{fmt.Sprintf("%s=%d", envJobIndex, task)} },
			func(task int) string {
				return fmt.Sprintf("the Kubernetes Indexed Job (JOB_COMPLETION_INDEX=%d)", task)
			}},
		{"slurm array 1-3", "auto",
			func(task int) []string {
				return []string{fmt.Sprintf("SLURM_ARRAY_TASK_ID=%d", task+1), "SLURM_ARRAY_TASK_MIN=1", "SLURM_ARRAY_TASK_MAX=3",
					"SLURM_ARRAY_TASK_COUNT=3", "SLURM_ARRAY_JOB_ID=4242", fmt.Sprintf("SLURM_JOB_ID=%d", 4243+task)}
			},
			func(task int) string {
				return fmt.Sprintf("the Slurm array (SLURM_ARRAY_TASK_ID=%d of SLURM_ARRAY_TASK_COUNT=3, from SLURM_ARRAY_TASK_MIN=1)", task+1)
			}},
	}
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			base := t.TempDir()
			var wg sync.WaitGroup
			dirs := make([]string, shards)
			outs := make([]string, shards)
			errs := make([]error, shards)
			for task := range shards {
				dirs[task] = filepath.Join(base, "shards", fmt.Sprint(task))
				cmd := exec.Command(os.Args[0], "sweep", "-c", cfg, "-o", dirs[task], "--shard", eng.flag, "--progress", "plain", "--workers", "1")
				cmd.Env = batchEnv(eng.env(task)...)
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[task] = cmd.Wait()
					outs[task] = stdout.String() + stderr.String()
				}()
			}
			wg.Wait()
			for task := range shards {
				shardLine := fmt.Sprintf("small: shard %d/%d from %s\n", task, shards, eng.where(task))
				done := fmt.Sprintf("(shard %d/%d; join the shards with stormsim merge)", task, shards)
				if errs[task] != nil || !strings.Contains(outs[task], shardLine) || !strings.Contains(outs[task], done) {
					t.Fatalf("task %d: %v; output\n%s\nwant %q and %q", task, errs[task], outs[task], shardLine, done)
				}
			}
			merged := filepath.Join(base, "merged")
			if code, _, stderr := stormsim(append(append([]string{"merge"}, dirs...), "-o", merged)...); code != ExitOK {
				t.Fatalf("merge: exit %d: %s", code, stderr)
			}
			got := readDir(t, merged)
			if len(got) != len(want) {
				t.Errorf("merged %d files, unsharded %d", len(got), len(want))
			}
			for name, data := range want {
				if !bytes.Equal(got[name], data) {
					t.Errorf("%s differs between the merged shards and the unsharded sweep", name)
				}
			}
		})
	}
}
