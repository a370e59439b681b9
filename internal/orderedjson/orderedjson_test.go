package orderedjson

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

type pair struct {
	key   string
	value float64
}

func marshal(items []pair) (string, error) {
	out, err := Marshal(items, "entry", func(p pair) string { return p.key }, func(p pair) any { return p.value })
	return string(out), err
}

func unmarshal(data string) ([]pair, error) {
	var out []pair
	err := Unmarshal([]byte(data), "entries", func(key string, dec *json.Decoder) error {
		var v float64
		if err := dec.Decode(&v); err != nil {
			return err
		}
		out = append(out, pair{key, v})
		return nil
	})
	return out, err
}

func TestMarshalKeepsTheListOrder(t *testing.T) {
	tests := []struct {
		name  string
		items []pair
		want  string
	}{
		{"none", nil, `{}`},
		{"against the alphabet", []pair{{"z", 1}, {"a", 2.5}, {"m", -3}}, `{"z":1,"a":2.5,"m":-3}`},
		{"keys escaped as JSON strings", []pair{{`q"uote`, 0}, {"line\nbreak", 1}}, `{"q\"uote":0,"line\nbreak":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := marshal(tt.items)
			if err != nil || got != tt.want {
				t.Fatalf("got %s, %v; want %s", got, err, tt.want)
			}
			back, err := unmarshal(got)
			if err != nil || len(back) != len(tt.items) {
				t.Fatalf("read back %v, %v", back, err)
			}
			for i := range back {
				if back[i] != tt.items[i] {
					t.Errorf("entry %d read back as %v, want %v", i, back[i], tt.items[i])
				}
			}
		})
	}
}

func TestErrorsNameTheObjectAndTheKey(t *testing.T) {
	// A number with no value is null, by the documents' one rule; what
	// cannot be encoded at all is an error naming its entry.
	if got, err := marshal([]pair{{"ok", 1}, {"nan", math.NaN()}}); err != nil || got != `{"ok":1,"nan":null}` {
		t.Errorf("NaN: %s, %v; want it written as null", got, err)
	}
	_, err := Marshal([]string{"ok", "bad"}, "entry", func(k string) string { return k }, func(k string) any {
		if k == "bad" {
			return make(chan int)
		}
		return 1
	})
	if err == nil || !strings.HasPrefix(err.Error(), "entry bad: ") {
		t.Errorf("a channel: %v, want an error naming entry bad", err)
	}
	for data, want := range map[string]string{
		`[1, 2]`:             "entries: want an object",
		`{"a": 1, "b": "x"}`: "entries: b: ",
	} {
		if _, err := unmarshal(data); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: error %v, want %q...", data, err, want)
		}
	}
}
