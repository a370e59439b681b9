package config

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// echoValue renders v as compact JSON, as ScenarioFile.Echo describes.
func echoValue(v reflect.Value) json.RawMessage {
	var b bytes.Buffer
	echo(&b, v)
	return b.Bytes()
}

func echo(b *bytes.Buffer, v reflect.Value) {
	if v.Type() == durationType {
		writeJSON(b, time.Duration(v.Int()).String())
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			b.WriteString("null")
			return
		}
		echo(b, v.Elem())
	case reflect.Struct:
		b.WriteByte('{')
		first := true
		for _, f := range fieldsOf(v.Type()) {
			fv := v.FieldByIndex(f.index)
			if (fv.Kind() == reflect.Pointer || fv.Kind() == reflect.Interface) && fv.IsNil() {
				continue
			}
			if f.omitEmpty && (fv.IsZero() || (fv.Kind() == reflect.Slice && fv.Len() == 0)) {
				continue // a key added later that old configs lack leaves their hashes as they were
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			writeJSON(b, f.key)
			b.WriteByte(':')
			echo(b, fv)
		}
		b.WriteByte('}')
	case reflect.Slice, reflect.Array:
		b.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				b.WriteByte(',')
			}
			echo(b, v.Index(i))
		}
		b.WriteByte(']')
	case reflect.Map:
		keys := v.MapKeys()
		slices.SortFunc(keys, func(x, y reflect.Value) int { return strings.Compare(x.String(), y.String()) })
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, k.String())
			b.WriteByte(':')
			echo(b, v.MapIndex(k))
		}
		b.WriteByte('}')
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		b.WriteString(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		b.WriteString(strconv.FormatUint(v.Uint(), 10))
	default:
		writeJSON(b, v.Interface())
	}
}

// writeJSON appends x as encoding/json writes it; a value JSON cannot hold
// (NaN) becomes null rather than corrupting the document.
func writeJSON(b *bytes.Buffer, x any) {
	out, err := json.Marshal(x)
	if err != nil {
		out = []byte("null")
	}
	b.Write(out)
}

// EchoValue is v, a section of a scenario such as a models.NetworkSpec
// (or a pointer to one), as compact JSON in the config's own keys and
// units (durations as "250ms"), as Echo writes a whole scenario: what a
// document beside a config, such as calibration.json, writes its sections
// as.
func EchoValue(v any) json.RawMessage { return echoValue(reflect.ValueOf(v)) }

// DecodeValue stores data, a section as EchoValue writes it (or the same
// in YAML), into the value v points to, strictly, as a config file's
// section is decoded: every key one of the config's. name names data in
// errors. Nothing is defaulted or validated.
func DecodeValue(name string, data []byte, v any) error {
	doc, err := ParseDocument(name, data)
	if err != nil {
		return err
	}
	dec := decoder{doc: doc}
	return dec.decode(doc.root, reflect.ValueOf(v).Elem(), "")
}
