package results

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"stormsim/config"
	"stormsim/policies"
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

// build runs each policy of s once, with sim.Run, into a document.
func build(t *testing.T, s *sim.Scenario) *Document {
	t.Helper()
	doc := New(s, config.Hash(s), config.Echo(s))
	for _, spec := range s.Policies {
		b, err := policies.New(spec)
		if err != nil {
			t.Fatal(err)
		}
		doc.Results = append(doc.Results, sim.Run(s, b, s.Seed))
	}
	return doc
}

func TestJSONIsDeterministic(t *testing.T) {
	a := build(t, scenario(t))
	b := build(t, scenario(t))
	ja, _ := a.JSON()
	jb, _ := b.JSON()
	if !bytes.Equal(ja, jb) {
		t.Error("equal scenarios gave different JSON")
	}
	if !bytes.HasPrefix(ja, []byte("{\n  \"schema_version\": 1,\n  \"tool\": ")) || !bytes.HasSuffix(ja, []byte("\n}\n")) {
		t.Errorf("layout: %.60q", ja)
	}
}

func TestWriteJSONIsAtomic(t *testing.T) {
	doc := build(t, scenario(t))
	dir := t.TempDir()
	path := filepath.Join(dir, "result.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := doc.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	want, _ := doc.JSON()
	if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
		t.Error("file does not hold the document")
	}
	// A failed write leaves neither a partial file nor a temporary one.
	blocked := filepath.Join(dir, "result.json", "x.json") // parent is a file
	if err := doc.WriteJSON(blocked); err == nil {
		t.Error("writing below a file succeeded")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("dir holds %d entries, want 1", len(entries))
	}
}

func TestTableLayout(t *testing.T) {
	doc := &Document{Name: "n", Seed: 2, ConfigHash: "sha256:0123456789abcdef", Results: []sim.Result{
		{Policy: "exponential", Attempts: 100500, Accepted: 1000, Rejected: 99500, PeakAttemptsPerWindow: 1000,
			ConvergenceMs: msPtr(623900), ConnectMs: sim.Quantiles{P50: 303900, P99: 617500}, WindowMs: 10},
		{Policy: "full", Attempts: 5257, Accepted: 1000, Rejected: 4257, Abandoned: 3, PeakAttemptsPerWindow: 1000,
			ConvergenceMs: msPtr(4580.5), ConnectMs: sim.Quantiles{P50: 12.25, P99: 999.9996}, WindowMs: 10},
	}}
	var b strings.Builder
	if err := doc.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	want := "n (seed 2, config sha256:0123456789ab)\n" +
		"policy       attempts  accepted  rejected  abandoned  peak/10ms  last connect  connect p50  connect p99\n" +
		"exponential   100,500     1,000    99,500          0      1,000        623.9s       303.9s       617.5s\n" +
		"full            5,257     1,000     4,257          3      1,000        4.581s      12.25ms           1s\n"
	if b.String() != want {
		t.Errorf("table\n%s\nwant\n%s", b.String(), want)
	}
}

// TestTableIsTerminalSafe pins that a name or label with control
// characters cannot reach the terminal raw, and that a scenario without a
// name still gets a title.
func TestTableIsTerminalSafe(t *testing.T) {
	r := sim.Result{Attempts: 1, Accepted: 1, WindowMs: 10}
	r.Reclaim = &sim.ReclaimResult{StaleRouteSeconds: 766711.46}
	a, b := r, r
	a.Policy, b.Policy = "a\x1b[2Jb", "line\nbreak"
	doc := &Document{Name: "x\x1b]0;pwned\x07y", ConfigHash: "sha256:0123456789abcdef", Results: []sim.Result{a, b}}
	var out strings.Builder
	if err := doc.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(out.String(), "\x1b\x07") || strings.Count(out.String(), "\n") != 8 {
		t.Errorf("control characters reach the terminal:\n%q", out.String())
	}
	for _, want := range []string{`x\x1b]0;pwned\ay (seed 0`, `a\x1b[2Jb  `, `line\nbreak`, "766,711.5"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	doc.Name = ""
	out.Reset()
	doc.WriteTable(&out)
	if !strings.HasPrefix(out.String(), "unnamed scenario (seed 0, config sha256:0123456789ab)\n") {
		t.Errorf("title of a scenario without a name: %q", strings.SplitN(out.String(), "\n", 2)[0])
	}
}

// msPtr returns a pointer to a time in ms, for a result's convergence.
func msPtr(v float64) *float64 { return &v }
