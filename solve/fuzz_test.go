package solve

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"stormsim/config"
)

// FuzzSolveFile feeds arbitrary solve files to ParseSolve and New: never
// a panic; every error one line and a *config.Error; an accepted problem
// has a hash that does not change when it is read again, and a manifest
// that reads back as the same problem.
func FuzzSolveFile(f *testing.F) {
	shipped, _ := filepath.Glob("../configs/solve-*.yaml")
	for _, file := range shipped {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		text := strings.ReplaceAll(string(data), "base: ", "base: ../configs/")
		f.Add([]byte(text))
		f.Add([]byte(text[:len(text)/2]))
	}
	for _, seed := range []string{
		seedModel + "vary: {key: admission.per_slot, min: 1, max: 500, goal: least, resolution: 1}\nrequire: [results[exponential].convergence_ms <= 60s]\n",
		seedModel + "vary: {key: clients, min: 10, max: 1e9, goal: most, resolution: 1%, start: 100}\nrequire: [attempts < 5]\n",
		seedModel + "vary: {key: \"policies[0].cap\", min: 0s, max: 1h, goal: least, resolution: 1us}\nrequire: [p95(attempts) > 1]\ngiven: {clients: [1, 2, 3]}\n",
		"scenario: {clients: 1}\nvary: {key: clients}\nrequire: []\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sf, err := config.ParseSolve("f.yaml", data)
		if err == nil {
			var p *Problem
			if p, err = New(sf, Options{}); err == nil {
				again, err := New(sf, Options{})
				if err != nil || again.Hash != p.Hash {
					t.Fatalf("read again: %v, hash %s then %s", err, p.Hash, again.Hash)
				}
				manifest, err := p.manifest()
				if err != nil {
					t.Fatal(err)
				}
				d, err := ParseDocument("probes.json", manifest)
				if err != nil {
					t.Fatal(err)
				}
				back, err := fromManifest(d)
				if err != nil || back.Hash != p.Hash {
					t.Fatalf("the manifest reads back as %v, %v", back, err)
				}
				return
			}
		}
		var ce *config.Error
		if !errors.As(err, &ce) {
			t.Fatalf("error %v (%T) is not a *config.Error", err, err)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Fatalf("error is not one line: %q", err)
		}
	})
}
