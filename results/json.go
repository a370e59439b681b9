package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// JSON encodes d with two-space indentation and a trailing newline, each
// array of numbers on one line. Equal documents give identical bytes.
func (d *Document) JSON() ([]byte, error) {
	compact, err := json.Marshal(d)
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
	return writeAtomic(path, data)
}

func writeAtomic(path string, data []byte) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Chmod(0o644); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
