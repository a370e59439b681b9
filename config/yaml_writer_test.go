package config

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestYAMLReadsBackAsTheEcho: every shipped config, echoed and written
// as YAML, reads back to the same scenario (the same echo), minimal or
// not.
func TestYAMLReadsBackAsTheEcho(t *testing.T) {
	files, _ := os.ReadDir("../configs")
	n := 0
	for _, f := range files {
		if !strings.HasSuffix(f.Name(), ".yaml") || strings.HasPrefix(f.Name(), "sweep-") || strings.HasPrefix(f.Name(), "solve-") {
			continue
		}
		s, err := Load("../configs/"+f.Name(), nil)
		if err != nil {
			t.Fatal(err)
		}
		n++
		echo := Echo(s)
		for _, minimal := range []bool{false, true} {
			data, err := YAML(echo, YAMLOptions{Minimal: minimal, Header: "written by a test"})
			if err != nil {
				t.Fatalf("%s: %v", f.Name(), err)
			}
			back, err := Parse(f.Name(), data, nil)
			if err != nil {
				t.Fatalf("%s (minimal %v): %v\n%s", f.Name(), minimal, err, data)
			}
			if got := Echo(back); !bytes.Equal(got, echo) {
				t.Errorf("%s (minimal %v): reads back as\n%s\nnot\n%s", f.Name(), minimal, got, echo)
			}
			if !bytes.HasPrefix(data, []byte("# written by a test\n")) || bytes.Contains(data, []byte(`"`)) && minimal {
				t.Logf("%s:\n%s", f.Name(), data)
			}
		}
	}
	if n < 5 {
		t.Fatalf("only %d configs", n)
	}
}

// TestYAMLRoundsFittedFigures: a fitted scenario's figures come out of
// arithmetic (sigma 0.6315000000000001, a median of 5.74449ms); written
// with Digits 4 they read 0.6315 and 5.744ms, the file is YAML in the
// shipped configs' style (no JSON braces around the whole, no quotes, no
// empty dist: ""), and it reads back as what it says.
func TestYAMLRoundsFittedFigures(t *testing.T) {
	base, err := os.ReadFile("../configs/seed-lab.yaml")
	if err != nil {
		t.Fatal(err)
	}
	fitted := string(base) + "network:\n  out: {dist: lognormal, median: 5.74449ms, sigma: 0.6315000000000001, cap: 22.6581ms}\n" +
		"capacity: {admit_per_s: 140.55555555, decide_per_s: 801.2345, decide: arrival}\n"
	s, err := Parse("fitted.yaml", []byte(fitted), nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err := YAML(Echo(s), YAMLOptions{Digits: 4, Minimal: true, Header: "seed-lab calibrated\nagainst 1 real run"})
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, want := range []string{"# seed-lab calibrated\n# against 1 real run\nname: seed-lab\n",
		"sigma: 0.6315", "median: 5.744ms", "cap: 22.66ms", "admit_per_s: 140.6", "decide_per_s: 801.2",
		"admission: {kind: token_bucket, rate: 40, burst: 10, retry_after: 1s}\n", "policies:\n  - {name: full,"} {
		if !strings.Contains(text, want) {
			t.Errorf("lacks %q:\n%s", want, text)
		}
	}
	for _, bad := range []string{`"`, "0.6315000000000001", "dist: \n", "{\"name\""} {
		if strings.Contains(text, bad) {
			t.Errorf("holds %q:\n%s", bad, text)
		}
	}
	back, err := Parse("calibrated.yaml", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if back.Network.OutLeg.Sigma != 0.6315 || back.Capacity.AdmitPerS != 140.6 {
		t.Errorf("read back sigma %v, admit %v", back.Network.OutLeg.Sigma, back.Capacity.AdmitPerS)
	}
}
