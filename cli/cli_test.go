package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"stormsim/config"
	"stormsim/results"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// ownConfigs are the shipped configs whose output this package pins.
var ownConfigs = []string{"../configs/seed-backoff-model.yaml", "../configs/seed-token-bucket.yaml"}

// stormsim runs Main and returns its exit code, stdout and stderr.
func stormsim(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := Main(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cli -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test ./cli -update refreshes it)\n got:\n%s\nwant:\n%s", path, got, want)
	}
}

// TestBadConfigs runs every testdata/bad file, whose first line says the
// error it must give: "# want: FILE:LINE: ...".
func TestBadConfigs(t *testing.T) {
	files, err := filepath.Glob("testdata/bad/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bad configs: %v", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(string(data), "\n")
		want, ok := strings.CutPrefix(first, "# want: ")
		if !ok {
			t.Fatalf("%s: first line must be # want: FILE:LINE: message", file)
		}
		want = strings.Replace(want, "FILE", file, 1) + "\n"
		for _, cmd := range []string{"validate", "run"} {
			t.Run(filepath.Base(file)+"/"+cmd, func(t *testing.T) {
				code, stdout, stderr := stormsim(cmd, "-c", file)
				if code != ExitUsage || stdout != "" || stderr != want {
					t.Errorf("exit %d, stdout %q, stderr\n %q\nwant exit 2, no stdout, stderr\n %q", code, stdout, stderr, want)
				}
			})
		}
	}
}

func TestValidateShippedConfigs(t *testing.T) {
	for _, file := range ownConfigs {
		code, stdout, stderr := stormsim("validate", "-c", file)
		if code != ExitOK || withoutWarnings(stderr) != "" || !strings.HasPrefix(stdout, file+": ok: ") {
			t.Errorf("validate %s: exit %d, stdout %q, stderr %q", file, code, stdout, stderr)
		}
	}
}

// withoutWarnings is stderr without the lines that warn of keys that
// cannot act (TestInertKeysWarn pins those).
func withoutWarnings(stderr string) string {
	var keep []string
	for _, line := range strings.SplitAfter(stderr, "\n") {
		if !strings.Contains(line, ": warning: ") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "")
}

// runJSON runs `stormsim run --format json` with extra args and decodes it.
func runJSON(t *testing.T, args ...string) (raw string, doc map[string]any) {
	t.Helper()
	code, stdout, stderr := stormsim(append([]string{"run", "--format", "json"}, args...)...)
	if code != ExitOK || withoutWarnings(stderr) != "" {
		t.Fatalf("run %v: exit %d, stderr %q", args, code, stderr)
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("run %v: stdout is not JSON: %v", args, err)
	}
	return stdout, doc
}

func policiesOf(doc map[string]any) []string {
	var out []string
	for _, r := range doc["results"].([]any) {
		out = append(out, r.(map[string]any)["policy"].(string))
	}
	return out
}

func TestRunJSONIsDeterministicAndVersioned(t *testing.T) {
	file := ownConfigs[0]
	first, doc := runJSON(t, "-c", file)
	second, _ := runJSON(t, "-c", file)
	if first != second {
		t.Error("two runs of the same config gave different bytes")
	}
	s, err := config.Load(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	if doc["schema_version"] != 1.0 || !strings.HasPrefix(doc["tool"].(string), "stormsim ") ||
		doc["config_hash"] != config.Hash(s) || doc["name"] != "seed-backoff-model" || doc["seed"] != 1.0 {
		t.Errorf("bad envelope: %v %v %v %v %v", doc["schema_version"], doc["tool"], doc["config_hash"], doc["name"], doc["seed"])
	}
	if got := strings.Join(policiesOf(doc), ","); got != "exponential,full" {
		t.Errorf("policies %s, want exponential,full", got)
	}
	if !strings.HasSuffix(first, "}\n") || !strings.HasPrefix(first, "{\n  \"schema_version\": 1,\n") {
		t.Errorf("not 2-space indented with a trailing newline: %.40q ... %q", first, first[len(first)-3:])
	}
}

func TestRunWritesResultFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "dir")
	code, stdout, stderr := stormsim("run", "-c", ownConfigs[1], "-o", dir, "--format", "json", "--charts=false")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	written, err := os.ReadFile(filepath.Join(dir, ResultFile))
	if err != nil {
		t.Fatal(err)
	}
	if string(written) != stdout {
		t.Error("result.json differs from the JSON on stdout")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("dir holds %d entries, want only %s and report.html (no temporary files)", len(entries), ResultFile)
	}
}

