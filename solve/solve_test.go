package solve

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"stormsim/config"
	"stormsim/runner"
)

// seedModel bases a solve on the seed's discrete backoff model as
// shipped (configs/seed-backoff-model.yaml: 1,000 clients, slots of 10 ms,
// base 100 ms, cap 3.2 s, no network), one replication; a requirement on
// results[exponential] runs exponential backoff alone, without jitter.
var seedModel = func() string {
	path, err := filepath.Abs("../configs/seed-backoff-model.yaml")
	if err != nil {
		panic(err)
	}
	return "base: " + path + "\nreplications: 1\n"
}()

// solveFile writes a solve file into a temporary directory and loads it.
func solveFile(t *testing.T, body string) *Problem {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Load(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func run(t *testing.T, p *Problem, opt RunOptions) *Document {
	t.Helper()
	d, _, err := p.Run(opt)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// converges is the seed model's closed form, derived by hand: without
// jitter the 1,000 - k x per_slot clients rejected in round k all retry
// together, after 100, 200, 400, 800, 1,600 and then cap 3,200 ms, so
// round k starts at 0, 100, 300, 700, 1,500, 3,100 ms and 3,200 ms
// later each after; R = ceil(1000 / per_slot) rounds admit everyone, and
// the last client connects when round R starts: 3,100 + (R - 6) x 3,200
// ms for R >= 6, the seed's 623,900 ms at per_slot 5. With a cap of
// 1.6 s the rounds after 1,500 ms come 1,600 ms apart: 1,500 + (R - 5) x
// 1,600 ms for R >= 5.
func converges(clients, perSlot int, capMs float64) float64 {
	r := float64((clients + perSlot - 1) / perSlot)
	if capMs == 1600 {
		return 1500 + (r-5)*1600
	}
	return 3100 + (r-6)*3200
}

// leastPerSlot is the least per_slot in [lo, hi] whose closed-form
// convergence is at most target, by trying each; 0 if none.
func leastPerSlot(clients, lo, hi int, capMs, target float64) int {
	for p := lo; p <= hi; p++ {
		if converges(clients, p, capMs) <= target {
			return p
		}
	}
	return 0
}

// TestLeastPerSlotMatchesTheClosedForm is the exactness test: for
// several targets, the least admission.per_slot that brings everyone
// back in time is the one the closed form gives, found by bisection
// within the probe bound, every probe's convergence the closed form's.
func TestLeastPerSlotMatchesTheClosedForm(t *testing.T) {
	if got := converges(1000, 5, 3200); got != 623900 {
		t.Fatalf("the closed form gives %v at per_slot 5, the seed 623,900 ms", got)
	}
	for _, target := range []float64{3100, 6299, 6300, 15900, 60000, 100000, 623899, 623900} {
		want := leastPerSlot(1000, 1, 199, 3200, target)
		p := solveFile(t, seedModel+"vary: {key: admission.per_slot, min: 1, max: 199, goal: least, resolution: 1}\n"+
			"require:\n  - results[exponential].convergence_ms <= "+formatNumber(target/1000)+"s\n")
		d := run(t, p, RunOptions{})
		r := d.Cases[0].Result
		if r.Status != "answer" || r.Answer.Value != formatNumber(float64(want)) {
			t.Errorf("target %v ms: answer %+v, the closed form's least per_slot %d", target, r.Answer, want)
			continue
		}
		if want > 1 && (len(r.Answer.Bracket) != 2 || r.Answer.Bracket[0].Value != formatNumber(float64(want-1))) {
			t.Errorf("target %v ms: bracket %+v, want [%d, %d]", target, r.Answer.Bracket, want-1, want)
		}
		if bound := int(math.Ceil(math.Log2(198))) + 2 + 2; len(d.Probes) > bound {
			t.Errorf("target %v ms: %d probes, bound %d", target, len(d.Probes), bound)
		}
		for _, pr := range d.Probes {
			ps := pr.Settings[0].Label
			var ps0 int
			for _, c := range ps {
				ps0 = ps0*10 + int(c-'0')
			}
			if got := float64(pr.Observations[0].Observed); got != converges(1000, ps0, 3200) {
				t.Errorf("probe per_slot %s: convergence %v, closed form %v", ps, got, converges(1000, ps0, 3200))
			}
		}
	}
}

// TestTwoSidedIntervalOfTheSeedModel bounds per_slot from both sides:
// everyone back within 60 s needs per_slot >= 44 (the closed form:
// R <= 23), at most 40 admissions a 10 ms window allows per_slot <= 40
// (the peak is per_slot: the first slot fills). With 100 a window the
// interval is [44, 100]; the low end binds on convergence, the high end
// on the peak.
func TestTwoSidedIntervalOfTheSeedModel(t *testing.T) {
	low := leastPerSlot(1000, 1, 500, 3200, 60000)
	for _, goal := range []string{"least", "most"} {
		p := solveFile(t, seedModel+"vary: {key: admission.per_slot, min: 1, max: 500, goal: "+goal+", resolution: 1}\n"+
			"require:\n  - results[exponential].convergence_ms <= 60s\n  - results[exponential].peak_accepts_per_window <= 100\n")
		r := run(t, p, RunOptions{}).Cases[0].Result
		if r.Status != "answer" || r.Interval == nil {
			t.Fatalf("%s: %+v", goal, r)
		}
		iv := r.Interval
		if iv.Low.Value != formatNumber(float64(low)) || iv.High.Value != "100" {
			t.Errorf("%s: interval [%s, %s], want [%d, 100]", goal, iv.Low.Value, iv.High.Value, low)
		}
		if len(iv.Low.Binding) != 1 || iv.Low.Binding[0].Requirement != 0 || len(iv.High.Binding) != 1 || iv.High.Binding[0].Requirement != 1 {
			t.Errorf("%s: binding %+v at the low end, %+v at the high end", goal, iv.Low.Binding, iv.High.Binding)
		}
		want := iv.Low.Value
		if goal == "most" {
			want = iv.High.Value
		}
		if r.Answer.Value != want {
			t.Errorf("%s: answer %s, want %s", goal, r.Answer.Value, want)
		}
	}
}

// TestInfeasibleSaysWhatFailsAndWhatToRelax asks for everyone back
// within 60 s (per_slot >= 44) with at most 40 admissions a window
// (per_slot <= 40): nothing passes. Each requirement's end is named,
// and the relaxations are the closed form's: at per_slot 40, the most
// the peak allows, the last client is back after R = 25 rounds,
// 3,100 + 19 x 3,200 = 63,900 ms; at 44, the least the window allows,
// the peak is 44.
func TestInfeasibleSaysWhatFailsAndWhatToRelax(t *testing.T) {
	p := solveFile(t, seedModel+"vary: {key: admission.per_slot, min: 1, max: 500, goal: least, resolution: 1}\n"+
		"require:\n  - results[exponential].convergence_ms <= 60s\n  - results[exponential].peak_accepts_per_window <= 40\n")
	d := run(t, p, RunOptions{})
	c := d.Cases[0]
	r := c.Result
	if d.Status != "infeasible" || r.Status != "infeasible" || r.Closest == nil {
		t.Fatalf("%+v", r)
	}
	if !slices.Equal(r.FailsAtMin, []int{0}) || !slices.Equal(r.FailsAtMax, []int{1}) {
		t.Errorf("fails at min %v, at max %v", r.FailsAtMin, r.FailsAtMax)
	}
	if r.Interval.Low.Value != "44" || r.Interval.High.Value != "40" {
		t.Errorf("each requirement's end: %s and %s, want 44 and 40", r.Interval.Low.Value, r.Interval.High.Value)
	}
	if x := r.Closest.Value; x != "40" && x != "41" && x != "42" && x != "43" && x != "44" {
		t.Errorf("closest %s, want between the two ends", x)
	}
	if len(c.Relax) != 2 {
		t.Fatalf("relax %+v", c.Relax)
	}
	if rx := c.Relax[0]; rx.At.Value != "40" || float64(rx.Needs) != converges(1000, 40, 3200) {
		t.Errorf("relax the window: %+v, want 63,900 ms at 40", rx)
	}
	if rx := c.Relax[1]; rx.At.Value != "44" || rx.Needs != 44 {
		t.Errorf("relax the peak: %+v, want 44 at 44", rx)
	}
	if extra := len(c.Searches[1].Steps) + len(c.Searches[2].Steps); extra != 0 {
		t.Errorf("the relaxations ran %d probes; the answer's probes hold them", extra)
	}
}

// TestGivenNamesTheBindingCombination guesses the clients (1,000 or
// 2,000) and the backoff cap (1.6 s or 3.2 s): the closed forms give the
// least per_slot for 60 s under each, and the answer that holds for
// every combination is the largest, 2,000 clients with the 3.2 s cap;
// each guess alone (the other as the base has it) gives the closed form
// of that value, and the answer of the same solve with the value set
// and no given.
func TestGivenNamesTheBindingCombination(t *testing.T) {
	const target = 60000
	body := seedModel + "vary: {key: admission.per_slot, min: 1, max: 500, goal: least, resolution: 1}\n" +
		"require:\n  - results[exponential].convergence_ms <= 60s\n"
	given := "given:\n  clients: [1000, 2000]\n  policies[0].cap: [1600ms, 3200ms]\n"
	d := run(t, solveFile(t, body+given), RunOptions{})
	c := d.Cases[0]
	want := 0
	for _, n := range []int{1000, 2000} {
		for _, capMs := range []float64{1600, 3200} {
			want = max(want, leastPerSlot(n, 1, 500, capMs, target))
		}
	}
	if c.Result.Answer == nil || c.Result.Answer.Value != formatNumber(float64(want)) {
		t.Fatalf("answer %+v, want %d", c.Result.Answer, want)
	}
	if b := c.Result.Answer.Binding; len(b) != 1 || b[0].Combination != "clients=2000 policies[0].cap=3200ms" {
		t.Errorf("binding %+v, want clients=2000 policies[0].cap=3200ms", b)
	}
	alone := map[string]int{
		"clients=1000":           leastPerSlot(1000, 1, 500, 3200, target),
		"clients=2000":           leastPerSlot(2000, 1, 500, 3200, target),
		"policies[0].cap=1600ms": leastPerSlot(1000, 1, 500, 1600, target),
		"policies[0].cap=3200ms": leastPerSlot(1000, 1, 500, 3200, target),
	}
	s := c.Sensitivity
	if s == nil || s.Base == nil || s.Base.Value != formatNumber(float64(leastPerSlot(1000, 1, 500, 3200, target))) {
		t.Fatalf("sensitivity %+v", s)
	}
	for _, k := range s.Keys {
		for _, v := range k.Values {
			id := k.Key + "=" + v.Given.Value
			if v.Answer == nil || v.Answer.Value != formatNumber(float64(alone[id])) {
				t.Errorf("%s alone: %+v, closed form %d", id, v.Answer, alone[id])
			}
			path := filepath.Join(t.TempDir(), "alone.yaml")
			os.WriteFile(path, []byte(body), 0o644)
			p, err := Load(path, Options{Sets: []string{id}})
			if err != nil {
				t.Fatal(err)
			}
			solo := run(t, p, RunOptions{}).Cases[0].Result.Answer
			if solo == nil || v.Answer == nil || solo.Value != v.Answer.Value {
				t.Errorf("%s alone: %+v in the table, %+v solved alone", id, v.Answer, solo)
			}
		}
	}
}

// TestTheOutputDoesNotDependOnHowItRuns pins determinism and resuming:
// one worker or four, a run resumed from a cut probe file, and two
// shards merged write the same files, byte for byte.
func TestTheOutputDoesNotDependOnHowItRuns(t *testing.T) {
	body := seedModel + "vary: {key: admission.per_slot, min: 1, max: 500, goal: least, resolution: 1}\n" +
		"require:\n  - results[exponential].convergence_ms <= 60s\n  - results[exponential].peak_accepts_per_window <= 40\n" +
		"across: {key: clients, values: [500, 1000, 1500]}\ngiven:\n  policies[0].cap: [1600ms, 3200ms]\n"
	p := solveFile(t, body)
	one, four := t.TempDir(), t.TempDir()
	run(t, p, RunOptions{Dir: one, Workers: 1})
	run(t, p, RunOptions{Dir: four, Workers: 4})
	sameDir(t, one, four)

	// A probe file cut after three whole lines and half a fourth.
	resumed := t.TempDir()
	data, _ := os.ReadFile(filepath.Join(one, ProbesFile))
	lines := strings.SplitAfter(string(data), "\n")
	cut := strings.Join(lines[:3], "") + lines[3][:len(lines[3])/2]
	run(t, p, RunOptions{Dir: resumed}) // a manifest of this solve
	os.WriteFile(filepath.Join(resumed, ProbesFile), []byte(cut), 0o644)
	run(t, p, RunOptions{Dir: resumed, Resume: true})
	sameDir(t, one, resumed)

	a, b, merged := t.TempDir(), t.TempDir(), t.TempDir()
	if d := run(t, p, RunOptions{Dir: a, Shard: 0, Shards: 2}); d != nil {
		t.Error("a shard returned a document")
	}
	run(t, p, RunOptions{Dir: b, Shard: 1, Shards: 2})
	if _, _, err := Merge(merged, []string{a, b}, true); err != nil {
		t.Fatal(err)
	}
	sameDir(t, one, merged)
	if _, _, err := Merge(t.TempDir(), []string{a}, true); err == nil || !strings.Contains(err.Error(), "is in no shard") {
		t.Errorf("merging one shard of two: %v", err)
	}
}

// sameDir fails unless dirs a and b hold the same files, byte for byte.
func sameDir(t *testing.T, a, b string) {
	t.Helper()
	read := func(dir string) map[string][]byte {
		out := map[string][]byte{}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			out[e.Name()] = data
		}
		return out
	}
	fa, fb := read(a), read(b)
	for name, data := range fa {
		if other, ok := fb[name]; !ok {
			t.Errorf("%s: only in %s", name, a)
		} else if string(other) != string(data) {
			t.Errorf("%s differs between %s and %s", name, a, b)
		}
	}
	for name := range fb {
		if _, ok := fa[name]; !ok {
			t.Errorf("%s: only in %s", name, b)
		}
	}
}

// TestBadSolveFiles pins the errors of what cannot be solved, each at
// its file, line and key.
func TestBadSolveFiles(t *testing.T) {
	base := seedModel + "vary: {key: admission.per_slot, min: 1, max: 500, goal: least, resolution: 1}\n" +
		"require:\n  - results[exponential].convergence_ms <= 60s\n"
	for _, tt := range []struct{ name, from, to, want string }{
		{"a key that cannot be varied", "key: admission.per_slot", `key: "policies[0].name"`, "s.yaml:3: vary.key: cannot be varied: policies[0].name is a string, not a number or a duration"},
		{"the seed", "key: admission.per_slot, min: 1, max: 500", "key: seed, min: 1, max: 500", "s.yaml:3: vary.key: cannot be varied: seed is where every probe's seeds start (seed to seed + replications - 1); a verdict has no order in it: set replications: for more seeds"},
		{"no such key", "key: admission.per_slot", "key: admission.per_slt", "s.yaml:3: vary.key: cannot be varied: no scenario key admission.per_slt; did you mean admission.per_slot?"},
		{"min >= max", "min: 1,", "min: 500,", "s.yaml:3: vary.min: must be below max (got min 500, max 500)"},
		{"a resolution finer than the unit", "resolution: 1}", "resolution: 0.5}", "s.yaml:3: vary.resolution: want a percentage such as 1% or a width in the key's unit: admission.per_slot is a count: want a whole number >= 0 (got 0.5)"},
		{"a duration finer than a microsecond", "key: admission.per_slot, min: 1, max: 500, goal: least, resolution: 1", `key: "policies[0].base", min: 10ms, max: 1s, goal: least, resolution: 100ns`, "s.yaml:3: vary.resolution: 100ns is finer than the duration's unit, 1µs (got 100ns)"},
		{"a missing metric", "convergence_ms <= 60s", "convergense_ms <= 60s", "s.yaml:5: require: results[exponential].convergense_ms: unknown metric; did you mean results[exponential].convergence_ms?"},
		{"a missing policy", "results[exponential]", "results[fast]", "s.yaml:5: require: results[fast].convergence_ms: no policy labelled fast (the config has exponential, full); did you mean results[full].convergence_ms?"},
		{"no side", "<= 60s", "== 60s", "s.yaml:5: require: results[exponential].convergence_ms == 60s: a requirement needs a side to fail on: use <, <=, > or >= (got ==)"},
		{"a model that is off", "convergence_ms <= 60s", "database.peak_rows_per_s <= 100", "s.yaml:5: require: results[exponential].database.peak_rows_per_s: no probe of the solve has data for it: it comes from the database: model, which is off"},
		{"a bad goal", "goal: least", "goal: lowest", "s.yaml:3: vary.goal: must be least or most (got lowest)"},
		{"a bad probe value", "min: 1,", "min: 0,", "s.yaml:3: admission.per_slot: must be >= 1 [at solve probe admission.per_slot=0] (got 0)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.yaml")
			os.WriteFile(path, []byte(strings.Replace(base, tt.from, tt.to, 1)), 0o644)
			_, err := Load(path, Options{})
			var ce *config.Error
			if err == nil || !strings.HasSuffix(err.Error(), tt.want) || !asConfigError(err, &ce) {
				t.Errorf("error\n %v\nwant one ending\n %s", err, tt.want)
			}
		})
	}
}

