package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestEchoIsOrderedAndResolved(t *testing.T) {
	s, err := Parse("ok.yaml", []byte("seed: 7\nclients: 3\nname: x\nadmission: {per_slot: 2, slot: 10ms, kind: slots}\n"+
		"policies: [{name: fixed, base: 1500ms}]\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Written by hand from sim.Scenario's field order and Resolve's
	// defaults (window = slot, label = name, replications 1).
	want := `{"name":"x","seed":7,"clients":3,"disconnect":{"at":"0s"},"initial_jitter":"0s",` +
		`"admission":{"kind":"slots","slot":"10ms","per_slot":2,"rate":0,"burst":0,"retry_after":"0s"},` +
		`"policies":[{"name":"fixed","label":"fixed","base":"1.5s","cap":"0s","multiplier":0,"jitter":0,"min_gap":"0s",` +
		`"max_attempts":0,"honor_retry_after":false,"min_delay_after_reject":"0s"}],` +
		`"metrics":{"window":"10ms"},"replications":1}`
	if got := string(Echo(s)); got != want {
		t.Errorf("Echo\n got %s\nwant %s", got, want)
	}
}

func TestEchoOmitsNilSections(t *testing.T) {
	type withOptional struct {
		A *section `yaml:"a"`
		B *section `yaml:"b"`
	}
	var b bytes.Buffer
	echo(&b, reflect.ValueOf(withOptional{B: &section{Count: 1}}))
	if got, want := b.String(), `{"b":{"every":"0s","count":1}}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// TestEchoRoundTrips checks that the echo, read back as a config, is the
// same scenario: it is valid YAML and loses nothing.
func TestEchoRoundTrips(t *testing.T) {
	for _, file := range ownConfigs {
		s, err := Load(file, nil)
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse("echo", Echo(s), nil)
		if err != nil {
			t.Fatalf("%s: echo does not parse: %v", file, err)
		}
		if a, b := string(Echo(s)), string(Echo(again)); a != b {
			t.Errorf("%s: round trip changed the scenario\n%s\n%s", file, a, b)
		}
	}
}

func TestHashIgnoresSpellingButNotValues(t *testing.T) {
	hash := func(yml string) string {
		t.Helper()
		s, err := Parse("h.yaml", []byte(yml), nil)
		if err != nil {
			t.Fatal(err)
		}
		return Hash(s)
	}
	base := hash(validYAML)
	if !strings.HasPrefix(base, "sha256:") || len(base) != len("sha256:")+64 {
		t.Fatalf("hash %q is not sha256:<64 hex>", base)
	}
	same := "# a comment\nname: t\nseed: 1\nclients: 10\nadmission:\n  kind: slots\n  slot: 10ms\n  per_slot: 5\n" +
		"metrics: {window: 10ms}\npolicies:\n  - {name: exponential, base: 0.1s, cap: 3.2s, multiplier: 2}\n" +
		"  - {name: full, label: full, base: 100ms, cap: 3200ms}\n"
	if got := hash(same); got != base {
		t.Errorf("same scenario spelled differently hashes to %s, want %s", got, base)
	}
	if got := hash(strings.Replace(validYAML, "clients: 10", "clients: 11", 1)); got == base {
		t.Errorf("different clients, same hash %s", got)
	}
}

// TestEchoEmpiricalPoints: an empirical distribution's points are echoed
// and read back; a distribution without them echoes no points key, so the
// hashes of configs written before empirical distributions existed stay
// as they were.
func TestEchoEmpiricalPoints(t *testing.T) {
	const head = "clients: 1\nadmission: {kind: unlimited}\npolicies: [{name: fixed, base: 1s}]\n"
	s, err := Parse("e.yaml", []byte(head+"detection: {kind: reset, delay: {dist: empirical, points: [0s, 10ms, 1.5s]}}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	echoed := string(Echo(s))
	if !strings.Contains(echoed, `"points":["0s","10ms","1.5s"]`) {
		t.Errorf("echo lacks the points: %s", echoed)
	}
	again, err := Parse("echo", Echo(s), nil)
	if err != nil || string(Echo(again)) != echoed {
		t.Errorf("round trip: %v\n%s\n%s", err, echoed, Echo(again))
	}
	plain, err := Parse("p.yaml", []byte(head+"detection: {kind: reset, delay: {dist: uniform, min: 0s, max: 10ms}}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(Echo(plain)); strings.Contains(got, "points") {
		t.Errorf("echo of a uniform delay names points: %s", got)
	}
}

// TestEchoSharedEvery: network.shared_every is echoed when set and left
// out when 0, so configs written before it keep their hashes.
func TestEchoSharedEvery(t *testing.T) {
	const head = "clients: 1\nadmission: {kind: unlimited}\npolicies: [{name: fixed, base: 1s}]\n"
	for _, c := range []struct {
		network, want string
		echoed        bool
	}{{"network: {rtt: {value: 5ms}, shared_every: 25ms}\n", `"shared_every":"25ms"`, true},
		{"network: {rtt: {value: 5ms}}\n", `shared_every`, false}} {
		s, err := Parse("n.yaml", []byte(head+c.network), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(Echo(s)), c.want); got != c.echoed {
			t.Errorf("%s: echo %s, want %q there: %v", c.network, Echo(s), c.want, c.echoed)
		}
	}
}

// TestChecksKeepTheirPlaceInTheEcho pins where checks: sits in the echo,
// and so in the hash, though they are decoded beside the scenario rather
// than into it: right after horizon. The expected echo is written by hand
// from sim.Scenario's field order (encoding/json writes < as \u003c).
func TestChecksKeepTheirPlaceInTheEcho(t *testing.T) {
	const base = "seed: 7\nclients: 3\nname: x\nadmission: {per_slot: 2, slot: 10ms, kind: slots}\npolicies: [{name: fixed, base: 1500ms}]\n"
	const head = `{"name":"x","seed":7,"clients":3,"disconnect":{"at":"0s"},"initial_jitter":"0s",` +
		`"admission":{"kind":"slots","slot":"10ms","per_slot":2,"rate":0,"burst":0,"retry_after":"0s"},` +
		`"policies":[{"name":"fixed","label":"fixed","base":"1.5s","cap":"0s","multiplier":0,"jitter":0,"min_gap":"0s",` +
		`"max_attempts":0,"honor_retry_after":false,"min_delay_after_reject":"0s"}],` +
		`"metrics":{"window":"10ms"},"replications":1`
	tests := []struct {
		name       string
		yaml       string
		wantEcho   string
		wantChecks []string
	}{
		{"no checks, no key", base, head + `}`, nil},
		{"null checks, no key", base + "checks:\n", head + `}`, nil},
		{"an empty list is kept", base + "checks: []\n", head + `,"checks":[]}`, []string{}},
		{"after replications when there is no horizon", base + "checks: [attempts < 5]\n",
			head + `,"checks":["attempts \u003c 5"]}`, []string{"attempts < 5"}},
		{"after horizon and before the models, wherever the file has it",
			"checks: [attempts < 5, convergence_ms <= 2s]\n" + base + "failure: {kind: crash}\nhorizon: 1m\n",
			head + `,"horizon":"1m0s","checks":["attempts \u003c 5","convergence_ms \u003c= 2s"],"failure":{"kind":"crash","grace":"0s","spread":false}}`,
			[]string{"attempts < 5", "convergence_ms <= 2s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := ParseDocument("c.yaml", []byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			f, err := doc.ScenarioFile()
			if err != nil {
				t.Fatal(err)
			}
			if got := string(f.Echo()); got != tt.wantEcho {
				t.Errorf("echo\n got %s\nwant %s", got, tt.wantEcho)
			}
			sum := sha256.Sum256([]byte(tt.wantEcho))
			if got, want := f.Hash(), "sha256:"+hex.EncodeToString(sum[:]); got != want {
				t.Errorf("hash %s, want the SHA-256 of the echo, %s", got, want)
			}
			if (f.Checks == nil) != (tt.wantChecks == nil) || !slices.Equal(f.Checks, tt.wantChecks) {
				t.Errorf("checks %#v, want %#v", f.Checks, tt.wantChecks)
			}
			if tt.wantChecks == nil && !bytes.Equal(f.Echo(), Echo(f.Scenario)) {
				t.Error("a file without checks echoes differently from its scenario alone")
			}
			again, err := ParseDocument("echo", f.Echo())
			if err != nil {
				t.Fatalf("the echo does not parse: %v", err)
			}
			if back, err := again.ScenarioFile(); err != nil || string(back.Echo()) != tt.wantEcho {
				t.Errorf("the echo read back echoes %s, %v", back.Echo(), err)
			}
		})
	}
}
