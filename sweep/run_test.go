package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"stormsim/runner"
)

// dirFiles reads every file of dir by name.
func dirFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = data
	}
	return out
}

// readRecords decodes every line of a sweep.ndjson.
func readRecords(t *testing.T, path string) []Record {
	t.Helper()
	var out []Record
	if _, err := EachLine(path, func(k int, l Line) error {
		r, err := l.Decode(path, k)
		out = append(out, r)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func sameFiles(t *testing.T, got, want string) {
	t.Helper()
	g, w := dirFiles(t, got), dirFiles(t, want)
	var gn, wn []string
	for n := range g {
		gn = append(gn, n)
	}
	for n := range w {
		wn = append(wn, n)
	}
	slices.Sort(gn)
	slices.Sort(wn)
	if !slices.Equal(gn, wn) {
		t.Fatalf("%s holds %v, %s holds %v", got, gn, want, wn)
	}
	for n := range w {
		if !bytes.Equal(g[n], w[n]) {
			t.Errorf("%s differs between %s and %s", n, got, want)
		}
	}
}

func mustRun(t *testing.T, p *Plan, opt Options) []string {
	t.Helper()
	charts, err := p.Run(opt)
	if err != nil {
		t.Fatal(err)
	}
	return charts
}

func TestRunIsIdenticalForAnyWorkerCount(t *testing.T) {
	p := plan(t, small, 0)
	one, three := t.TempDir(), t.TempDir()
	mustRun(t, p, Options{Dir: one, Workers: 1, NoCharts: true})
	mustRun(t, p, Options{Dir: three, Workers: 3, NoCharts: true})
	sameFiles(t, three, one)
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range dirFiles(t, one) {
			if !yield(n) {
				return
			}
		}
	})
	if !slices.Equal(names, []string{CSVFile, ManifestFile, PointsFile}) {
		t.Errorf("files %v", names)
	}
}

// TestRecordsMatchDirectRuns checks each point's line against storms run
// one at a time with seeds seed, seed+1.
func TestRecordsMatchDirectRuns(t *testing.T) {
	p := plan(t, small, 0)
	dir := t.TempDir()
	mustRun(t, p, Options{Dir: dir, NoCharts: true})
	recs := readRecords(t, filepath.Join(dir, PointsFile))
	if len(recs) != p.Size {
		t.Fatalf("%d records for %d points", len(recs), p.Size)
	}
	for i, r := range recs {
		pt, err := p.Point(i)
		if err != nil {
			t.Fatal(err)
		}
		if r.Index != i || r.ID() != pt.ID || r.Sweep != LineID(p.Hash) || r.ConfigHash != pt.ConfigHash || r.Seed != 7 || r.Replications != 2 {
			t.Errorf("record %d header %+v", i, r)
		}
		if r.Values[0].Path != "admission.per_slot" || r.Values[1].Label != []string{"25ms", "100ms"}[i%2] {
			t.Errorf("record %d values %v", i, r.Values)
		}
		for pol, spec := range pt.Scenario.Policies {
			var want []float64
			for seed := uint64(7); seed < 9; seed++ {
				res, err := runner.RunOne(pt.Scenario, spec, seed)
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, *res.ConvergenceMs)
			}
			got, ok := r.Summaries()[pol].Metrics.Lookup("convergence_ms")
			if r.Results[pol].Policy != spec.Label || !ok || !slices.Equal(got.Runs, want) {
				t.Errorf("point %d %s: convergence runs %v, want %v", i, spec.Label, got.Runs, want)
			}
		}
	}
}