func asConfigError(err error, ce **config.Error) bool {
	e, ok := err.(*config.Error)
	*ce = e
	return ok
}

// TestNonMonotoneOfTheSeedModel is a constructed case from the
// simulator itself: with full jitter and one seed, the convergence of the
// seed model is not monotone in the cap (3.81 s at a cap of 1.6 s, 3.21 s
// at 2 s, 4.76 s at 2.8 s). Solving for the most cap in [1.2 s, 2.8 s]
// that brings everyone back within 3.3 s with at most 5,130 attempts, the
// first middle (2 s) passes both, and the next (1.6 s) fails the window
// between two passes: the search says so, scans the grid and reports
// every feasible stretch. Each reported verdict is checked against a run
// of the storm.
func TestNonMonotoneOfTheSeedModel(t *testing.T) {
	full := seedModel
	p := solveFile(t, full+`vary: {key: "policies[1].cap", min: 1200ms, max: 2800ms, goal: most, resolution: 10ms}
require:
  - results[full].convergence_ms <= 3.3s
  - results[full].attempts <= 5130
`)
	d := run(t, p, RunOptions{})
	r := d.Cases[0].Result
	if r.Monotone || len(r.Violations) == 0 {
		t.Fatalf("not reported: %+v", r)
	}
	v := r.Violations[0]
	if v.Requirement != 0 || v.Fail.Value != "1.6s" {
		t.Errorf("violation %+v, want the window failing at 1.6s between passes", v)
	}
	if len(d.Cases[0].Searches[0].Steps) < DefaultScan+1 {
		t.Errorf("%d probes: the grid was not scanned", len(d.Cases[0].Searches[0].Steps))
	}
	// Every verdict the solve reports is the storm's own.
	verdict := map[string]bool{}
	for _, pr := range d.Probes {
		label := pr.Settings[0].Label
		conv, attempts := stormAtCap(t, full, label)
		want := conv <= 3300 && attempts <= 5130
		if pr.Pass != want || float64(pr.Observations[0].Observed) != conv {
			t.Errorf("cap %s: reported pass %v (%v ms), the storm %v ms and %v attempts", label, pr.Pass, pr.Observations[0].Observed, conv, attempts)
		}
		verdict[label] = pr.Pass
	}
	if len(r.Stretches) == 0 {
		t.Fatal("no feasible stretch reported")
	}
	for _, st := range r.Stretches {
		if !verdict[st.Low.Value] || !verdict[st.High.Value] {
			t.Errorf("stretch %s to %s does not pass at its ends", st.Low.Value, st.High.Value)
		}
	}
	if r.Answer == nil || r.Answer.Value != r.Stretches[len(r.Stretches)-1].High.Value {
		t.Errorf("answer %+v, want the top of the last stretch", r.Answer)
	}
}

