// Command stormsim simulates reconnect storms; see `stormsim help`.
package main

import (
	"os"

	"stormsim/cli"
)

func main() {
	os.Exit(cli.MainProcess(os.Args[1:], os.Stdout, os.Stderr))
}
