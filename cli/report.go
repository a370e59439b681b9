package cli

import (
	"fmt"
	"os"

	"stormsim/htmlreport"
	"stormsim/internal/human"
)

// cmdReport is stormsim report.
var cmdReport = &command{
	name:      "report",
	summary:   "write DIR/report.html again from what stormsim run, sweep, calibrate or solve saved in DIR: one page that works offline",
	usage:     "DIR",
	run:       runReport,
	takesArgs: true,
}

func runReport(e *env, cmd *command, args []string) error {
	fs := flagSet(cmd.name)
	if done, err := parse(e, cmd, fs, args); done || err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErrorf("stormsim report: give one directory that stormsim run, sweep, calibrate or solve wrote with -o")
	}
	page, err := htmlreport.FromDir(fs.Arg(0))
	if err != nil {
		return badInput(fmt.Errorf("stormsim report: %w", err))
	}
	path, err := htmlreport.Write(fs.Arg(0), page)
	if err != nil {
		return fmt.Errorf("stormsim report: %w", err)
	}
	_, err = fmt.Fprintf(e.stdout, "wrote %s (%s)\n", path, fileSize(path))
	return err
}

// writeReport writes dir's report.html from the documents just written
// there, and returns its path.
func writeReport(dir string) (string, error) {
	page, err := htmlreport.FromDir(dir)
	if err != nil {
		return "", err
	}
	return htmlreport.Write(dir, page)
}

func fileSize(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return "?"
	}
	return human.Bytes(st.Size())
}