func TestShardsMergeToTheUnshardedSweep(t *testing.T) {
	p := plan(t, small, 0)
	whole := t.TempDir()
	charts := mustRun(t, p, Options{Dir: whole})
	// convergence_ms for both policies and p95 attempts of one, as heat maps.
	if len(charts) != 6 {
		t.Errorf("charts %v, want 3 heat maps in 2 formats", charts)
	}
	for _, shards := range []int{2, 4, 7} {
		var dirs []string
		for i := range shards {
			d := t.TempDir()
			mustRun(t, p, Options{Dir: d, Shard: i, Shards: shards, Workers: 1 + i%2})
			if _, err := os.Stat(filepath.Join(d, CSVFile)); err == nil {
				t.Error("a shard wrote the CSV")
			}
			dirs = append(dirs, d)
		}
		merged := t.TempDir()
		if _, err := Merge(merged, dirs, true); err != nil {
			t.Fatal(err)
		}
		sameFiles(t, merged, whole)
	}
}

func TestMergeErrors(t *testing.T) {
	p := plan(t, small, 0)
	var dirs []string
	for i := range 2 {
		d := t.TempDir()
		mustRun(t, p, Options{Dir: d, Shard: i, Shards: 2})
		dirs = append(dirs, d)
	}
	other := t.TempDir()
	mustRun(t, plan(t, small, 3), Options{Dir: other, Shard: 1, Shards: 2})
	tests := []struct {
		name string
		dirs []string
		want string
	}{
		{"missing shard", dirs[:1], "3 of 6 points are missing (first: point 1)"},
		{"shard twice", []string{dirs[0], dirs[1], dirs[0]}, "point 0 is in both"},
		{"other sweep", []string{dirs[0], other}, "is from another sweep"},
		{"no dirs", nil, "name at least one shard directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Merge(t.TempDir(), tt.dirs, false)
			var ie *InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want an InputError containing %q", err, tt.want)
			}
		})
	}
}

func TestResumeSkipsFinishedPoints(t *testing.T) {
	p := plan(t, small, 0)
	whole := t.TempDir()
	mustRun(t, p, Options{Dir: whole, NoCharts: true})
	lines := bytes.SplitAfter(dirFiles(t, whole)[PointsFile], []byte("\n"))

	dir := t.TempDir()
	// Two finished points and half of a third, as a killed run leaves them.
	cut := append(append(append([]byte{}, lines[0]...), lines[1]...), lines[2][:len(lines[2])/2]...)
	if err := os.WriteFile(filepath.Join(dir, PointsFile), cut, 0o644); err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	mustRun(t, p, Options{Dir: dir, Resume: true, NoCharts: true, Progress: NewProgress(&progress, false)})
	sameFiles(t, dir, whole)
	// 4 points were left, 2 policies x 2 replications each.
	if !strings.HasPrefix(progress.String(), "sweep: 6/6 points (2 resumed), 16/16 storms") {
		t.Errorf("progress %q, want 4 points run", progress.String())
	}
	// Resuming a finished sweep runs nothing.
	progress.Reset()
	mustRun(t, p, Options{Dir: dir, Resume: true, NoCharts: true, Progress: NewProgress(&progress, false)})
	if !strings.HasPrefix(progress.String(), "sweep: 6/6 points (6 resumed), 0/0 storms") {
		t.Errorf("progress %q, want nothing run", progress.String())
	}
	sameFiles(t, dir, whole)
}

func TestResumeRejectsForeignLines(t *testing.T) {
	p := plan(t, small, 0)
	dir := t.TempDir()
	mustRun(t, plan(t, small, 3), Options{Dir: dir, NoCharts: true})
	before := dirFiles(t, dir)[PointsFile]
	_, err := p.Run(Options{Dir: dir, Resume: true, NoCharts: true})
	var ie *InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "was written by another sweep") {
		t.Errorf("error %v, want another-sweep InputError", err)
	}
	if !bytes.Equal(dirFiles(t, dir)[PointsFile], before) {
		t.Error("a rejected resume changed sweep.ndjson")
	}
	shard := t.TempDir()
	mustRun(t, p, Options{Dir: shard, Shard: 1, Shards: 3, NoCharts: true})
	_, err = p.Run(Options{Dir: shard, Resume: true, Shard: 0, Shards: 3})
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "holds point 1 where this run expects point 0") {
		t.Errorf("error %v, want wrong-shard InputError", err)
	}
}

