package cli

import (
	"strings"
	"testing"

	"stormsim/budget"
)

// TestShardFromABatchEngine pins --shard: I/N as given, and auto read
// from the environment a Kubernetes Indexed Job or a Slurm array sets.
func TestShardFromABatchEngine(t *testing.T) {
	slurm := func(id, lo, hi, count string) map[string]string {
		return map[string]string{envSlurmID: id, envSlurmMin: lo, envSlurmMax: hi, envSlurmCount: count}
	}
	tests := []struct {
		name    string
		flag    string
		env     map[string]string
		index   int
		count   int
		wantErr string // the start of the message after "stormsim sweep: "
	}{
		{"none", "", nil, 0, 1, ""},
		{"given", "2/4", nil, 2, 4, ""},
		{"given, out of range", "4/4", nil, 0, 0, "--shard must be I/N with 0 <= I < N"},
		{"given, and the environment ignored", "1/2", map[string]string{envJobIndex: "5"}, 1, 2, ""},
		{"auto outside a batch engine", "auto", nil, 0, 0, "--shard auto: no batch array in the environment: a Kubernetes Indexed Job sets JOB_COMPLETION_INDEX"},
		{"auto/N outside a batch engine", "auto/4", nil, 0, 0, "--shard auto: no batch array in the environment"},
		{"auto/0", "auto/0", map[string]string{envJobIndex: "0"}, 0, 0, `--shard auto/N needs N >= 1, the number of shards (got "auto/0")`},
		{"a word after auto", "automatic", nil, 0, 0, "--shard must be I/N"},

		{"kubernetes", "auto/16", map[string]string{envJobIndex: "3"}, 3, 16, ""},
		{"kubernetes, the last pod", "auto/16", map[string]string{envJobIndex: "15"}, 15, 16, ""},
		{"kubernetes without the count", "auto", map[string]string{envJobIndex: "3"}, 0, 0,
			"--shard auto: JOB_COMPLETION_INDEX=3 is set (a Kubernetes Indexed Job), but not how many shards there are: give --shard auto/N"},
		{"kubernetes, an index beyond the count", "auto/16", map[string]string{envJobIndex: "16"}, 0, 0,
			"--shard auto: JOB_COMPLETION_INDEX=16, but --shard auto/16 makes only shards 0 to 15"},
		{"kubernetes, not a number", "auto/2", map[string]string{envJobIndex: "one"}, 0, 0, `--shard auto: JOB_COMPLETION_INDEX="one" is not a count`},

		{"slurm from 0", "auto", slurm("5", "0", "15", "16"), 5, 16, ""},
		{"slurm from 1, the first task", "auto", slurm("1", "1", "16", "16"), 0, 16, ""},
		{"slurm from 1, the last task", "auto", slurm("16", "1", "16", "16"), 15, 16, ""},
		{"slurm with the count given too", "auto/16", slurm("7", "0", "15", "16"), 7, 16, ""},
		{"slurm in steps", "auto", map[string]string{envSlurmID: "4", envSlurmMin: "0", envSlurmMax: "30", envSlurmStep: "2", envSlurmCount: "16"}, 2, 16, ""},
		{"slurm, a list of ids", "auto", slurm("3", "1", "7", "3"), 0, 0, "--shard auto: the Slurm array's ids are not one range"},
		{"slurm, another count given", "auto/8", slurm("3", "0", "15", "16"), 0, 0, "--shard auto: --shard auto/8, but the Slurm array has 16 tasks"},
		{"slurm without the count", "auto", map[string]string{envSlurmID: "3", envSlurmMin: "0"}, 0, 0, "--shard auto: SLURM_ARRAY_TASK_COUNT is not set"},
		{"slurm without the lowest id", "auto", map[string]string{envSlurmID: "3", envSlurmCount: "4"}, 0, 0, "--shard auto: SLURM_ARRAY_TASK_MIN is not set"},

		{"both engines", "auto/4", map[string]string{envJobIndex: "1", envSlurmID: "1"}, 0, 0, "--shard auto: both JOB_COMPLETION_INDEX (Kubernetes) and SLURM_ARRAY_TASK_ID (Slurm) are set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lookup := func(name string) (string, bool) { v, ok := tt.env[name]; return v, ok }
			sh, err := parseShard(tt.flag, lookup)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), "stormsim sweep: "+tt.wantErr) {
					t.Fatalf("error %v, want %q...", err, "stormsim sweep: "+tt.wantErr)
				}
				if code := report(&env{stderr: &strings.Builder{}}, err); code != ExitUsage {
					t.Errorf("exit %d, want 2", code)
				}
				return
			}
			if err != nil || sh.index != tt.index || sh.count != tt.count {
				t.Fatalf("shard %d/%d, %v; want %d/%d", sh.index, sh.count, err, tt.index, tt.count)
			}
			if (sh.from == "") != (tt.flag == "" || !strings.HasPrefix(tt.flag, "auto")) {
				t.Errorf("from %q for --shard %q", sh.from, tt.flag)
			}
		})
	}
}

// TestAShardEstimatesItsShareOfTheSweep pins the estimate of one shard of
// a sweep: a quarter of the points has a quarter of the storms, of the
// client-storms, of the least attempts (so of the time) and of the lines,
// and draws no charts; what one storm or one point needs is unchanged.
func TestAShardEstimatesItsShareOfTheSweep(t *testing.T) {
	whole := budget.SweepShape{Points: 100, Storms: 400, ClientStorms: 4e6, MinAttempts: 8e9, Models: true, MaxClients: 10000,
		MaxStormBytes: 1 << 20, PointValues: 120, ChartValues: 900, OutputBytes: 1 << 22, ChartFiles: 4}
	got := shardShape(whole, 25, 100, true)
	want := budget.SweepShape{Points: 25, Storms: 100, ClientStorms: 1e6, MinAttempts: 2e9, Models: true, MaxClients: 10000,
		MaxStormBytes: 1 << 20, PointValues: 120, ChartValues: 0, OutputBytes: 1 << 20, ChartFiles: 0}
	if got != want {
		t.Errorf("shard of a quarter\n got %+v\nwant %+v", got, want)
	}
	if got := shardShape(whole, 100, 100, false); got != whole {
		t.Errorf("unsharded: %+v, want the whole shape", got)
	}
}
