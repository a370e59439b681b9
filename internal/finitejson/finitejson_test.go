package finitejson

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Types shaped like stormsim's documents: embedded structs (by value and
// by pointer), omitempty, "-", renamed fields, pointers, maps, series,
// raw JSON and values that write themselves.
type quantiles struct {
	P50 float64 `json:"p50"`
	Max float64 `json:"max,omitempty"`
}

type outcome struct {
	Outcome string  `json:"outcome"`
	Busy    float64 `json:"tail_busy"`
}

type extras struct {
	Refused int64      `json:"refused,omitempty"`
	Reclaim *quantiles `json:"reclaim,omitempty"`
}

type ordered []quantiles

func (o ordered) MarshalJSON() ([]byte, error) { return Marshal([]quantiles(o)) }

type result struct {
	Policy   string   `json:"policy"`
	Attempts int64    `json:"attempts"`
	Conv     *float64 `json:"convergence_ms"`
	*outcome
	Connect  quantiles            `json:"connect_ms"`
	Series   []int64              `json:"series"`
	Rates    []float64            `json:"rates_per_s,omitempty"`
	ByName   map[string]float64   `json:"by_name,omitempty"`
	Nested   map[string]quantiles `json:"nested"`
	Hidden   float64              `json:"-"`
	Untagged float64
	Raw      json.RawMessage `json:"raw,omitempty"`
	Wait     time.Duration   `json:"wait"`
	Stats    ordered         `json:"stats"`
	Any      any             `json:"any"`
	Fixed    [2]float64      `json:"fixed"`
	extras
	//lint:ignore U1000 an unexported field, which encoding must leave out
	secret float64
}

type document struct {
	Version int      `json:"schema_version"`
	Results []result `json:"results"`
	Ratio   float64  `json:"ratio"`
}

// fill sets every settable number in v from r, and with probability bad a
// float to NaN or ±Inf; pointers, slices and maps are left nil half the
// time, so omitempty and null are both exercised.
func fill(r *rand.Rand, v reflect.Value, bad float64) {
	switch v.Kind() {
	case reflect.Float64:
		switch x := r.Float64(); {
		case x < bad/3:
			v.SetFloat(math.NaN())
		case x < 2*bad/3:
			v.SetFloat(math.Inf(1))
		case x < bad:
			v.SetFloat(math.Inf(-1))
		case x < bad+0.2:
			v.SetFloat(0)
		default:
			v.SetFloat(math.Round(r.NormFloat64()*1e6) / 1e3)
		}
	case reflect.Int64:
		if r.IntN(3) > 0 {
			v.SetInt(r.Int64N(1 << 40))
		}
	case reflect.Int:
		v.SetInt(int64(r.IntN(10)))
	case reflect.String:
		v.SetString([]string{"", "full", "converged", `q"uote`}[r.IntN(4)])
	case reflect.Pointer:
		if r.IntN(2) == 0 {
			p := reflect.New(v.Type().Elem())
			fill(r, p.Elem(), bad)
			v.Set(p)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				fill(r, f, bad)
			}
		}
	case reflect.Slice:
		if v.Type() == reflect.TypeFor[json.RawMessage]() {
			if r.IntN(2) == 0 {
				v.SetBytes([]byte(`{"k":[1,2]}`))
			}
			return
		}
		if n := r.IntN(4) - 1; n >= 0 {
			s := reflect.MakeSlice(v.Type(), n, n)
			for i := range n {
				fill(r, s.Index(i), bad)
			}
			v.Set(s)
		}
	case reflect.Array:
		for i := range v.Len() {
			fill(r, v.Index(i), bad)
		}
	case reflect.Map:
		if n := r.IntN(4) - 1; n >= 0 {
			m := reflect.MakeMap(v.Type())
			for i := range n {
				e := reflect.New(v.Type().Elem()).Elem()
				fill(r, e, bad)
				m.SetMapIndex(reflect.ValueOf(string(rune('a'+i))), e)
			}
			v.Set(m)
		}
	case reflect.Interface:
		if r.IntN(2) == 0 {
			v.Set(reflect.ValueOf(r.Float64()))
		}
	}
}

