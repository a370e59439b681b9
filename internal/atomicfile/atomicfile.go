// Package atomicfile writes a file so that a reader sees the old file or
// the whole new one, never a part: the bytes go to a temporary file in the
// same directory, which is synced and renamed over the target only once
// complete, and the directory is then synced so that the rename survives
// a crash too. It is stormsim's one atomic write.
package atomicfile

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
)

// Write writes data to path atomically, with mode 0644.
func Write(path string, data []byte) error {
	return WriteFrom(path, bytes.NewReader(data))
}

// WriteFrom writes what w writes to path atomically, with mode 0644. On
// error nothing is left behind: no temporary file, and path as it was.
func WriteFrom(path string, w io.WriterTo) (err error) {
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
	if _, err = w.WriteTo(tmp); err != nil {
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
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	// Not every file system can sync a directory, and those that cannot
	// order the rename after the data anyway, so a failure here is not
	// the write's.
	if dir, derr := os.Open(filepath.Dir(path)); derr == nil {
		dir.Sync()
		dir.Close()
	}
	return nil
}
