// Package outdir prepares the directory a command writes its files into
// (-o DIR): created if missing and proven writable before any work starts,
// so a long run is never lost to a directory it cannot write; removed
// again when the command fails before writing anything; and cleared of the
// files an earlier run of the same command wrote there that this run did
// not write again, so that old charts never sit beside new results.
package outdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
)

// Dir is a prepared output directory.
type Dir struct {
	Path    string
	created []string // directories Prepare made, outermost first
}

// Error is a directory that cannot be used; it is the user's to fix.
type Error struct {
	Path    string
	Problem string
}

func (e *Error) Error() string { return fmt.Sprintf("-o %s: %s", e.Path, e.Problem) }

// Prepare creates path and its missing parents and checks that a file can
// be created and removed in it. It leaves nothing behind on error.
func Prepare(path string) (*Dir, error) {
	d := &Dir{Path: path}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &Error{path, err.Error()}
	}
	// Remember which directories do not exist yet, outermost first.
	for p := abs; ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		if err == nil {
			if !st.IsDir() {
				return nil, &Error{path, p + " is a file, not a directory"}
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return nil, &Error{path, problem(err)}
		}
		d.created = append(d.created, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	slices.Reverse(d.created)
	if err := os.MkdirAll(abs, 0o755); err != nil {
		d.Abandon()
		return nil, &Error{path, "cannot create it: " + problem(err)}
	}
	probe, err := os.CreateTemp(abs, ".stormsim-probe-*")
	if err != nil {
		d.Abandon()
		return nil, &Error{path, "cannot write there: " + problem(err)}
	}
	probe.Close()
	os.Remove(probe.Name())
	return d, nil
}

// Abandon removes the directories Prepare created, innermost first, as
// long as each is empty: a command that failed leaves no empty directory.
func (d *Dir) Abandon() {
	if d == nil {
		return
	}
	for i := len(d.created) - 1; i >= 0; i-- {
		if os.Remove(d.created[i]) != nil {
			return // not empty (or gone): leave it and its parents
		}
	}
	d.created = nil
}

// RemoveStale removes the files named in known (base names inside the
// directory) that are not among written (paths or base names): the files
// an earlier run of the same command wrote and this one did not. Only
// regular files are removed; anything else a user keeps there is left.
func (d *Dir) RemoveStale(known, written []string) error {
	keep := map[string]bool{}
	for _, w := range written {
		keep[filepath.Base(w)] = true
	}
	var errs []error
	for _, name := range known {
		if keep[name] {
			continue
		}
		path := filepath.Join(d.Path, name)
		st, err := os.Lstat(path)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		if err := os.Remove(path); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// problem is err without the path an *fs.PathError repeats.
func problem(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