func TestRunOverridesAndPolicyFilter(t *testing.T) {
	_, doc := runJSON(t, "-c", ownConfigs[0], "--set", "clients=7", "--set", "admission={kind: token_bucket, rate: 40, burst: 10}", "--policy", "full")
	cfg := doc["config"].(map[string]any)
	if cfg["clients"] != 7.0 || cfg["admission"].(map[string]any)["kind"] != "token_bucket" {
		t.Errorf("overrides not applied: clients %v, admission %v", cfg["clients"], cfg["admission"])
	}
	if got := strings.Join(policiesOf(doc), ","); got != "full" {
		t.Errorf("--policy full ran %s", got)
	}
	if clients := doc["results"].([]any)[0].(map[string]any)["clients"]; clients != 7.0 {
		t.Errorf("result has %v clients, want 7", clients)
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantStderr string // start of the first line of stderr
	}{
		{"no arguments", nil, "stormsim simulates reconnect storms: many clients retrying against a gateway that admits few."},
		{"unknown command", []string{"fly"}, `stormsim: unknown command "fly" (try: `},
		{"unknown flag", []string{"run", "--colour"}, "stormsim run: unknown flag: --colour (see stormsim help run)"},
		{"missing config", []string{"run"}, "stormsim run: -c/--config FILE is required"},
		{"bad format", []string{"run", "-c", ownConfigs[0], "--format", "xml"}, `stormsim run: --format must be table or json (got "xml")`},
		{"stray argument", []string{"validate", "-c", ownConfigs[0], "extra"}, `stormsim validate: unexpected argument "extra" (see stormsim help validate)`},
		{"missing file", []string{"validate", "-c", "nope.yaml"}, "nope.yaml: cannot read config: no such file or directory"},
		{"unknown policy", []string{"run", "-c", ownConfigs[0], "--policy", "nope"}, "--policy nope: unknown policy; the config has exponential, full"},
		{"misspelt policy", []string{"run", "-c", ownConfigs[0], "--policy", "ful"}, "--policy ful: unknown policy; did you mean full? (the config has exponential, full)"},
		{"misspelt policy kind", []string{"run", "-c", ownConfigs[0], "--set", "policies[1].name=ful"},
			"--set policies[1].name=ful: policies[1].name: unknown policy; did you mean full? (see `stormsim policies`) (got ful)"},
		{"bad override", []string{"run", "-c", ownConfigs[0], "--set", "admission.per_slot=x"}, `--set admission.per_slot=x: admission.per_slot: must be an integer (got "x")`},
		{"output dir is a file", []string{"run", "-c", ownConfigs[0], "-o", ownConfigs[0]},
			"stormsim run: -o " + ownConfigs[0] + ": " + absPath(ownConfigs[0]) + " is a file, not a directory"},
		{"output dir below a file", []string{"run", "-c", ownConfigs[0], "-o", filepath.Join(ownConfigs[0], "out")},
			"stormsim run: -o " + filepath.Join(ownConfigs[0], "out") + ": " + absPath(ownConfigs[0]) + " is a file, not a directory"},
		{"help for no such command", []string{"help", "bogus"}, `stormsim help: no such command "bogus" (try: `},
		{"config given twice", []string{"run", "-c", ownConfigs[0], "-c", ownConfigs[1]},
			`stormsim run: invalid argument "` + ownConfigs[1] + `" for "-c, --config" flag: given twice (` + ownConfigs[0] + ", then " + ownConfigs[1] + "): give it once"},
		{"format given twice", []string{"run", "-c", ownConfigs[0], "--format", "json", "--format", "table"},
			`stormsim run: invalid argument "table" for "--format" flag: given twice (json, then table): give it once`},
		{"empty output dir", []string{"run", "-c", ownConfigs[0], "-o", ""},
			`stormsim run: invalid argument "" for "-o, --out" flag: needs a value, got an empty one`},
		{"zero replications", []string{"run", "-c", ownConfigs[0], "--replications", "0"},
			"stormsim run: --replications must be >= 1 (got 0); leave it out to run the config's replications"},
		{"zero workers", []string{"run", "-c", ownConfigs[0], "--workers", "0"},
			"stormsim run: --workers must be >= 1 (got 0); leave it out to use every CPU"},
		{"zero workers for a sweep", []string{"sweep", "-c", "x.yaml", "-o", "d", "--workers", "0"},
			"stormsim sweep: --workers must be >= 1 (got 0)"},
	}
	for _, tt := range tests {
		if tt.wantStderr == "" {
			t.Fatalf("%s: every case must name the message it expects", tt.name)
		}
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := stormsim(tt.args...)
			first, _, _ := strings.Cut(stderr, "\n")
			if code != ExitUsage || stdout != "" || !strings.HasPrefix(first, tt.wantStderr) || stderr == "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2, stderr %q", code, stdout, stderr, tt.wantStderr)
			}
		})
	}
}

// absPath is path made absolute, as messages about a path's parents give it.
func absPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		panic(err)
	}
	return abs
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"help", "run"}, {"run", "-h"}, {"validate", "--help"}, {"policies", "-h"}} {
		code, stdout, stderr := stormsim(args...)
		if code != ExitOK || stderr != "" || !strings.Contains(stdout, "Usage: stormsim") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
}

