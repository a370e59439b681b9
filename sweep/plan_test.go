package sweep

import (
	"errors"
	"strings"
	"testing"
	"time"

	"stormsim/config"
)

// small is a sweep of a 20-client storm: cheap enough to run in tests.
const small = `name: small
replications: 2
scenario:
  name: small
  seed: 7
  clients: 20
  admission: {kind: slots, slot: 10ms, per_slot: 4}
  policies:
    - {name: full, base: 50ms, cap: 400ms}
    - {name: equal, base: 50ms, cap: 400ms}
axes:
  admission.per_slot: [2, 4, 8]
  policies[0].base: {from: 25ms, to: 100ms, steps: 2}
metrics:
  - convergence_ms
  - p95(results[equal].attempts)
`

func plan(t *testing.T, yaml string, replications int) *Plan {
	t.Helper()
	f, err := config.ParseSweep("s.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(f, replications)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGridOrderAndIDs(t *testing.T) {
	p := plan(t, small, 0)
	want := []string{
		"admission.per_slot=2 policies[0].base=25ms", "admission.per_slot=2 policies[0].base=100ms",
		"admission.per_slot=4 policies[0].base=25ms", "admission.per_slot=4 policies[0].base=100ms",
		"admission.per_slot=8 policies[0].base=25ms", "admission.per_slot=8 policies[0].base=100ms",
	}
	if p.Size != len(want) {
		t.Fatalf("%d points, want %d", p.Size, len(want))
	}
	for i := range p.Size {
		pt, err := p.Point(i)
		if err != nil {
			t.Fatal(err)
		}
		if pt.Index != i || pt.ID != want[i] {
			t.Errorf("point %d: index %d id %q, want %q", i, pt.Index, pt.ID, want[i])
		}
		s := pt.Scenario
		wantSlot := []int{2, 4, 8}[i/2]
		wantBase := []time.Duration{25 * time.Millisecond, 100 * time.Millisecond}[i%2]
		if s.Admission.PerSlot != wantSlot || s.Policies[0].Base != wantBase || s.Policies[1].Base != 50*time.Millisecond {
			t.Errorf("point %d: per_slot %d base %v (second policy %v)", i, s.Admission.PerSlot, s.Policies[0].Base, s.Policies[1].Base)
		}
		if pt.Coords[0] != i/2 || pt.Coords[1] != i%2 {
			t.Errorf("point %d coords %v", i, pt.Coords)
		}
	}
	if p.Replications != 2 || p.Seed != 7 || strings.Join(p.Labels, ",") != "full,equal" {
		t.Errorf("replications %d seed %d labels %v", p.Replications, p.Seed, p.Labels)
	}
	for _, tt := range []struct{ i, n, want int }{{1, 4, 2}, {0, 4, 2}, {3, 4, 1}, {0, 1, 6}, {5, 7, 1}, {6, 7, 0}} {
		if got := p.ShardSize(tt.i, tt.n); got != tt.want {
			t.Errorf("shard %d/%d has %d points, want %d", tt.i, tt.n, got, tt.want)
		}
	}
}

func TestHashIdentifiesTheSweep(t *testing.T) {
	a, b := plan(t, small, 0), plan(t, small, 0)
	if a.Hash != b.Hash || !strings.HasPrefix(a.Hash, "sha256:") {
		t.Errorf("same sweep, hashes %s %s", a.Hash, b.Hash)
	}
	changed := []string{
		strings.Replace(small, "[2, 4, 8]", "[2, 4, 9]", 1),
		strings.Replace(small, "seed: 7", "seed: 8", 1),
		strings.Replace(small, "replications: 2", "replications: 3", 1),
	}
	for _, y := range changed {
		if c := plan(t, y, 0); c.Hash == a.Hash {
			t.Errorf("a different sweep has the same hash:\n%s", y)
		}
	}
	if c := plan(t, small, 5); c.Hash == a.Hash || c.Replications != 5 {
		t.Error("--replications does not change the sweep")
	}
	// Metrics only choose charts: the points are the same.
	if c := plan(t, strings.Replace(small, "  - convergence_ms\n", "", 1), 0); c.Hash != a.Hash {
		t.Error("charting other metrics changed the hash")
	}
}

func TestPlanErrors(t *testing.T) {
	tests := []struct{ name, from, to, want string }{
		{"value invalid at one point", "[2, 4, 8]", "[2, 0, 8]",
			"s.yaml:12: admission.per_slot: must be >= 1 [at sweep point admission.per_slot=0 policies[0].base=25ms] (got 0)"},
		{"cross-field rule", "{from: 25ms, to: 100ms, steps: 2}", "[25ms, 1s]",
			"s.yaml:9: policies[0].cap: must be >= base (1s) [at sweep point admission.per_slot=2 policies[0].base=1s] (got 400ms)"},
		{"unknown key", "admission.per_slot:", "admission.per_slt:",
			"s.yaml:12: admission.per_slt: unknown key; did you mean per_slot? [at sweep point admission.per_slt=2 policies[0].base=25ms]"},
		{"misspelt metric", "- convergence_ms", "- convergense_ms",
			"s.yaml:15: metrics: convergense_ms: unknown metric; did you mean convergence_ms?"},
		{"a metric whose model is off everywhere", "- convergence_ms", "- reclaim.reclaim_ms",
			"s.yaml:15: metrics: reclaim.reclaim_ms: no point of the sweep has data for it: it comes from the lease: model, which is off"},
		{"statistic without replications", "replications: 2", "replications: 1",
			"s.yaml:16: metrics: p95(results[equal].attempts): statistics over replications need replications >= 2 (got 1); use results[equal].attempts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			y := strings.Replace(small, tt.from, tt.to, 1)
			f, err := config.ParseSweep("s.yaml", []byte(y))
			if err != nil {
				t.Fatal(err)
			}
			_, err = New(f, 0)
			if err == nil || err.Error() != tt.want {
				t.Errorf("error\n %v\nwant\n %s", err, tt.want)
			}
		})
	}
}