func TestFinalizeNeedsEveryPoint(t *testing.T) {
	p := plan(t, small, 0)
	dir := t.TempDir()
	mustRun(t, p, Options{Dir: dir, Shard: 0, Shards: 2})
	_, err := Finalize(dir, false)
	if err == nil || !strings.Contains(err.Error(), "3 of 6 points are done") {
		t.Errorf("error %v", err)
	}
}

func TestCSV(t *testing.T) {
	one := plan(t, strings.Replace(strings.Replace(small, "replications: 2", "replications: 1", 1), "  - p95(results[equal].attempts)\n", "", 1), 0)
	dir := t.TempDir()
	mustRun(t, one, Options{Dir: dir, NoCharts: true})
	rows := strings.Split(strings.TrimSpace(string(dirFiles(t, dir)[CSVFile])), "\n")
	if len(rows) != 1+6*2 {
		t.Fatalf("%d rows, want a header and 12", len(rows))
	}
	if !strings.HasPrefix(rows[0], "index,id,admission.per_slot,policies[0].base,seed,replications,policy,clients,attempts,") || strings.Contains(rows[0], "std(") {
		t.Errorf("header %s", rows[0])
	}
	recs := readRecords(t, filepath.Join(dir, PointsFile))
	attempts, _ := recs[5].Summaries()[1].Metrics.Lookup("attempts")
	want := "5,admission.per_slot=8 policies[0].base=100ms,8,100ms,7,1,equal,20," + number(attempts.Mean) + ","
	if !strings.HasPrefix(rows[12], want) {
		t.Errorf("last row %s, want prefix %s", rows[12], want)
	}
	replicated := t.TempDir()
	mustRun(t, plan(t, small, 0), Options{Dir: replicated, NoCharts: true})
	header, _, _ := strings.Cut(string(dirFiles(t, replicated)[CSVFile]), "\n")
	if !strings.Contains(header, ",attempts,std(attempts),p50(attempts),p95(attempts),p99(attempts),min(attempts),max(attempts),ci95_lo(attempts),ci95_hi(attempts),") {
		t.Errorf("replicated header %s", header)
	}
}

func TestAxisValuesJSONKeepsOrder(t *testing.T) {
	in := AxisValues{{"z", "1"}, {"a", "2s"}}
	data, _ := json.Marshal(in)
	if string(data) != `{"z":"1","a":"2s"}` {
		t.Errorf("got %s", data)
	}
	var out AxisValues
	if err := json.Unmarshal(data, &out); err != nil || !slices.Equal(out, in) {
		t.Errorf("round trip %v %v", out, err)
	}
}

func TestProgressLines(t *testing.T) {
	for _, tt := range []struct {
		live       bool
		prefix     string
		suffix     string
		grid, pts  int
		resumed    int
		wantPrefix string
	}{
		{true, "\r\033[K", "\n", 10, 10, 0, "sweep: 1/10 points, 1/5 storms, "},
		{false, "", "\n", 10, 4, 1, "sweep: 2/4 points (1 resumed, shard of 10), 1/5 storms, "},
	} {
		var b bytes.Buffer
		p := NewProgress(&b, tt.live)
		p.Begin(Totals{Title: "sweep", Unit: "points", Units: tt.pts, Whole: tt.grid, Resumed: tt.resumed, Storms: 5, Work: 500})
		p.StormDone(100)
		p.UnitDone()
		p.End()
		got := b.String()
		if !strings.HasPrefix(got, tt.prefix+tt.wantPrefix) || !strings.HasSuffix(got, tt.suffix) || strings.Count(got, "\n") != 1 {
			t.Errorf("live=%v: %q", tt.live, got)
		}
	}
	var nilProgress *Progress
	nilProgress.Begin(Totals{Units: 1, Whole: 1, Storms: 1, Work: 1})
	nilProgress.StormDone(1)
	nilProgress.Say("x")
	nilProgress.Checking("x", 1, 2)
	nilProgress.End()
}

