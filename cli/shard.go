package cli

import (
	"fmt"
	"strconv"
	"strings"
)

// shard is the part of a sweep one process runs: the points whose index
// modulo count is index.
type shard struct {
	index, count int
	// from says where index and count came from when --shard auto read
	// them from a batch engine's environment; "" for --shard I/N.
	from string
}

// Environment variables of the batch engines --shard auto reads.
const (
	// A Kubernetes Indexed Job gives each pod its index, 0 to
	// completions-1; the count is --shard auto/N's N.
	envJobIndex = "JOB_COMPLETION_INDEX"
	// A Slurm array gives each task its id, from the array's lowest id
	// in steps (--array=1-16, --array=0-30:2), and the count.
	envSlurmID    = "SLURM_ARRAY_TASK_ID"
	envSlurmCount = "SLURM_ARRAY_TASK_COUNT"
	envSlurmMin   = "SLURM_ARRAY_TASK_MIN"
	envSlurmMax   = "SLURM_ARRAY_TASK_MAX"
	envSlurmStep  = "SLURM_ARRAY_TASK_STEP"
)

// parseShard reads --shard: "" for every point, I/N, or auto (auto/N) to
// take them from the Kubernetes Indexed Job or the Slurm array the
// process runs in, as lookupEnv reports its environment.
func parseShard(s string, lookupEnv func(string) (string, bool)) (shard, error) {
	if s == "" {
		return shard{index: 0, count: 1}, nil
	}
	if rest, ok := strings.CutPrefix(s, "auto"); ok && (rest == "" || rest[0] == '/') {
		count := 0
		if rest != "" {
			n, err := strconv.Atoi(rest[1:])
			if err != nil || n < 1 {
				return shard{}, usageErrorf("stormsim sweep: --shard auto/N needs N >= 1, the number of shards (got %q)", s)
			}
			count = n
		}
		return shardFromEnv(count, lookupEnv)
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return shard{}, usageErrorf("stormsim sweep: --shard must be I/N with 0 <= I < N, e.g. 0/4, or auto in a batch array (got %q)", s)
	}
	return shard{index: i, count: n}, nil
}

// shardFromEnv is --shard auto: the shard of this Kubernetes Indexed Job
// pod or Slurm array task. count is N of auto/N, 0 for plain auto.
func shardFromEnv(count int, lookupEnv func(string) (string, bool)) (shard, error) {
	_, k8s := lookupEnv(envJobIndex)
	_, slurm := lookupEnv(envSlurmID)
	var sh shard
	var err error
	switch {
	case k8s && slurm:
		return shard{}, usageErrorf("stormsim sweep: --shard auto: both %s (Kubernetes) and %s (Slurm) are set; give --shard I/N", envJobIndex, envSlurmID)
	case k8s:
		sh, err = kubernetesShard(count, lookupEnv)
	case slurm:
		sh, err = slurmShard(count, lookupEnv)
	default:
		return shard{}, usageErrorf("stormsim sweep: --shard auto: no batch array in the environment: a Kubernetes Indexed Job sets %s "+
			"(give --shard auto/N, N the Job's completions), a Slurm array sets %s and %s; elsewhere give --shard I/N", envJobIndex, envSlurmID, envSlurmCount)
	}
	if err != nil {
		return shard{}, usageErrorf("stormsim sweep: --shard auto: %v", err)
	}
	return sh, nil
}

// kubernetesShard reads a Kubernetes Indexed Job's index; the Job's
// completions are not in a pod's environment, so count must be given.
func kubernetesShard(count int, lookupEnv func(string) (string, bool)) (shard, error) {
	index, err := envInt(envJobIndex, lookupEnv)
	if err != nil {
		return shard{}, err
	}
	if count == 0 {
		return shard{}, fmt.Errorf("%s=%d is set (a Kubernetes Indexed Job), but not how many shards there are: give --shard auto/N, N the Job's completions", envJobIndex, index)
	}
	if index >= count {
		return shard{}, fmt.Errorf("%s=%d, but --shard auto/%d makes only shards 0 to %d: N must be the Job's completions", envJobIndex, index, count, count-1)
	}
	return shard{index: index, count: count, from: fmt.Sprintf("the Kubernetes Indexed Job (%s=%d)", envJobIndex, index)}, nil
}

// slurmShard reads a Slurm array task's place: its id counted from the
// array's lowest, in the array's steps. The ids must be one range
// (--array=0-15 or 1-31:2), so that every shard has one task.
func slurmShard(count int, lookupEnv func(string) (string, bool)) (shard, error) {
	id, err := envInt(envSlurmID, lookupEnv)
	if err != nil {
		return shard{}, err
	}
	n, err := envInt(envSlurmCount, lookupEnv)
	if err != nil {
		return shard{}, err
	}
	lo, err := envInt(envSlurmMin, lookupEnv)
	if err != nil {
		return shard{}, err
	}
	step, err := envIntOr(envSlurmStep, 1, lookupEnv)
	if err != nil {
		return shard{}, err
	}
	hi, err := envIntOr(envSlurmMax, lo+(n-1)*step, lookupEnv)
	if err != nil {
		return shard{}, err
	}
	if n < 1 || step < 1 || id < lo || (id-lo)%step != 0 || hi-lo != (n-1)*step {
		return shard{}, fmt.Errorf("the Slurm array's ids are not one range (%s=%d, %s=%d, %s=%d, %s=%d, step %d): "+
			"submit it as --array=0-%d so that every shard has one task", envSlurmID, id, envSlurmMin, lo, envSlurmMax, hi, envSlurmCount, n, step, max(n, 1)-1)
	}
	if count != 0 && count != n {
		return shard{}, fmt.Errorf("--shard auto/%d, but the Slurm array has %d tasks (%s=%d)", count, n, envSlurmCount, n)
	}
	index := (id - lo) / step
	from := fmt.Sprintf("the Slurm array (%s=%d of %s=%d", envSlurmID, id, envSlurmCount, n)
	if lo != 0 {
		from += fmt.Sprintf(", from %s=%d", envSlurmMin, lo)
	}
	return shard{index: index, count: n, from: from + ")"}, nil
}

// envInt reads the non-negative integer in the environment variable name.
func envInt(name string, lookupEnv func(string) (string, bool)) (int, error) {
	v, ok := lookupEnv(name)
	if !ok {
		return 0, fmt.Errorf("%s is not set", name)
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q is not a count", name, v)
	}
	return n, nil
}

// envIntOr is envInt, or otherwise when name is not set.
func envIntOr(name string, otherwise int, lookupEnv func(string) (string, bool)) (int, error) {
	if _, ok := lookupEnv(name); !ok {
		return otherwise, nil
	}
	return envInt(name, lookupEnv)
}
