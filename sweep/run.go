package sweep

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"stormsim/internal/atomicfile"
	"stormsim/results"
)

// Options say how a plan runs. None of them changes a byte of what it
// writes: points are written in grid order whatever the worker count, a
// resumed sweep ends as a fresh one would, and merged shards equal an
// unsharded run.
type Options struct {
	Dir      string    // output directory, created if missing
	Workers  int       // storms run at once; 0 means runtime.GOMAXPROCS
	Shard    int       // with Shards > 1, run only points whose index % Shards == Shard
	Shards   int       // 0 or 1: run every point
	Resume   bool      // keep the points already in Dir/sweep.ndjson
	NoCharts bool      // skip the charts (CSV and NDJSON are still written)
	Progress *Progress // nil: report nothing
}

// InputError is a problem with the user's files or flags (a resume into
// another sweep's directory, shards that do not fit), as opposed to a
// failure while running.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// Run runs the plan's points (or its shard's) with their replications and
// streams one line per point to Dir/sweep.ndjson as points finish, in grid
// order: a point that finishes early waits for the ones before it. An
// unsharded sweep then writes sweep.csv and the charts, whose paths it
// returns; a shard leaves that to stormsim merge.
func (p *Plan) Run(opt Options) (charts []string, err error) {
	shards := max(1, opt.Shards)
	if opt.Shard < 0 || opt.Shard >= shards {
		return nil, &InputError{fmt.Sprintf("shard %d/%d: the index must be in [0, %d)", opt.Shard, shards, shards)}
	}
	if err := os.MkdirAll(opt.Dir, 0o755); err != nil {
		return nil, &InputError{fmt.Sprintf("-o %s: %v", opt.Dir, err)}
	}
	manifest, err := p.Manifest().JSON()
	if err != nil {
		return nil, err
	}
	points := p.Shard(opt.Shard, shards)
	path := filepath.Join(opt.Dir, PointsFile)
	done := 0
	if opt.Resume {
		if done, err = p.resumable(path, points); err != nil {
			return nil, err
		}
	}
	if err := atomicfile.Write(filepath.Join(opt.Dir, ManifestFile), manifest); err != nil {
		return nil, err
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if opt.Resume {
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	out, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return nil, err
	}
	runErr := p.runPoints(points, done, out, opt)
	if err := out.Close(); runErr == nil {
		runErr = err
	}
	if runErr != nil || shards > 1 {
		return nil, runErr
	}
	return Finalize(opt.Dir, !opt.NoCharts)
}

// resumable checks that the lines already in path are the first points of
// this sweep (or shard), in order, cuts off a line left half-written, and
// returns how many points are done.
func (p *Plan) resumable(path string, points []Point) (int, error) {
	lines, complete, err := readLines(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, &InputError{fmt.Sprintf("--resume: %v", err)}
	}
	for k, l := range lines {
		if l.Sweep != p.Hash {
			return 0, &InputError{fmt.Sprintf("--resume: %s:%d was written by another sweep (%s; this one is %s): use a fresh -o directory or leave out --resume",
				path, k+1, short(l.Sweep), short(p.Hash))}
		}
		if k >= len(points) || l.Index != points[k].Index {
			return 0, &InputError{fmt.Sprintf("--resume: %s:%d holds point %d where this run expects %s: was it written with another --shard?",
				path, k+1, l.Index, expected(points, k))}
		}
	}
	if err := os.Truncate(path, complete); err != nil {
		return 0, err
	}
	return len(lines), nil
}

func expected(points []Point, k int) string {
	if k < len(points) {
		return fmt.Sprintf("point %d", points[k].Index)
	}
	return "no more points"
}

func short(hash string) string { return hash[:min(len(hash), len("sha256:")+12)] }

// job is one storm: replication rep of policy pol at todo point t.
type job struct{ t, pol, rep int }

// runPoints runs every replication of every policy of the points after
// the first done on a worker pool and writes each point's record to out
// in order.
func (p *Plan) runPoints(all []Point, done int, out *os.File, opt Options) error {
	points := all[done:]
	var jobs []job
	slots := make([][][][]results.Metric, len(points)) // [t][policy][rep]
	remaining := make([]atomic.Int64, len(points))
	for t, pt := range points {
		s := pt.Scenario
		slots[t] = make([][][]results.Metric, len(s.Policies))
		for pol := range s.Policies {
			slots[t][pol] = make([][]results.Metric, s.Replications)
		}
		// Replication-major, so that a point's storms of one seed run together.
		for rep := range s.Replications {
			for pol := range s.Policies {
				jobs = append(jobs, job{t, pol, rep})
			}
		}
		remaining[t].Store(int64(len(s.Policies) * s.Replications))
	}
	opt.Progress.begin(len(p.Points), len(all), done, len(jobs))
	defer opt.Progress.end()

	finished := make(chan int, len(points))
	var writeErr error
	var writeFailed atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		ready := make([]bool, len(points))
		next := 0
		for t := range finished {
			ready[t] = true
			for next < len(points) && ready[next] && writeErr == nil {
				line, err := p.record(points[next], slots[next]).line()
				if err == nil {
					_, err = out.Write(line)
				}
				if err != nil {
					writeErr = err
					writeFailed.Store(true)
				}
				slots[next] = nil
				next++
				opt.Progress.pointDone()
			}
		}
	}()
	runErr := results.ForEach(len(jobs), opt.Workers, func(i int) error {
		if writeFailed.Load() {
			return errors.New("stopped: writing failed")
		}
		j := jobs[i]
		s := points[j.t].Scenario
		r, err := results.RunOne(s, s.Policies[j.pol], s.Seed+uint64(j.rep))
		if err != nil {
			return err
		}
		slots[j.t][j.pol][j.rep] = results.ResultMetrics(&r)
		opt.Progress.runDone()
		if remaining[j.t].Add(-1) == 0 {
			finished <- j.t
		}
		return nil
	})
	close(finished)
	wg.Wait()
	if writeErr != nil {
		return fmt.Errorf("writing %s: %w", out.Name(), writeErr)
	}
	return runErr
}

// record summarises one point's runs.
func (p *Plan) record(pt Point, runs [][][]results.Metric) *Record {
	s := pt.Scenario
	r := &Record{Sweep: p.Hash, Index: pt.Index, ID: pt.ID, ConfigHash: pt.ConfigHash,
		Seed: s.Seed, Replications: s.Replications, Results: []results.Summary{}}
	for a, ax := range p.Axes {
		r.Values = append(r.Values, AxisValue{Path: ax.Path, Label: ax.Values[pt.Coords[a]].Label})
	}
	for pol, spec := range s.Policies {
		r.Results = append(r.Results, results.SummarizeRuns(spec.Label, runs[pol]))
	}
	return r
}