// TestETAWeighsStormsByClients pins the time left on work, not on storms
// counted alike: 10 storms of 10 clients then 10 of 90 (work 100 + 900).
// The first ten took 10 s, so 900 more client-storms take 90 s; counting
// storms would say 10 s.
// TestCheckingIsQuietForSmallGrids pins that checking a grid says nothing
// when it takes less than one report interval, and otherwise a line per
// interval and the final count.
func TestCheckingIsQuietForSmallGrids(t *testing.T) {
	clock := time.Unix(1000, 0)
	var b bytes.Buffer
	p := NewProgress(&b, false)
	p.now = func() time.Time { return clock }
	p.Checking("g", 0, 10)
	p.Checking("g", 10, 10)
	if b.Len() != 0 {
		t.Errorf("a quick check printed %q", b.String())
	}
	q := NewProgress(&b, false)
	q.now = func() time.Time { return clock }
	q.Checking("g: 3 points", 0, 3)
	clock = clock.Add(PlainEvery)
	q.Checking("g: 3 points", 1, 3)
	clock = clock.Add(time.Second)
	q.Checking("g: 3 points", 2, 3) // within the interval: quiet
	q.Checking("g: 3 points", 3, 3)
	if want := "g: 3 points; checking every point: 1/3\ng: 3 points; checking every point: 3/3\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func TestETAWeighsStormsByClients(t *testing.T) {
	clock := time.Unix(1000, 0)
	p := NewProgress(io.Discard, false)
	p.now = func() time.Time { return clock }
	p.Begin(Totals{Title: "sweep", Unit: "points", Units: 2, Whole: 2, Storms: 20, Work: 1000})
	defer p.End()
	for range 10 {
		p.StormDone(10)
	}
	p.UnitDone()
	clock = clock.Add(10 * time.Second)
	if got, want := p.line(false), "sweep: 1/2 points, 10/20 storms, 10s, about 1m30s left"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	// No ETA before a second has passed or any work is done.
	q := NewProgress(io.Discard, false)
	q.now = func() time.Time { return clock }
	q.Begin(Totals{Title: "sweep", Unit: "points", Units: 1, Whole: 1, Storms: 1, Work: 10})
	defer q.End()
	if got := q.line(false); strings.Contains(got, "left") {
		t.Errorf("an ETA with nothing done: %q", got)
	}
}

// TestChartsPerAxisCount pins which charts a sweep draws: one line chart
// per metric (a line per policy) for one axis, and one small-multiples
// chart per metric and policy for three.
func TestChartsPerAxisCount(t *testing.T) {
	oneAxis := strings.Replace(small, "  policies[0].base: {from: 25ms, to: 100ms, steps: 2}\n", "", 1)
	threeAxes := strings.Replace(small, "axes:\n", "axes:\n  initial_jitter: [0s, 50ms]\n", 1)
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"one axis", oneAxis, []string{"convergence_ms", "equal-p95-attempts"}},
		{"three axes", threeAxes, []string{"convergence_ms-full", "convergence_ms-equal", "equal-p95-attempts"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			charts := mustRun(t, plan(t, tt.yaml, 0), Options{Dir: dir})
			var want []string
			for _, c := range tt.want {
				want = append(want, filepath.Join(dir, c+".png"), filepath.Join(dir, c+".svg"))
			}
			if !slices.Equal(charts, want) {
				t.Errorf("charts\n %v\nwant\n %v", charts, want)
			}
		})
	}
}

