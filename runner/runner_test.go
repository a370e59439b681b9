package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"stormsim/config"
	"stormsim/results"
	"stormsim/sim"
)

const twoPolicies = "name: t\nseed: 3\nclients: 20\nadmission: {kind: slots, slot: 10ms, per_slot: 5}\n" +
	"policies:\n  - {name: exponential, base: 100ms, cap: 400ms}\n  - {name: full, label: jittered, base: 100ms, cap: 400ms}\n"

func scenario(t *testing.T) *sim.Scenario {
	t.Helper()
	s, err := config.Parse("t.yaml", []byte(twoPolicies), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// build runs every policy of s on workers goroutines into a document
// headed by s's hash and echo.
func build(t *testing.T, s *sim.Scenario, workers int) *results.Document {
	t.Helper()
	doc := results.New(s, config.Hash(s), config.Echo(s))
	if err := Build(doc, s, s.Policies, Options{Workers: workers}); err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestSelectPolicies(t *testing.T) {
	tests := []struct {
		name    string
		filter  []string
		want    string // labels in order
		wantErr string
	}{
		{"empty filter selects all", nil, "exponential,jittered", ""},
		{"config order, not filter order", []string{"jittered", "exponential"}, "exponential,jittered", ""},
		{"by label, not kind", []string{"jittered"}, "jittered", ""},
		{"unknown label", []string{"full"}, "", "--policy full: unknown policy; the config has exponential, jittered"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			specs, err := SelectPolicies(scenario(t), tt.filter)
			if tt.wantErr != "" {
				var upe *UnknownPolicyError
				if !errors.As(err, &upe) || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %s", err, tt.wantErr)
				}
				return
			}
			var labels []string
			for _, s := range specs {
				labels = append(labels, s.Label)
			}
			if got := strings.Join(labels, ","); got != tt.want || err != nil {
				t.Errorf("got %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}

// TestBuildEnvelope pins that Build fills in results and nothing else:
// the envelope is results.New's, with the hash and echo as given.
func TestBuildEnvelope(t *testing.T) {
	s := scenario(t)
	specs, err := SelectPolicies(s, []string{"jittered"})
	if err != nil {
		t.Fatal(err)
	}
	doc := results.New(s, "sha256:given", json.RawMessage(`{"given":true}`))
	if err := Build(doc, s, specs, Options{}); err != nil {
		t.Fatal(err)
	}
	if doc.SchemaVersion != 1 || doc.Tool != "stormsim "+results.Version || doc.ConfigHash != "sha256:given" ||
		doc.Name != "t" || doc.Seed != 3 || string(doc.Config) != `{"given":true}` {
		t.Errorf("bad envelope %+v", doc)
	}
	if len(doc.Results) != 1 || doc.Results[0].Policy != "jittered" || doc.Results[0].Clients != 20 {
		t.Errorf("results %+v, want one for jittered with 20 clients", doc.Results)
	}
}

// busy is a storm of some 1.8 M attempts: 600 clients retrying every
// millisecond against one admission per 10 ms, so that it reports
// progress (every sim.ProgressEvery attempts) on its way.
func busy(t *testing.T) *sim.Scenario {
	t.Helper()
	s, err := config.Parse("busy", []byte("clients: 600\nadmission: {kind: slots, slot: 10ms, per_slot: 1}\npolicies: [{name: none, min_gap: 1ms}]\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestBuildReportsAndStops pins the run hooks: progress reports while
// storms run and once each is done, a document identical to one built
// without hooks, and a cancelled context that stops a storm in the middle.
func TestBuildReportsAndStops(t *testing.T) {
	s := busy(t)
	var mu sync.Mutex
	reports, done := 0, 0
	doc := results.New(s, "", nil)
	err := Build(doc, s, s.Policies, Options{Progress: func(storm int, p sim.Progress, finished bool) {
		mu.Lock()
		defer mu.Unlock()
		if finished {
			done++
		} else if p.Attempts > 0 && p.Clients == 600 {
			reports++
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	plain := results.New(s, "", nil)
	if err := Build(plain, s, s.Policies, Options{}); err != nil {
		t.Fatal(err)
	}
	a, _ := doc.JSON()
	b, _ := plain.JSON()
	if !bytes.Equal(a, b) || done != 1 || reports < 1 {
		t.Errorf("same document %v, storms done %d, reports %d", bytes.Equal(a, b), done, reports)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stoppedAt := int64(0)
	stopped := results.New(s, "", nil)
	err = Build(stopped, s, s.Policies, Options{Context: ctx, Progress: func(_ int, p sim.Progress, finished bool) {
		if !finished && stoppedAt == 0 {
			stoppedAt = p.Attempts
			cancel()
		}
	}})
	if err != ErrStopped || stoppedAt == 0 || stoppedAt >= plain.Results[0].Attempts {
		t.Errorf("error %v after %d of %d attempts, want ErrStopped in the middle", err, stoppedAt, plain.Results[0].Attempts)
	}
	if len(stopped.Results) != 0 {
		t.Errorf("a stopped build left %d results in the document", len(stopped.Results))
	}
}

func replicated(t *testing.T, reps int) *sim.Scenario {
	t.Helper()
	s := scenario(t)
	s.Replications = reps
	return s
}

func TestReplicationsIdenticalForAnyWorkerCount(t *testing.T) {
	var first []byte
	for _, workers := range []int{1, 2, 3, 8} {
		got, err := build(t, replicated(t, 6), workers).JSON()
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = got
		} else if !bytes.Equal(got, first) {
			t.Errorf("workers=%d gave different bytes than workers=1", workers)
		}
	}
}

// TestReplicationsRunSuccessiveSeeds checks the summary against single
// runs of seeds seed, seed+1, ... built one by one.
func TestReplicationsRunSuccessiveSeeds(t *testing.T) {
	s := replicated(t, 4)
	doc := build(t, s, 3)
	if doc.Replications == nil || !slices.Equal(doc.Replications.Seeds, []uint64{3, 4, 5, 6}) {
		t.Fatalf("replications %+v, want seeds 3..6", doc.Replications)
	}
	for p, spec := range s.Policies {
		var attempts, convergence []float64
		for rep := range 4 {
			r, err := RunOne(s, spec, s.Seed+uint64(rep))
			if err != nil {
				t.Fatal(err)
			}
			if rep == 0 && !equalJSON(t, r, doc.Results[p]) {
				t.Errorf("%s: Results is not the first replication's result", spec.Label)
			}
			attempts = append(attempts, float64(r.Attempts))
			convergence = append(convergence, *r.ConvergenceMs)
		}
		sum := doc.Summary[p]
		a, _ := sum.Metrics.Lookup("attempts")
		c, _ := sum.Metrics.Lookup("convergence_ms")
		if sum.Policy != spec.Label || !slices.Equal(a.Runs, attempts) || !slices.Equal(c.Runs, convergence) {
			t.Errorf("%s: summary runs %v %v, want %v %v", spec.Label, a.Runs, c.Runs, attempts, convergence)
		}
		if _, ok := sum.Metrics.Lookup("connect_ms.p99"); !ok {
			t.Errorf("%s: nested metric connect_ms.p99 missing from summary", spec.Label)
		}
	}
}

func equalJSON(t *testing.T, a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// TestOneReplicationKeepsTheOldDocument pins that replications: 1 writes
// exactly the document of one run per policy, with no new keys.
func TestOneReplicationKeepsTheOldDocument(t *testing.T) {
	s := replicated(t, 1)
	doc := build(t, s, 4)
	want := results.New(s, config.Hash(s), config.Echo(s))
	for _, spec := range s.Policies {
		r, err := RunOne(s, spec, s.Seed)
		if err != nil {
			t.Fatal(err)
		}
		want.Results = append(want.Results, r)
	}
	got, _ := doc.JSON()
	wantJSON, _ := want.JSON()
	if !bytes.Equal(got, wantJSON) {
		t.Error("one replication changed the document")
	}
	if bytes.Contains(got, []byte(`"summary"`)) || bytes.Contains(got, []byte(`"replications": {`)) {
		t.Error("one replication wrote replication keys")
	}
}

func TestForEach(t *testing.T) {
	var calls atomic.Int64
	seen := make([]int, 100)
	if err := ForEach(100, 3, func(i int) error { calls.Add(1); seen[i]++; return nil }); err != nil {
		t.Fatal(err)
	}
	for i, n := range seen {
		if n != 1 {
			t.Fatalf("index %d ran %d times", i, n)
		}
	}
	errAt := func(bad ...int) func(int) error {
		return func(i int) error {
			if slices.Contains(bad, i) {
				return errors.New("bad " + string(rune('0'+i)))
			}
			return nil
		}
	}
	if err := ForEach(10, 1, errAt(3, 7)); err == nil || err.Error() != "bad 3" {
		t.Errorf("error %v, want the lowest failing index's", err)
	}
	err := ForEach(4, 2, func(i int) error {
		if i == 2 {
			panic("boom")
		}
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "run 2 panicked: boom") {
		t.Errorf("panic gave %v", err)
	}
	if err := ForEach(0, 4, errAt(0)); err != nil {
		t.Errorf("no work gave %v", err)
	}
}