func randomDocument(r *rand.Rand, bad float64) *document {
	d := &document{}
	fill(r, reflect.ValueOf(d).Elem(), bad)
	return d
}

// The rebuilt form writes what encoding/json writes, byte for byte: a
// document with no bad float, rebuilt object by object, encodes the same.
func TestRebuildWritesWhatEncodingJSONWrites(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		d := randomDocument(r, 0)
		want, err := json.Marshal(d)
		if err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		got, err := json.Marshal(rebuild(reflect.ValueOf(d), false))
		if err != nil {
			t.Fatalf("document %d rebuilt: %v", i, err)
		}
		if string(got) != string(want) {
			t.Fatalf("document %d:\nrebuilt  %s\njson     %s", i, got, want)
		}
		if fast, _ := Marshal(d); string(fast) != string(want) {
			t.Fatalf("document %d: Marshal %s, want json.Marshal's %s", i, fast, want)
		}
	}
}

// Any document encodes, and decodes into its own type again; each NaN or
// infinity is null, and every other value is the one json writes.
func TestEveryDocumentEncodes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	rebuilt := 0
	for i := range 3000 {
		d := randomDocument(r, 0.1)
		data, err := Marshal(d)
		if err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		for _, bad := range []string{"NaN", "Inf"} {
			if strings.Contains(string(data), bad) {
				t.Fatalf("document %d holds %s: %s", i, bad, data)
			}
		}
		var back document
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatalf("document %d does not decode: %v\n%s", i, err, data)
		}
		if ok, _ := Finite(d); !ok {
			rebuilt++
		}
		// Written again, the decoded document (nulls now zero or nil)
		// holds only finite values and takes json's own path.
		if ok, at := Finite(&back); !ok {
			t.Fatalf("document %d decoded still holds a bad float at %s", i, at)
		}
	}
	if rebuilt < 1000 {
		t.Fatalf("only %d of 3000 documents held a bad float: the test does not exercise the rule", rebuilt)
	}
}

func TestBadFloatsAreNull(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	cases := []struct {
		name string
		v    any
		want string
	}{
		{"a field", struct {
			A float64 `json:"a"`
			B int     `json:"b"`
		}{nan, 3}, `{"a":null,"b":3}`},
		{"omitempty keeps a bad float, which is not empty", struct {
			A float64 `json:"a,omitempty"`
			C float64 `json:"c,omitempty"`
		}{inf, 0}, `{"a":null}`},
		{"a series", []float64{1, nan, -inf, 2.5}, `[1,null,null,2.5]`},
		{"a pointer", &quantiles{P50: inf, Max: 2}, `{"p50":null,"max":2}`},
		{"a map", map[string]float64{"b": 1, "a": nan}, `{"a":null,"b":1}`},
		{"through a value that writes itself", struct {
			S ordered `json:"s"`
		}{ordered{{P50: nan}}}, `{"s":[{"p50":null}]}`},
		{"an embedded struct", result{Policy: "full", outcome: &outcome{Outcome: "metastable", Busy: nan}},
			`{"policy":"full","attempts":0,"convergence_ms":null,"outcome":"metastable","tail_busy":null,"connect_ms":{"p50":0},` +
				`"series":null,"nested":null,"Untagged":0,"wait":0,"stats":null,"any":null,"fixed":[0,0]}`},
		{"a bare float", inf, `null`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Marshal(c.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestFiniteNamesThePath(t *testing.T) {
	d := document{Results: []result{{}, {Connect: quantiles{Max: math.Inf(-1)}}}}
	if ok, at := Finite(&d); ok || at != "results[1].connect_ms.max" {
		t.Errorf("Finite = %v, %q; want false, results[1].connect_ms.max", ok, at)
	}
	d.Results[1].Connect.Max = 1
	if ok, at := Finite(&d); !ok {
		t.Errorf("Finite = false at %q for a finite document", at)
	}
}

func TestMarshalIndent(t *testing.T) {
	got, err := MarshalIndent(map[string]float64{"a": math.NaN()}, "", "  ")
	if err != nil || string(got) != "{\n  \"a\": null\n}" {
		t.Errorf("MarshalIndent = %q, %v", got, err)
	}
}
