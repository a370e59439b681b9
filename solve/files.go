package solve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"stormsim/internal/atomicfile"
	"stormsim/sweep"
)

// Output files of a solve directory.
const (
	ManifestFile = "probes.json"   // what the probes belong to: the problem, enough to merge shards
	ProbesFile   = "probes.ndjson" // one sweep record per probe, streamed as probes finish
	ResultFile   = "solve.json"    // the answer (Document)
	CSVFile      = "solve.csv"     // one row per probe
)

// RunOptions say how a problem runs. None of them changes a byte of
// what it writes: probes are numbered by the searches that asked for
// them, whatever the worker count; a resumed solve ends as a fresh one
// would; merged shards equal an unsharded run.
type RunOptions struct {
	Dir      string // output directory, created if missing; "" writes nothing
	Workers  int    // storms at once; 0: runtime.GOMAXPROCS
	Shard    int    // with Shards > 1, solve only the cases whose index % Shards == Shard
	Shards   int
	Resume   bool // reuse the probes already in Dir/probes.ndjson
	NoCharts bool
	Progress *sweep.Progress
	Context  context.Context // cancelled: stop, keeping the probes finished
	// Derived names files the command writes from a finished solve (its
	// report): removed at the start, so that a stopped solve leaves no
	// page of an earlier one beside its probes.
	Derived []string
}

// InterruptedError is a solve stopped by its context: Probes probes are
// in File, each line whole, and --resume reuses them.
type InterruptedError struct {
	Probes int
	File   string // "" without an output directory
}

func (e *InterruptedError) Error() string {
	if e.File == "" {
		return fmt.Sprintf("interrupted after %d probes", e.Probes)
	}
	return fmt.Sprintf("interrupted: %d probes are in %s", e.Probes, e.File)
}

// Run solves the problem's cases (or its shard's) and returns solve.json's
// document (nil for a shard, whose probes stormsim merge joins) and the
// chart files written. With Dir, it writes probes.json first, streams
// each probe to probes.ndjson as it finishes, and at the end rewrites
// probes.ndjson in probe order and writes solve.json, solve.csv and the
// charts.
func (p *Problem) Run(opt RunOptions) (*Document, []string, error) {
	shards := max(1, opt.Shards)
	if opt.Shard < 0 || opt.Shard >= shards {
		return nil, nil, &sweep.InputError{Msg: fmt.Sprintf("shard %d/%d: the index must be in [0, %d)", opt.Shard, shards, shards)}
	}
	ctx := opt.Context
	if ctx == nil {
		ctx = context.Background()
	}
	r := newSearcher(p, ctx, opt.Workers)
	r.progress = opt.Progress
	var log *os.File
	if opt.Dir != "" {
		var err error
		if log, err = p.openDir(opt, r); err != nil {
			return nil, nil, err
		}
		r.out = log
	}
	var cases []caseSpec
	for _, c := range p.cases {
		if c.index%shards == opt.Shard {
			cases = append(cases, c)
		}
	}
	crs, runErr := r.solve(cases)
	if log != nil {
		if err := log.Close(); runErr == nil {
			runErr = err
		}
	}
	if runErr != nil {
		if ctx.Err() != nil && r.err() == nil {
			ie := &InterruptedError{Probes: r.lines + len(r.known)}
			if opt.Dir != "" {
				ie.File = filepath.Join(opt.Dir, ProbesFile)
			}
			return nil, nil, ie
		}
		return nil, nil, runErr
	}
	return p.finish(crs, opt, shards > 1)
}

// solve runs the cases at once on one pool and returns them in order.
func (r *searcher) solve(cases []caseSpec) ([]*caseRun, error) {
	r.progress.Begin(sweep.Totals{Title: "solve", Unit: "probes", Resumed: len(r.known), Estimated: true})
	stop := r.start()
	crs := make([]*caseRun, len(cases))
	err := atOnce(len(cases), func(i int) (err error) {
		crs[i], err = r.solveCase(cases[i])
		return err
	})
	stop()
	r.progress.End()
	if first := r.err(); first != nil {
		return nil, first
	}
	return crs, err
}

// finish writes a finished solve's files: probes.ndjson in probe order,
// and, unless it is a shard, solve.json, solve.csv and the charts.
func (p *Problem) finish(crs []*caseRun, opt RunOptions, shard bool) (*Document, []string, error) {
	n := number(crs)
	if opt.Dir != "" {
		if err := writeProbes(filepath.Join(opt.Dir, ProbesFile), n.order); err != nil {
			return nil, nil, err
		}
	}
	if shard {
		return nil, nil, nil
	}
	d := p.document(crs)
	if opt.Dir == "" {
		return d, nil, nil
	}
	if err := d.Write(filepath.Join(opt.Dir, ResultFile)); err != nil {
		return d, nil, err
	}
	if err := atomicfile.Write(filepath.Join(opt.Dir, CSVFile), d.CSV()); err != nil {
		return d, nil, err
	}
	if opt.NoCharts {
		return d, nil, nil
	}
	charts, err := d.WriteCharts(opt.Dir)
	return d, charts, err
}

// writeProbes rewrites the probe file with every probe once, numbered in
// probe order.
func writeProbes(path string, order []*probe) error {
	var buf bytes.Buffer
	for id, pr := range order {
		rec := *pr.rec
		rec.Index = id
		line, err := rec.Line()
		if err != nil {
			return err
		}
		buf.Write(line)
	}
	return atomicfile.Write(path, buf.Bytes())
}

// manifest is p's probes.json: the problem a directory's probes belong
// to, as solve.json describes it, without results; enough to merge
// shards without the solve file. Shards of one solve have the same
// manifest, byte for byte.
func (p *Problem) manifest() ([]byte, error) {
	return p.header().JSON()
}

