package config

import (
	"bytes"
	"reflect"
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