// stormAtCap runs the model's storm with the cap set, as stormsim run
// would, and returns its convergence and attempts.
func stormAtCap(t *testing.T, body, capLabel string) (convergenceMs, attempts float64) {
	t.Helper()
	f, err := config.ParseSolve("m.yaml", []byte(body+"vary: {key: clients, min: 1, max: 2, goal: least, resolution: 1}\nrequire: [attempts > 0]\n"))
	if err != nil {
		t.Fatal(err)
	}
	doc := f.Base.Clone()
	if err := doc.Set("policies[1].cap", capLabel); err != nil {
		t.Fatal(err)
	}
	s, err := doc.Scenario()
	if err != nil {
		t.Fatal(err)
	}
	res, err := runner.RunOne(s, s.Policies[1], s.Seed)
	if err != nil {
		t.Fatal(err)
	}
	if res.ConvergenceMs == nil {
		t.Fatalf("cap %s: the storm did not converge", capLabel)
	}
	return *res.ConvergenceMs, float64(res.Attempts)
}

// TestAStoppedSolveLeavesNoEarlierReport: a solve into a directory that
// holds an earlier solve's page (a derived file) removes it at the
// start, so that a solve stopped at once leaves its probes and no page
// of another solve beside them.
func TestAStoppedSolveLeavesNoEarlierReport(t *testing.T) {
	p := solveFile(t, seedModel+"vary: {key: admission.per_slot, min: 1, max: 500, goal: least, resolution: 1}\n"+
		"require:\n  - results[exponential].convergence_ms <= 60s\n")
	dir := t.TempDir()
	run(t, p, RunOptions{Dir: dir, NoCharts: true})
	page := filepath.Join(dir, "report.html")
	os.WriteFile(page, []byte("<p>the earlier solve's page</p>"), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := p.Run(RunOptions{Dir: dir, NoCharts: true, Context: ctx, Derived: []string{"report.html"}})
	var ie *InterruptedError
	if !errors.As(err, &ie) {
		t.Fatalf("a cancelled solve: %v", err)
	}
	if _, err := os.Stat(page); err == nil {
		t.Error("the earlier report stayed beside the stopped solve's probes")
	}
	if _, err := os.Stat(filepath.Join(dir, ResultFile)); err == nil {
		t.Error("the earlier solve.json stayed")
	}
}

// TestAStoppedSolveStopsEveryDispatch stops solves at once, over and
// over: each must end with an InterruptedError, never with a send on
// the pool's closed queue (a probe's storms still being handed out when
// the pool ends panics with "send on closed channel"; the race detector
// reports the close racing the send).
func TestAStoppedSolveStopsEveryDispatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.yaml")
	os.WriteFile(path, []byte(seedModel+"vary: {key: admission.per_slot, min: 1, max: 500, goal: least, resolution: 1}\n"+
		"require:\n  - mean(results[exponential].convergence_ms) <= 60s\n  - mean(results[full].convergence_ms) <= 60s\n"+
		"given:\n  policies[0].cap: [1600ms, 3200ms]\n"), 0o644)
	p, err := Load(path, Options{Replications: 8})
	if err != nil {
		t.Fatal(err)
	}
	for range 40 {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, _, err := p.Run(RunOptions{Context: ctx, Workers: 2})
		var ie *InterruptedError
		if !errors.As(err, &ie) {
			t.Fatalf("a cancelled solve: %v", err)
		}
	}
}
