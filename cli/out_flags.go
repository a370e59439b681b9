package cli

import (
	"fmt"
	"slices"

	"github.com/spf13/pflag"

	"stormsim/internal/outdir"
)

// outFlags are -o DIR and --overwrite, for a command that writes a
// directory. A command adds them with its help text and prepares the
// directory, refused with exit 2 when it holds another run's outputs or
// files the command does not write, in one line each:
//
//	r.out.add(fs, "write the result into `DIR` (created)")
//	dir, err := r.out.prepare(cmd.name, outdir.Claim{Owns: owns(files), Marker: ResultFile, Key: "config_hash", ID: hash})
type outFlags struct {
	dir       string
	overwrite bool
}

func (o *outFlags) add(fs *pflag.FlagSet, usage string) {
	fs.StringVarP(&o.dir, "out", "o", "", usage)
	fs.BoolVar(&o.overwrite, "overwrite", false, "write into -o DIR even when it holds another run's outputs (replaced) or files this command does not write (left alone)")
}

// prepare creates and checks -o DIR for command cmd (see outdir.Prepare);
// claim.Command and claim.Overwrite come from cmd and the flags.
func (o *outFlags) prepare(cmd string, claim outdir.Claim) (*outdir.Dir, error) {
	claim.Command, claim.Overwrite = cmd, o.overwrite
	dir, err := outdir.Prepare(o.dir, claim)
	if err != nil {
		return nil, badInput(fmt.Errorf("stormsim %s: %w", cmd, err))
	}
	return dir, nil
}

// owns is an outdir.Claim's Owns for a list of names.
func owns(names []string) func(string) bool {
	return func(name string) bool { return slices.Contains(names, name) }
}