func TestGridArrangement(t *testing.T) {
	// Grid order with the first axis slowest: value = 100*x + 10*y + p.
	var v []float64
	for x := range 2 {
		for y := range 3 {
			for p := range 4 {
				v = append(v, float64(100*x+10*y+p))
			}
		}
	}
	g3 := grid3(v, 2, 3, 4)
	for p := range 4 {
		for y := range 3 {
			for x := range 2 {
				if g3[p][y][x] != float64(100*x+10*y+p) {
					t.Fatalf("grid3[%d][%d][%d] = %v", p, y, x, g3[p][y][x])
				}
			}
		}
	}
	g2 := grid2([]float64{0, 1, 2, 10, 11, 12}, 2, 3) // x in {0, 10}, y in {0, 1, 2}
	if g2[2][1] != 12 || g2[0][1] != 10 || g2[1][0] != 1 {
		t.Errorf("grid2 %v", g2)
	}
}

// TestCheckAsksOften: the check of a large grid asks its progress callback
// at least every 64 points. A point takes up to a third of a millisecond
// to check under the race detector on a loaded machine, so asking every
// 1,024 points let a Ctrl-C wait past the command's 750 ms grace (cli's
// TestEveryCommandStopsOnASignal/validate ended by the grace, not by the
// check); 64 points take some 20 ms.
func TestCheckAsksOften(t *testing.T) {
	f, err := config.ParseSweep("s.yaml", []byte(strings.Replace(small, "admission.per_slot: [2, 4, 8]", "admission.per_slot: {from: 1, to: 300, steps: 300}", 1)))
	if err != nil {
		t.Fatal(err)
	}
	p, err := open(f, 0)
	if err != nil {
		t.Fatal(err)
	}
	last, widest := 0, 0
	if err := p.Check(func(done int) bool {
		widest = max(widest, done-last)
		last = done
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if last != p.Size || widest > 64 {
		t.Errorf("asked last at %d of %d points, widest gap %d points; want every 64 at most", last, p.Size, widest)
	}
}

// TestCheckStopsWhenAsked pins that the check of a grid stops when its
// progress callback says so (Ctrl-C while a large grid is checked).
func TestCheckStopsWhenAsked(t *testing.T) {
	f, err := config.ParseSweep("s.yaml", []byte(small))
	if err != nil {
		t.Fatal(err)
	}
	p, err := open(f, 0)
	if err != nil {
		t.Fatal(err)
	}
	err = p.Check(func(int) bool { return false })
	var ie *InterruptedError
	if !errors.As(err, &ie) || !ie.Checking || ie.Done != 0 || ie.Points != 6 {
		t.Errorf("error %v, want an interrupted check of 0 of 6 points", err)
	}
	if err := p.Check(func(int) bool { return true }); err != nil || p.Hash == "" {
		t.Errorf("a check let run: %v", err)
	}
}
