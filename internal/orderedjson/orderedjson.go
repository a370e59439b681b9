// Package orderedjson writes and reads a list of named entries as one JSON
// object whose keys keep the list's order. encoding/json sorts the keys of
// a map, but a result's metrics and a sweep point's axis values are read
// in the order the result and the sweep file give them.
package orderedjson

import (
	"bytes"
	"encoding/json"
	"fmt"

	"stormsim/internal/finitejson"
)

// Marshal writes items as one JSON object, in slice order: each item is
// the key key(item) with the value json.Marshal(value(item)). what names
// the object's entries in an error ("metric attempts: ...").
func Marshal[T any](items []T, what string, key func(T) string, value func(T) any) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, item := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(key(item)) // a string always encodes
		b.Write(k)
		b.WriteByte(':')
		v, err := finitejson.Marshal(value(item))
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", what, key(item), err)
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Unmarshal reads the JSON object in data key by key, in the order
// written, calling each with the key and a decoder whose next value is
// that key's; each must read exactly that value. name names the object
// in errors: "metrics: want an object", "metrics: attempts: ...".
func Unmarshal(data []byte, name string, each func(key string, dec *json.Decoder) error) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fmt.Errorf("%s: want an object", name)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		if err := each(key, dec); err != nil {
			return fmt.Errorf("%s: %s: %w", name, key, err)
		}
	}
	_, err := dec.Token()
	return err
}