// TestInterruptLeavesWholeLinesToResume pins what Ctrl-C leaves: the
// points finished so far, each line whole, an InterruptedError that says
// how many, and a directory that --resume finishes into exactly what an
// uninterrupted sweep writes.
func TestInterruptLeavesWholeLinesToResume(t *testing.T) {
	p := plan(t, small, 0)
	whole := t.TempDir()
	mustRun(t, p, Options{Dir: whole, NoCharts: true})
	for _, workers := range []int{1, 3} {
		dir := t.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		_, err := p.Run(Options{Dir: dir, NoCharts: true, Workers: workers, Context: ctx, afterLine: func(written int) {
			if written == 2 {
				cancel()
			}
		}})
		cancel()
		var ie *InterruptedError
		// The points in flight when it stopped may all have finished: then
		// it stopped while writing the CSV.
		if !errors.As(err, &ie) || ie.Points != 6 || ie.Done < 2 || ie.Finishing != (ie.Done == 6) || ie.File != filepath.Join(dir, PointsFile) {
			t.Fatalf("workers %d: error %v (%+v), want an InterruptedError after 2 to 6 of 6 points", workers, err, ie)
		}
		data := dirFiles(t, dir)[PointsFile]
		lines := bytes.SplitAfter(data, []byte("\n"))
		if len(lines) != ie.Done+1 || len(lines[ie.Done]) != 0 || !bytes.Equal(data, bytes.Join(bytes.SplitAfter(dirFiles(t, whole)[PointsFile], []byte("\n"))[:ie.Done], nil)) {
			t.Errorf("workers %d: sweep.ndjson is not the first %d whole lines of the full sweep", workers, ie.Done)
		}
		if _, err := os.Stat(filepath.Join(dir, CSVFile)); err == nil {
			t.Error("an interrupted sweep wrote its CSV")
		}
		mustRun(t, p, Options{Dir: dir, Resume: true, NoCharts: true, Workers: workers})
		sameFiles(t, dir, whole)
	}
	// Cancelled before it starts: nothing run, nothing lost.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := p.Run(Options{Dir: t.TempDir(), Context: ctx})
	var ie *InterruptedError
	if !errors.As(err, &ie) || ie.Done != 0 {
		t.Errorf("error %v, want nothing done", err)
	}
}

// TestRerunRemovesChartsOfAnEarlierSweep pins that charts of metrics the
// earlier sweep in a directory drew and this one does not are removed.
func TestRerunRemovesChartsOfAnEarlierSweep(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o644)
	mustRun(t, plan(t, small, 0), Options{Dir: dir})
	if _, ok := dirFiles(t, dir)["equal-p95-attempts.png"]; !ok {
		t.Fatal("the first sweep drew no equal-p95-attempts chart")
	}
	fewer := strings.Replace(small, "  - p95(results[equal].attempts)\n", "", 1)
	mustRun(t, plan(t, fewer, 0), Options{Dir: dir})
	var names []string
	for n := range dirFiles(t, dir) {
		names = append(names, n)
	}
	slices.Sort(names)
	want := "convergence_ms-equal.png convergence_ms-equal.svg convergence_ms-full.png convergence_ms-full.svg notes.txt sweep.csv sweep.json sweep.ndjson"
	if strings.Join(names, " ") != want {
		t.Errorf("files\n %s\nwant\n %s", strings.Join(names, " "), want)
	}
}

// TestLinesAreCompact pins the layout of a line: each metric named once,
// each run's values, no statistics (they are computed from the values).
func TestLinesAreCompact(t *testing.T) {
	p := plan(t, small, 0)
	dir := t.TempDir()
	mustRun(t, p, Options{Dir: dir, NoCharts: true})
	first, _, _ := bytes.Cut(dirFiles(t, dir)[PointsFile], []byte("\n"))
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(first, &raw); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if strings.Join(keys, " ") != "config_hash index metrics replications results seed sweep values" {
		t.Errorf("keys %v", keys)
	}
	if bytes.Contains(first, []byte(`"mean"`)) || bytes.Count(first, []byte(`"attempts"`)) != 1 {
		t.Errorf("a line repeats names or holds statistics: %s", first)
	}
	// 2 policies x 2 replications x the metrics of a core result, about
	// 10 bytes a value, and each name once: well under 1.5 KB.
	if len(first) > 1500 {
		t.Errorf("a line of %d bytes", len(first))
	}
}
