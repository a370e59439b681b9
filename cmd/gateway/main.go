// Command gateway runs the stormsim gateway (see package stormsim/gateway
// and docs/gateway.md).
//
//	gateway [serve] [flags]              serve WebSocket handshakes (default)
//	gateway migrate [flags]              create the schema idempotently
//	gateway devices --count N            provision u-000-d1.. with tokens tok-<id>
//	gateway events --conv C --count N    append N events to conversation C
//	gateway reset-floor --device D       let a device whose claim reached its maximum claim again
//
// Every flag falls back to an environment variable (GATEWAY_<FLAG>, and
// DATABASE_URL for --database-url). Bad flags exit 2; runtime failures exit
// 1; a SIGTERM drain that released every route exits 0.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"stormsim/internal/safetext"
)

func main() {
	os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
}

// Exit codes.
const (
	exitOK      = 0 // done; for serve, a drain that released every route
	exitFailure = 1 // runtime failure: database, listener, a lost gateway id
	exitUsage   = 2 // bad command line or environment
)

// command is one entry of the command table.
type command struct {
	name    string
	summary string
	run     func(cmd *command, args []string, stdout, stderr io.Writer) error
}

// commands is the command table; serve is the default.
var commands = []*command{
	{name: "serve", summary: "serve WebSocket handshakes (the default command)", run: runServe},
	{name: "migrate", summary: "create the schema idempotently", run: runAdmin},
	{name: "devices", summary: "provision devices u-000-d1.. with tokens tok-<id>", run: runAdmin},
	{name: "events", summary: "append events to a conversation", run: runAdmin},
	{name: "reset-floor", summary: "let a device whose claim reached its maximum claim again", run: runAdmin},
}

// usageError is bad command-line input: exit 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// errHelp ends a command that printed its help: exit 0.
var errHelp = errors.New("help printed")

// Main runs the gateway command line and returns the process's exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	name := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if name == "help" {
		printUsage(stdout)
		return exitOK
	}
	cmd := lookup(name)
	if cmd == nil {
		fmt.Fprintf(stderr, "gateway: unknown command %q (want %s; see gateway help)\n", name, commandNames())
		return exitUsage
	}
	err := cmd.run(cmd, args, stdout, stderr)
	var ue usageError
	switch {
	case err == nil, errors.Is(err, errHelp):
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "gateway %s: %v\n", cmd.name, err)
		return exitUsage
	default:
		fmt.Fprintf(stderr, "gateway %s: %s\n", cmd.name, safetext.OneLine(err.Error()))
		return exitFailure
	}
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

func commandNames() string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: gateway [command] [flags]")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\n`gateway COMMAND --help` lists a command's flags.")
}
