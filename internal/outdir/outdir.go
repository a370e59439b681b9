// Package outdir prepares the directory a command writes its files into
// (-o DIR): created if missing and proven writable before any work starts,
// so a long run is never lost to a directory it cannot write; refused when
// it holds another run's outputs or files the command does not write, so
// that nothing is replaced silently (a Claim says what the command
// writes); removed again when the command fails before writing anything;
// and cleared of the files an earlier run of the same command wrote there
// that this run did not write again, so that old charts never sit beside
// new results.
package outdir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// Claim is what a command writes into its directory, so that Prepare can
// tell the outputs an earlier run of the same command and config left
// there, which it may replace, from anything else, which it must not.
type Claim struct {
	Command string // the command, for messages: "run", "sweep"
	// Owns reports whether the command writes the directory entry called
	// name: one of its files, or a directory it fills (charts, logs); nil
	// owns nothing.
	Owns func(name string) bool
	// Marker is the JSON file that names the run which wrote the
	// directory (result.json), Key its top-level key holding that name
	// (config_hash) and ID this run's. With no Marker, any files the
	// command owns may be replaced.
	Marker, Key, ID string
	// Overwrite (--overwrite) writes over another run's outputs and
	// beside files the command does not write, which it leaves alone.
	Overwrite bool
}

// OverwriteFlag is the flag that sets Claim.Overwrite.
const OverwriteFlag = "--overwrite"

// Prepare creates path and its missing parents and checks that a file can
// be created and removed in it. A directory that already exists must hold
// nothing but what claim owns, written by a run of the same ID (a rerun
// of the same config into its own directory), unless claim.Overwrite. It
// leaves nothing behind on error.
func Prepare(path string, claim Claim) (*Dir, error) {
	d, err := prepare(path)
	if err != nil {
		return nil, err
	}
	if len(d.created) == 0 && !claim.Overwrite {
		if err := claim.check(path); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// check refuses a directory that holds what claim does not own, or
// another run's outputs.
func (c Claim) check(path string) error {
	entries, err := os.ReadDir(path)
	if err != nil {
		return &Error{path, "cannot read it: " + problem(err)}
	}
	var foreign, owned []string
	for _, e := range entries {
		switch name := e.Name(); {
		case leftover(name):
		case c.Owns != nil && c.Owns(name):
			owned = append(owned, name)
		default:
			foreign = append(foreign, name)
		}
	}
	replace := "give another -o DIR, or " + OverwriteFlag + " to replace them"
	var (
		id     string
		marked bool
	)
	if c.Marker != "" && len(owned) > 0 {
		id, marked, err = readMarker(filepath.Join(path, c.Marker), c.Key)
	}
	// Another run's outputs are named as such first, though a run of other
	// settings writes files this one does not (a sweep's charts of other
	// metrics): they are what --overwrite would replace.
	if marked && id != c.ID {
		return &Error{path, fmt.Sprintf("holds what another stormsim %s wrote (its %s has %s %s, this one %s): %s", c.Command, c.Marker, c.Key, short(id), short(c.ID), replace)}
	}
	if len(foreign) > 0 {
		return &Error{path, fmt.Sprintf("holds files stormsim %s does not write (%s): give another -o DIR, or %s to write beside them (they stay)", c.Command, listNames(foreign), OverwriteFlag)}
	}
	switch {
	case c.Marker == "" || len(owned) == 0 || marked:
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return &Error{path, fmt.Sprintf("holds %s but no %s: not the outputs of a stormsim %s; %s", listNames(owned), c.Marker, c.Command, replace)}
	default:
		return &Error{path, fmt.Sprintf("its %s was not written by stormsim %s: %s", c.Marker, c.Command, replace)}
	}
}

// leftover reports whether name is what stormsim itself leaves behind
// when stopped mid-write: a temporary file (atomicfile) or a write probe.
func leftover(name string) bool {
	return strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".tmp") || strings.HasPrefix(name, probePrefix)
}

const probePrefix = ".stormsim-probe-"

// readMarker reads the top-level string key of the JSON object in path,
// and whether stormsim wrote it (its "tool" says so).
func readMarker(path, key string) (id string, ok bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", false, nil
	}
	var tool string
	found := false
	for dec.More() && !(found && tool != "") {
		k, err := dec.Token()
		if err != nil {
			return "", false, nil
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return "", false, nil
		}
		switch k {
		case "tool":
			json.Unmarshal(v, &tool)
		case key:
			found = json.Unmarshal(v, &id) == nil
		}
	}
	return id, found && strings.HasPrefix(tool, "stormsim "), nil
}

// short is a hash cut to 12 hex digits, enough to tell two apart.
func short(id string) string {
	if rest, ok := strings.CutPrefix(id, "sha256:"); ok && len(rest) > 12 {
		return "sha256:" + rest[:12]
	}
	return id
}

// listNames is up to three names and the count of the rest.
func listNames(names []string) string {
	if len(names) <= 3 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:3], ", "), len(names)-3)
}

// prepare creates path and its missing parents and proves it writable.
func prepare(path string) (*Dir, error) {
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
	probe, err := os.CreateTemp(abs, probePrefix+"*")
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
