package results

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"testing"
)

// shape exercises every rule of the flattening: an untagged embedded
// struct, omitempty, a nil and a set section, a series, a list of records,
// a map of records, strings and booleans.
type shape struct {
	Name    string  `json:"name"`
	Count   int64   `json:"count"`
	TimeMs  float64 `json:"time_ms"`
	Skipped int     `json:"-"`
	inner
	Off    *section          `json:"off,omitempty"`
	On     *section          `json:"on,omitempty"`
	Series []int64           `json:"series"`
	Rows   []row             `json:"rows,omitempty"`
	ByName map[string]row    `json:"by_name"`
	Flag   bool              `json:"flag"`
	Plain  map[string]string `json:"plain"`
}

type inner struct {
	Zero  int64 `json:"zero,omitempty"`
	Extra uint8 `json:"extra"`
}

type section struct {
	A float64   `json:"a"`
	B []float64 `json:"b"`
}

type row struct {
	ID int `json:"id"`
}

func shapeValue() shape {
	return shape{
		Name: "x", Count: 3, TimeMs: 1.5, Skipped: 9, inner: inner{Extra: 7},
		On: &section{A: 2.25, B: []float64{1, 2}}, Series: []int64{1, 2, 3},
		Rows: []row{{ID: 4}, {ID: 5}}, ByName: map[string]row{"z": {ID: 6}, "a": {ID: 8}},
		Flag: true, Plain: map[string]string{"k": "v"},
	}
}

// jsonLeaves is a second implementation: the numeric leaves that
// encoding/json writes, in order, outside arrays of numbers.
func jsonLeaves(t *testing.T, v any) []Metric {
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out []Metric
	// inArray: a number directly inside an array is a series entry.
	var walk func(name string, inArray bool)
	walk = func(name string, inArray bool) {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		switch x := tok.(type) {
		case json.Delim:
			if x == '{' {
				for dec.More() {
					k, _ := dec.Token()
					child := k.(string)
					switch {
					case isMapField(name):
						child = name + "[" + child + "]"
					case name != "":
						child = name + "." + child
					}
					walk(child, false)
				}
			} else {
				for i := 0; dec.More(); i++ {
					walk(name+"["+strconv.Itoa(i)+"]", true)
				}
			}
			dec.Token()
		case json.Number:
			if !inArray {
				f, _ := x.Float64()
				out = append(out, Metric{name, f})
			}
		case bool:
			if !inArray {
				f := 0.0
				if x {
					f = 1
				}
				out = append(out, Metric{name, f})
			}
		}
	}
	walk("", false)
	return out
}

// isMapField says which fields of shape are maps, which JSON cannot tell.
func isMapField(name string) bool { return name == "by_name" || name == "plain" }

func TestFlattenMatchesEncodingJSON(t *testing.T) {
	v := shapeValue()
	var got []Metric
	flattenValue("", reflect.ValueOf(v), &got, nil)
	want := []Metric{
		{"count", 3}, {"time_ms", 1.5}, {"zero", 0}, {"extra", 7}, {"on.a", 2.25},
		{"rows[0].id", 4}, {"rows[1].id", 5}, {"by_name[a].id", 8}, {"by_name[z].id", 6}, {"flag", 1},
	}
	if !slices.Equal(got, want) {
		t.Errorf("flatten\n got %v\nwant %v", got, want)
	}
	// The oracle omits the omitempty zero; everything else must agree in
	// name, value and order.
	var nonZero []Metric
	for _, m := range got {
		if m.Name != "zero" {
			nonZero = append(nonZero, m)
		}
	}
	if oracle := jsonLeaves(t, v); !slices.Equal(nonZero, oracle) {
		t.Errorf("flatten disagrees with encoding/json\n got %v\nwant %v", nonZero, oracle)
	}
}

// TestSeriesAreWhatMetricsLeaveOut pins the series of shape by hand: its
// arrays of numbers, in field order, and no array of records or strings.
func TestSeriesAreWhatMetricsLeaveOut(t *testing.T) {
	v := shapeValue()
	var got []Series
	flattenValue("", reflect.ValueOf(v), nil, &got)
	want := []Series{{"on.b", []float64{1, 2}}, {"series", []float64{1, 2, 3}}}
	if !slices.EqualFunc(got, want, func(a, b Series) bool { return a.Name == b.Name && slices.Equal(a.Values, b.Values) }) {
		t.Errorf("series\n got %v\nwant %v", got, want)
	}
}

func TestTypeNamesListEveryField(t *testing.T) {
	var got []string
	typeNames("", reflect.TypeFor[shape](), 0, &got)
	want := []string{"count", "time_ms", "zero", "extra", "off.a", "on.a", "rows[].id", "by_name[].id", "flag"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestRealResultNamesAreInTheCatalog runs a storm and checks each metric it
// produces against the names derived from the type alone.
func TestRealResultNamesAreInTheCatalog(t *testing.T) {
	doc := build(t, scenario(t))
	names := ResultFieldNames()
	for _, must := range []string{"attempts", "convergence_ms", "connect_ms.p99", "window_ms"} {
		if !slices.Contains(names, must) {
			t.Errorf("ResultFieldNames lacks %s: %v", must, names)
		}
	}
	ms := ResultMetrics(&doc.Results[0])
	if len(ms) < 10 {
		t.Errorf("only %d metrics: %v", len(ms), ms)
	}
	for _, m := range ms {
		if !slices.Contains(names, Pattern(m.Name)) {
			t.Errorf("metric %s (pattern %s) not in ResultFieldNames", m.Name, Pattern(m.Name))
		}
		if m.Name == "attempts" && m.Value != float64(doc.Results[0].Attempts) {
			t.Errorf("attempts %v, want %d", m.Value, doc.Results[0].Attempts)
		}
	}
}

func TestPattern(t *testing.T) {
	tests := []struct{ in, want string }{
		{"attempts", "attempts"},
		{"gateways[2].accepted", "gateways[].accepted"},
		{"a[x].b[10].c", "a[].b[].c"},
		{"odd[", "odd["},
	}
	for _, tt := range tests {
		if got := Pattern(tt.in); got != tt.want {
			t.Errorf("Pattern(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
