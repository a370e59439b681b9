package config

import (
	"reflect"
	"testing"
	"time"

	"stormsim/sim"
)

func TestParsePath(t *testing.T) {
	tests := []struct {
		path string
		want []step
		ok   bool
	}{
		{"clients", []step{{key: "clients"}}, true},
		{"admission.per_slot", []step{{key: "admission"}, {key: "per_slot"}}, true},
		{"policies[1].cap", []step{{key: "policies"}, {index: 1, isIndex: true}, {key: "cap"}}, true},
		{"a[0][2]", []step{{key: "a"}, {index: 0, isIndex: true}, {index: 2, isIndex: true}}, true},
		{"", nil, false},
		{".a", nil, false},
		{"a.", nil, false},
		{"a..b", nil, false},
		{"[0]", nil, false},
		{"a[", nil, false},
		{"a[x]", nil, false},
		{"a[-1]", nil, false},
		{"a[0]b", nil, false},
		{"a]", nil, false},
	}
	for _, tt := range tests {
		got, err := parsePath(tt.path)
		if (err == nil) != tt.ok || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parsePath(%q) = %v, %v; want %v, ok=%v", tt.path, got, err, tt.want, tt.ok)
		}
	}
}

func TestSetOverrides(t *testing.T) {
	tests := []struct {
		name  string
		sets  []string
		check func(t *testing.T, got, base *sim.Scenario)
	}{
		{"scalar", []string{"clients=100000"}, func(t *testing.T, got, _ *sim.Scenario) {
			want(t, got.Clients, 100000)
		}},
		{"nested key", []string{"admission.per_slot=500"}, func(t *testing.T, got, _ *sim.Scenario) {
			want(t, got.Admission.PerSlot, 500)
		}},
		{"sequence entry", []string{"policies[0].base=50ms"}, func(t *testing.T, got, base *sim.Scenario) {
			want(t, got.Policies[0].Base, 50*time.Millisecond)
			want(t, got.Policies[1].Base, base.Policies[1].Base)
		}},
		{"whole section as a YAML fragment", []string{"admission={kind: token_bucket, rate: 40, burst: 10}"}, func(t *testing.T, got, _ *sim.Scenario) {
			want(t, got.Admission.Kind, "token_bucket")
			want(t, got.Admission.Rate, 40.0)
			want(t, got.Admission.Burst, 10)
			want(t, got.Admission.PerSlot, 0)
		}},
		{"creates missing keys", []string{"disconnect.at=2s", "metrics.window=1s"}, func(t *testing.T, got, _ *sim.Scenario) {
			want(t, got.Disconnect.At, 2*time.Second)
			want(t, got.Metrics.Window, time.Second)
		}},
		{"appends at the next index", []string{"policies[2]={name: none, min_gap: 1ms}"}, func(t *testing.T, got, _ *sim.Scenario) {
			want(t, len(got.Policies), 3)
			want(t, got.Policies[2].MinGap, time.Millisecond)
		}},
		{"later override wins", []string{"clients=5", "clients=7"}, func(t *testing.T, got, _ *sim.Scenario) {
			want(t, got.Clients, 7)
		}},
		{"value may contain =", []string{"name=a=b"}, func(t *testing.T, got, _ *sim.Scenario) {
			want(t, got.Name, "a=b")
		}},
	}
	base, err := Parse("ok.yaml", []byte(validYAML), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse("ok.yaml", []byte(validYAML), tt.sets)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, got, base)
		})
	}
}

func want[T comparable](t *testing.T, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestSetErrors(t *testing.T) {
	tests := []struct {
		set, want string
	}{
		{"admission.per_slot=x", `--set admission.per_slot=x: admission.per_slot: must be an integer (got "x")`},
		{"clients", "--set clients: must be path=value, e.g. admission.per_slot=500"},
		{"clients.x=1", "--set clients.x=1: clients: is not a mapping (got 10)"},
		{"policies[5].base=1s", "--set policies[5].base=1s: policies[5]: index out of range (there are 2 entries)"},
		{"name[0]=x", `--set name[0]=x: name: is not a sequence (got "t")`},
		{"policies[x]=1", `--set policies[x]=1: bad key path "policies[x]": index must be a non-negative integer (want e.g. policies[0].base)`},
		{"admision.per_slot=5", "--set admision.per_slot=5: admision: unknown key; did you mean admission?"},
		{"admission={kind: token_bucket, rate: 40, burst: 0}", "--set admission={kind: token_bucket, rate: 40, burst: 0}: admission.burst: must be in [1, 9000000] (got 0)"},
		{"policies[0].cap=50ms", "--set policies[0].cap=50ms: policies[0].cap: must be >= base (100ms) (got 50ms)"},
		{"policies[2]={name: none}", "--set policies[2]={name: none}: policies[2].min_gap: must be > 0 for policy none, or retries would loop within one instant (got 0s)"},
		{"name=[", "--set name=[: name: invalid YAML value: line 1: did not find expected node content"},
	}
	for _, tt := range tests {
		t.Run(tt.set, func(t *testing.T) {
			_, err := Parse("ok.yaml", []byte(validYAML), []string{tt.set})
			if err == nil || err.Error() != tt.want {
				t.Errorf("error\n got %v\nwant %s", err, tt.want)
			}
		})
	}
}

func TestCloneIsIndependent(t *testing.T) {
	doc, err := ParseDocument("ok.yaml", []byte(validYAML))
	if err != nil {
		t.Fatal(err)
	}
	clone := doc.Clone()
	if err := clone.Set("clients", "99"); err != nil {
		t.Fatal(err)
	}
	if err := clone.Set("policies[0].base", "1ms"); err != nil {
		t.Fatal(err)
	}
	orig, err := doc.Scenario()
	if err != nil {
		t.Fatal(err)
	}
	changed, err := clone.Scenario()
	if err != nil {
		t.Fatal(err)
	}
	want(t, orig.Clients, 10)
	want(t, orig.Policies[0].Base, 100*time.Millisecond)
	want(t, changed.Clients, 99)
	want(t, changed.Policies[0].Base, time.Millisecond)
}

func TestSetThroughAliasEditsACopy(t *testing.T) {
	const yml = "clients: 10\nadmission: {kind: unlimited}\n" +
		"policies:\n  - &p {name: full, base: 100ms, cap: 1s}\n  - *p\n"
	doc, err := ParseDocument("ok.yaml", []byte(yml))
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range []string{"policies[1].label=second", "policies[1].base=200ms"} {
		if err := doc.SetArg(set); err != nil {
			t.Fatal(err)
		}
	}
	s, err := doc.Scenario()
	if err != nil {
		t.Fatal(err)
	}
	want(t, s.Policies[0].Base, 100*time.Millisecond)
	want(t, s.Policies[0].Label, "full")
	want(t, s.Policies[1].Base, 200*time.Millisecond)
	want(t, s.Policies[1].Label, "second")
}
