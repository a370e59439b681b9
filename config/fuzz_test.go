package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ownConfigs are the shipped configs this package's tests must load.
var ownConfigs = []string{"../configs/seed-backoff-model.yaml", "../configs/seed-token-bucket.yaml"}

// FuzzParse feeds arbitrary bytes and overrides to Parse: it must never
// panic, every error must be a single-line *Error, and every accepted
// config must survive an Echo round trip.
func FuzzParse(f *testing.F) {
	shipped, _ := filepath.Glob("../configs/*.yaml")
	for _, file := range shipped {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, "")
		f.Add(data, "policies[0].base=50ms")
		// Broken variants: cut short, a tab, a doubled line, a renamed key.
		f.Add(data[:len(data)/2], "")
		f.Add([]byte(strings.Replace(string(data), "  ", "\t", 1)), "")
		f.Add(append(data, data[:len(data)/3]...), "")
		f.Add([]byte(strings.Replace(string(data), "clients", "client", 1)), "admission={kind: token_bucket}")
	}
	for _, seed := range []string{
		validYAML,
		"clients: -1\n",
		"clients: 10\n---\n",
		"a: &a [*a]\n",
		"policies: [&p {name: full}, *p, *p]\nclients: 1e9\n",
		"{? [1]: 2}",
		"clients: 10\nadmission: {kind: slots, slot: 1ns, per_slot: 1}\npolicies: [{name: decorrelated, base: 1ns, cap: 1ns}]\n",
	} {
		f.Add([]byte(seed), "clients=1")
	}
	f.Fuzz(func(t *testing.T, data []byte, set string) {
		var sets []string
		if set != "" {
			sets = []string{set}
		}
		s, err := Parse("fuzz.yaml", data, sets)
		if err != nil {
			msg := err.Error()
			if strings.ContainsAny(msg, "\r\n") {
				t.Fatalf("error spans lines: %q", msg)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %q is %T, want *config.Error", msg, err)
			}
			return
		}
		echo := Echo(s)
		again, err := Parse("echo", echo, nil)
		if err != nil {
			t.Fatalf("echo %s does not parse: %v", echo, err)
		}
		if got := Echo(again); string(got) != string(echo) {
			t.Fatalf("round trip changed the scenario\n%s\n%s", echo, got)
		}
	})
}
