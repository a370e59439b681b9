package config

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// section and sample exercise decoder features the scenario does not use
// yet: optional sections (pointers), maps and unsigned integers.
type section struct {
	Every time.Duration `yaml:"every"`
	Count int           `yaml:"count"`
}

type sample struct {
	Name     string             `yaml:"name"`
	Big      uint64             `yaml:"big"`
	Small    int8               `yaml:"small"`
	Ratio    float64            `yaml:"ratio"`
	On       bool               `yaml:"on"`
	Optional *section           `yaml:"optional"`
	Weights  map[string]float64 `yaml:"weights"`
	List     []section          `yaml:"list"`
	//lint:ignore U1000 an unexported field, which decoding must leave alone
	internal int
	Untagged int
}

func decodeSample(t *testing.T, yml string) (sample, error) {
	t.Helper()
	doc, err := ParseDocument("s.yaml", []byte(yml))
	if err != nil {
		t.Fatal(err)
	}
	var s sample
	d := decoder{doc: doc}
	err = d.decode(doc.root, reflect.ValueOf(&s).Elem(), "")
	return s, err
}

func TestDecodeValues(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       sample
	}{
		{"absent optional section stays nil", "name: a\n", sample{Name: "a"}},
		{"null optional section is nil", "optional: ~\n", sample{}},
		{"present optional section is allocated", "optional: {every: 1.5s, count: 3}\n",
			sample{Optional: &section{Every: 1500 * time.Millisecond, Count: 3}}},
		{"uint64 beyond int64", "big: 18446744073709551615\n", sample{Big: 1<<64 - 1}},
		{"hex and underscores", "big: 0x10\nsmall: 1_2\n", sample{Big: 16, Small: 12}},
		{"integer for a float", "ratio: 2\n", sample{Ratio: 2}},
		{"map", "weights: {a: 1, b: 0.5}\n", sample{Weights: map[string]float64{"a": 1, "b": 0.5}}},
		{"sequence of sections", "list: [{every: 0, count: 1}, {every: 1ms}]\n",
			sample{List: []section{{Count: 1}, {Every: time.Millisecond}}}},
		{"alias", "optional: &o {count: 2}\nlist: [*o]\n",
			sample{Optional: &section{Count: 2}, List: []section{{Count: 2}}}},
		{"bool", "on: true\n", sample{On: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeSample(t, tt.yaml)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"overflow of a small int", "small: 200\n", "s.yaml:1: small: is too large (got 200)"},
		{"overflow of uint64", "big: 1e30\n", "s.yaml:1: big: is too large (got 1e30)"},
		{"untagged fields are not keys", "untagged: 1\n",
			"s.yaml:1: untagged: unknown key; valid keys: name, big, small, ratio, on, optional, weights, list"},
		{"null for a required section", "list: [~]\n", "s.yaml:1: list[0]: must be a mapping (got null)"},
		{"duplicate map key", "weights: {a: 1, a: 2}\n", "s.yaml:1: weights.a: duplicate key, also set on line 1 (got 2)"},
		{"sequence for a scalar", "name: [a]\n", "s.yaml:1: name: must be a string (got a sequence)"},
		{"error inside an alias points at the alias", "optional: &o {count: x}\nlist: [*o]\n",
			`s.yaml:1: optional.count: must be an integer (got "x")`},
		{"long values are cut", "small: " + strings.Repeat("x", 100) + "\n",
			`s.yaml:1: small: must be an integer (got "` + strings.Repeat("x", 60) + `...")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeSample(t, tt.yaml)
			if err == nil || err.Error() != tt.want {
				t.Errorf("error\n got %v\nwant %s", err, tt.want)
			}
		})
	}
}

func TestClosestKey(t *testing.T) {
	fields := fieldsOf(reflect.TypeFor[sample]())
	tests := []struct {
		key, want string
		ok        bool
	}{
		{"nme", "name", true},
		{"Ratio", "ratio", true},
		{"optinal", "optional", true},
		{"weight", "weights", true},
		{"zzzzzz", "", false},
	}
	for _, tt := range tests {
		got, ok := closestKey(tt.key, fields)
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("closestKey(%q) = %q, %v; want %q, %v", tt.key, got, ok, tt.want, tt.ok)
		}
	}
}