// TestEveryCommandHasHelp runs help for each command of the table: the
// command handed to its run function names itself in the usage line, and
// help goes to stdout with exit 0, both as help NAME and as NAME --help.
func TestEveryCommandHasHelp(t *testing.T) {
	for _, c := range commands {
		for _, args := range [][]string{{"help", c.name}, {c.name, "--help"}} {
			code, stdout, stderr := stormsim(args...)
			want := "Usage: stormsim " + c.name + " " + c.usage + "\n\n" + c.summary + "\n\nFlags:\n"
			if code != ExitOK || stderr != "" || !strings.HasPrefix(stdout, want) {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 0 and %q...", args, code, stdout, stderr, want)
			}
		}
	}
}

func TestPanicIsAnInternalError(t *testing.T) {
	saved := slices.Clone(commands)
	defer func() { commands = saved }()
	commands = append(commands, &command{name: "boom", run: func(*env, *command, []string) error { panic("line one\nline two") }})
	code, stdout, stderr := stormsim("boom")
	if want := "stormsim: internal error: line one\\nline two\n"; code != ExitInternal || stdout != "" || stderr != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 3, stderr %q", code, stdout, stderr, want)
	}
}

func TestPoliciesGolden(t *testing.T) {
	code, stdout, stderr := stormsim("policies")
	if code != ExitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	golden(t, "policies.golden", stdout)
}

// TestUsageGolden pins the usage text and where it goes: asked for, on
// stdout with exit 0; after no command at all, on stderr with exit 2.
func TestUsageGolden(t *testing.T) {
	code, stdout, stderr := stormsim("help")
	if code != ExitOK || stderr != "" {
		t.Errorf("help: exit %d, stderr %q; want exit 0 and nothing on stderr", code, stderr)
	}
	golden(t, "usage.golden", stdout)
	code, stdout, stderr = stormsim()
	if code != ExitUsage || stdout != "" {
		t.Errorf("no command: exit %d, stdout %q; want exit 2 and nothing on stdout", code, stdout)
	}
	golden(t, "usage.golden", stderr)
}

func TestVersion(t *testing.T) {
	for _, arg := range []string{"--version", "version"} {
		code, stdout, stderr := stormsim(arg)
		if code != ExitOK || stderr != "" || !strings.HasPrefix(stdout, "stormsim "+results.Version+" (go") || strings.Count(stdout, "\n") != 1 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", arg, code, stdout, stderr)
		}
	}
}

// TestInertKeysWarnOnStderr: validate and run say on stderr that a key
// cannot act, at its line, and go on as before, exit code included.
func TestInertKeysWarnOnStderr(t *testing.T) {
	file := filepath.Join(t.TempDir(), "timeout.yaml")
	yml := "clients: 100\nadmission: {kind: unlimited}\npolicies: [{name: fixed, base: 100ms, timeout: 10s}]\n"
	if err := os.WriteFile(file, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	want := file + ":3: warning: policies[0].timeout: cannot fire: without a capacity model a gateway answers at once"
	for _, cmd := range []string{"validate", "run"} {
		code, stdout, stderr := stormsim(cmd, "-c", file)
		if code != ExitOK || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 || stdout == "" {
			t.Errorf("%s: exit %d, stderr %q, stdout %q; want exit 0, the output, and one warning on stderr starting %q", cmd, code, stderr, stdout, want)
		}
	}
}

// TestShippedConfigsInertKeys lists the keys of the shipped configs that
// cannot act, as validate warns of them: the seed's labs keep the
// Retry-After their gateway sends, which their clients do not honour,
// and the metastable storm keeps the rejection cost its bucket variant
// pays, though with unlimited admission it rejects nothing.
func TestShippedConfigsInertKeys(t *testing.T) {
	files, err := filepath.Glob("../configs/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"deploy-lab.yaml":              {"admission.retry_after"},
		"drain-lab.yaml":               {"admission.retry_after"},
		"metastable-storm.yaml":        {"admission.retry_after", "capacity.reject_per_s"},
		"metastable-storm-bucket.yaml": {"admission.retry_after"},
		"metastable-storm-skip.yaml":   {"admission.retry_after"},
		"seed-lab.yaml":                {"admission.retry_after"},
		"seed-lab-1000.yaml":           {"admission.retry_after"},
		"seed-token-bucket.yaml":       {"admission.retry_after"},
	}
	for _, f := range files {
		code, _, stderr := stormsim("validate", "-c", f)
		if code != ExitOK {
			continue // a sweep file, or a config validate refuses: tested elsewhere
		}
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
			if _, rest, ok := strings.Cut(line, ": warning: "); ok {
				key, _, _ := strings.Cut(rest, ":")
				got = append(got, key)
			}
		}
		if w := want[filepath.Base(f)]; !slices.Equal(got, w) {
			t.Errorf("%s: warnings for %v, want %v\n%s", f, got, w, stderr)
		}
	}
}

// TestReadmeSaysHowToGetStormsim: the README's examples call a bare
// stormsim, so it says how to have one.
func TestReadmeSaysHowToGetStormsim(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	if strings.Contains(readme, "\n    stormsim ") && (!strings.Contains(readme, "go install ./cmd/stormsim") || !strings.Contains(readme, "go run ./cmd/stormsim")) {
		t.Error("README.md uses a bare stormsim without saying how to install it (go install ./cmd/stormsim) or run it (go run ./cmd/stormsim)")
	}
}
