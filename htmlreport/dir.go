package htmlreport

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// kind is what FromDir knows of one sort of output directory: the
// document that marks it and how to build its page from the directory.
type kind struct {
	file  string
	build func(dir string) (*Page, error)
}

// kinds are the output directories a report is built from, in the order
// they are looked for. A new command's page is one more entry and its
// builder.
var kinds = []kind{
	{RunFile, func(dir string) (*Page, error) {
		data, err := os.ReadFile(filepath.Join(dir, RunFile))
		if err != nil {
			return nil, err
		}
		return RunPage(data)
	}},
	{SweepFile, sweepFromDir},
	{CalibrationFile, calibrationFromDir},
	{SolveFile, solveFromDir},
}

// FromDir builds the page of an output directory that stormsim run,
// sweep, calibrate or solve wrote, from its documents alone.
func FromDir(dir string) (*Page, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, unwrapPath(err))
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory: give the directory stormsim run, sweep, calibrate or solve wrote with -o", dir)
	}
	var names []string
	for _, k := range kinds {
		names = append(names, k.file)
		if _, err := os.Stat(filepath.Join(dir, k.file)); err == nil {
			p, err := k.build(dir)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", filepath.Join(dir, k.file), unwrapPath(err))
			}
			return p, nil
		}
	}
	return nil, fmt.Errorf("%s holds none of %s: give the directory stormsim run, sweep, calibrate or solve wrote with -o", dir, strings.Join(names, ", "))
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