// openDir prepares opt.Dir: it refuses a resume into another solve's
// directory, reads the probes already done (with opt.Resume), removes
// what an earlier solve wrote that this one writes afresh, writes
// probes.json and opens probes.ndjson to append to.
func (p *Problem) openDir(opt RunOptions, r *searcher) (*os.File, error) {
	if err := os.MkdirAll(opt.Dir, 0o755); err != nil {
		return nil, &sweep.InputError{Msg: fmt.Sprintf("-o %s: %v", opt.Dir, err)}
	}
	manifest, err := p.manifest()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(opt.Dir, ProbesFile)
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if opt.Resume {
		if err := p.resumable(opt.Dir, r); err != nil {
			return nil, err
		}
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	if err := removeOutputs(opt.Dir, opt.Derived); err != nil {
		return nil, err
	}
	if err := atomicfile.Write(filepath.Join(opt.Dir, ManifestFile), manifest); err != nil {
		return nil, err
	}
	return os.OpenFile(path, flags, 0o644)
}

// removeOutputs removes the files an earlier solve wrote into dir at
// its end, as its solve.json names them (a chart of a requirement no
// longer there must not stay behind), and the derived files.
func removeOutputs(dir string, derived []string) error {
	names := append([]string{ResultFile, CSVFile}, derived...)
	if d, err := ReadDocument(filepath.Join(dir, ResultFile)); err == nil {
		names = append(names, d.chartFiles()...)
	}
	for _, n := range names {
		if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// resumable reads the probes an earlier run of this solve left in dir:
// its probes.json must be this solve's, its probe lines this solve's
// (a line cut short by a kill is dropped).
func (p *Problem) resumable(dir string, r *searcher) error {
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &sweep.InputError{Msg: fmt.Sprintf("--resume: %v", err)}
	}
	var head struct {
		Solve string `json:"solve"`
	}
	if json.Unmarshal(data, &head) != nil || head.Solve != p.Hash {
		return &sweep.InputError{Msg: fmt.Sprintf("--resume: %s was written by another solve (%s; this one is %s): use a fresh -o directory or leave out --resume",
			filepath.Join(dir, ManifestFile), short(head.Solve), short(p.Hash))}
	}
	path := filepath.Join(dir, ProbesFile)
	complete, err := readProbes(path, sweep.LineID(p.Hash), r.known)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &sweep.InputError{Msg: fmt.Sprintf("--resume: %v", err)}
	}
	return os.Truncate(path, complete)
}

// readProbes adds the records of the probe file at path to known, by
// their settings, and returns how many bytes hold whole lines. A line of
// another solve is an error.
func readProbes(path, id string, known map[string]*sweep.Record) (int64, error) {
	return sweep.EachLine(path, func(k int, l sweep.Line) error {
		if l.Sweep != id {
			return fmt.Errorf("%s:%d belongs to solve %s, not %s", path, k, l.Sweep, id)
		}
		rec, err := l.Decode(path, k)
		if err != nil {
			return err
		}
		known[rec.ID()] = &rec
		return nil
	})
}

// short cuts a hash to 12 hex digits for a message.
func short(h string) string { return h[:min(len(h), len("sha256:")+12)] }

// Merge joins the output directories of a sharded solve into out, which
// then holds exactly the files an unsharded run writes: the common
// probes.json, every probe once in probe order, solve.json, solve.csv
// and the charts. The searches are replayed from the shards' probes, so
// every probe they ask for must be in a shard; shards must come from one
// solve. Anything else is a *sweep.InputError. The derived files (the
// report the command writes after) are removed from out first.
func Merge(out string, dirs []string, charts bool, derived ...string) (*Document, []string, error) {
	if len(dirs) == 0 {
		return nil, nil, &sweep.InputError{Msg: "merge: name at least one shard directory"}
	}
	var manifest []byte
	known := map[string]*sweep.Record{}
	var p *Problem
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
		if err != nil {
			return nil, nil, &sweep.InputError{Msg: fmt.Sprintf("merge: %v", err)}
		}
		if manifest == nil {
			manifest = data
			d, err := ParseDocument(filepath.Join(dir, ManifestFile), data)
			if err != nil {
				return nil, nil, &sweep.InputError{Msg: "merge: " + err.Error()}
			}
			if p, err = fromManifest(d); err != nil {
				return nil, nil, &sweep.InputError{Msg: fmt.Sprintf("merge: %s: %v", filepath.Join(dir, ManifestFile), err)}
			}
		} else if !bytes.Equal(data, manifest) {
			return nil, nil, &sweep.InputError{Msg: fmt.Sprintf("merge: %s is from another solve than %s", dir, dirs[0])}
		}
		if _, err := readProbes(filepath.Join(dir, ProbesFile), sweep.LineID(p.Hash), known); err != nil {
			return nil, nil, &sweep.InputError{Msg: fmt.Sprintf("merge: %v", err)}
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, nil, &sweep.InputError{Msg: fmt.Sprintf("merge: -o %s: %v", out, err)}
	}
	r := newSearcher(p, context.Background(), 1)
	r.known, r.replay = known, true
	crs, err := r.solve(p.cases)
	if err != nil {
		return nil, nil, err
	}
	if err := removeOutputs(out, derived); err != nil {
		return nil, nil, err
	}
	if err := atomicfile.Write(filepath.Join(out, ManifestFile), manifest); err != nil {
		return nil, nil, err
	}
	return p.finish(crs, RunOptions{Dir: out, NoCharts: !charts}, false)
}

// IsDir reports whether dir holds a solve's output (its probes.json),
// rather than a sweep's.
func IsDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, ManifestFile))
	return err == nil
}
