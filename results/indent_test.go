package results

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestIndentJSON(t *testing.T) {
	tests := []struct {
		name, compact, want string
	}{
		{"flat arrays stay on one line",
			`{"a":[1,2,3],"b":{"c":"x"}}`,
			"{\n  \"a\": [1,2,3],\n  \"b\": {\n    \"c\": \"x\"\n  }\n}"},
		{"arrays of objects are expanded",
			`[{"a":1},{"b":[]}]`,
			"[\n  {\n    \"a\": 1\n  },\n  {\n    \"b\": []\n  }\n]"},
		{"empty collections", `{"a":{},"b":[]}`, "{\n  \"a\": {},\n  \"b\": []\n}"},
		{"brackets inside strings are text", `{"a[":["]{,:\"",1]}`, "{\n  \"a[\": [\"]{,:\\\"\",1]\n}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			indentJSON(&b, []byte(tt.compact))
			if b.String() != tt.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tt.want)
			}
		})
	}
}

// TestJSONMatchesEncodingJSON checks against encoding/json as an oracle:
// same content, and where no array is flat the same bytes as MarshalIndent.
func TestJSONMatchesEncodingJSON(t *testing.T) {
	doc := build(t, scenario(t))
	got, err := doc.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	ref, _ := json.Marshal(doc)
	if err := json.Compact(&a, got); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	json.Compact(&b, ref)
	if a.String() != b.String() {
		t.Error("content differs from encoding/json")
	}
	doc.Results = nil // no flat arrays left
	got, _ = doc.JSON()
	want, _ := json.MarshalIndent(doc, "", "  ")
	if string(got) != string(want)+"\n" {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
