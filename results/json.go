package results

import (
	"bytes"
	"fmt"

	"stormsim/internal/atomicfile"
	"stormsim/internal/finitejson"
)

// JSON encodes d with two-space indentation and a trailing newline, each
// array of numbers on one line. Equal documents give identical bytes.
func (d *Document) JSON() ([]byte, error) {
	compact, err := finitejson.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("encoding results: %w", err)
	}
	var out bytes.Buffer
	out.Grow(len(compact) + len(compact)/4)
	indentJSON(&out, compact)
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// WriteJSON writes d to path atomically: the bytes go to a temporary file
// in the same directory, which is renamed over path only once complete, so
// a reader never sees a half-written file.
func (d *Document) WriteJSON(path string) error {
	data, err := d.JSON()
	if err != nil {
		return err
	}
	return atomicfile.Write(path, data)
}
