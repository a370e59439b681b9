package main

import (
	"bytes"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// TestBadInputExitsTwo: every malformed command line or environment value
// exits 2 with one line on stderr, before touching the database (the URL
// points nowhere).
func TestBadInputExitsTwo(t *testing.T) {
	nowhere := map[string]string{"DATABASE_URL": "postgres://127.0.0.1:1/x"}
	cases := []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"unknown command", []string{"launch"}, nil},
		{"unknown flag", []string{"--leese", "1s"}, nil},
		{"lease not a duration", []string{"--lease", "fast"}, nil},
		{"lease not above the period", []string{"--lease", "100ms"}, nil},
		{"negative admit rate", []string{"--admit-rate", "-1"}, nil},
		{"burst 0 with a rate", []string{"--admit-rate", "40", "--admit-burst", "0"}, nil},
		{"negative source rate", []string{"--source-rate", "-1"}, nil},
		{"source burst 0 with a rate", []string{"--source-rate", "5", "--source-burst", "0"}, nil},
		{"abandoned mode unknown", []string{"--abandoned", "maybe"}, nil},
		{"negative max claims inflight", []string{"--max-claims-inflight", "-1"}, nil},
		{"negative max conns", []string{"--max-conns", "-5"}, nil},
		{"http idle 0", []string{"--http-idle", "0s"}, nil},
		{"sync rate 0", []string{"--sync-rate", "0"}, nil},
		{"log rejections unknown", []string{"--log-rejections", "some"}, nil},
		{"drain pace unknown", []string{"--drain-pace", "trickle"}, nil},
		{"drain pace key unknown", []string{"--drain-pace", "spread:width=5s"}, nil},
		{"reserved hint without a rate", []string{"--reconnect-hint", "reserved"}, nil},
		{"hint not a duration", []string{"--reconnect-hint", "fixed:delay=soon"}, nil},
		{"id with a pipe", []string{"--id", "gw|a"}, nil},
		{"bad log level", []string{"--log-level", "loud"}, nil},
		{"stray argument", []string{"serve", "extra"}, nil},
		{"bad env value", nil, map[string]string{"GATEWAY_LEASE": "soon"}},
		{"no database url", []string{"--id", "gw-a"}, map[string]string{"DATABASE_URL": ""}},
		{"devices without count", []string{"devices"}, nil},
		{"events without conv", []string{"events", "--count", "3"}, nil},
		{"events with negative members", []string{"events", "--conv", "c", "--count", "3", "--members", "-1"}, nowhere},
		{"reset-floor without device", []string{"reset-floor"}, nowhere},
		{"bad schema name", []string{"migrate", "--schema", "Bad-Name"}, nowhere},
		{"schema public", []string{"migrate", "--schema", "public"}, nowhere},
		{"schema information_schema", []string{"--schema", "information_schema"}, nowhere},
		{"schema pg_catalog", []string{"devices", "--count", "1", "--schema", "pg_catalog"}, nowhere},
		{"schema pg_lab", []string{"--schema", "pg_lab"}, nowhere},
		{"database url unparseable", []string{"--database-url", "postgres://[::1"}, nil},
		{"DATABASE_URL unparseable", []string{"migrate"}, map[string]string{"DATABASE_URL": "postgres://[::1"}},
		{"listen port out of range", []string{"--listen", "127.0.0.1:99999"}, nowhere},
		{"listen port not a number", []string{"--listen", "127.0.0.1:http-alt"}, nowhere},
		{"listen without a port", []string{"--listen", "127.0.0.1"}, nowhere},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			if v, ok := c.env["DATABASE_URL"]; ok && v == "" {
				os.Unsetenv("DATABASE_URL")
			}
			var stdout, stderr bytes.Buffer
			if code := Main(c.args, &stdout, &stderr); code != exitUsage {
				t.Errorf("Main(%q) = %d, want %d; stderr %q", c.args, code, exitUsage, stderr.String())
			}
			if lines := strings.Count(stderr.String(), "\n"); lines != 1 || stdout.Len() != 0 {
				t.Errorf("Main(%q): stderr %q, stdout %q; want one line on stderr only", c.args, stderr.String(), stdout.String())
			}
		})
	}
}

// TestHelpGoesToStdout: help is output the user asked for, so it goes to
// stdout with exit 0, for the command table and for every command's flags.
func TestHelpGoesToStdout(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"help"}, "commands:"},
		{[]string{"--help"}, "--max-claims-inflight"},
		{[]string{"serve", "-h"}, "--abandoned"},
		{[]string{"devices", "--help"}, "--conv"},
		{[]string{"events", "--help"}, "--members"},
		{[]string{"reset-floor", "--help"}, "--device"},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		code := Main(c.args, &stdout, &stderr)
		if code != exitOK || !strings.Contains(stdout.String(), c.want) || stderr.Len() != 0 {
			t.Errorf("Main(%q) = %d, stdout has %q: %v, stderr %q", c.args, code, c.want, strings.Contains(stdout.String(), c.want), stderr.String())
		}
	}
}

// TestDatabaseFailureExitsOne: a command that cannot reach its database is a
// runtime failure: exit 1, one line.
func TestDatabaseFailureExitsOne(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://postgres@127.0.0.1:1/x?connect_timeout=1")
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"migrate"}, &stdout, &stderr); code != exitFailure || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("migrate without a database = %d, stderr %q; want %d and one line", code, stderr.String(), exitFailure)
	}
}

// TestSilentDatabaseAtStartup: a database that accepts connections and
// never answers ends serve and migrate with exit 1 after the start-up
// timeout, in a line that names the phase and the database's address.
func TestSilentDatabaseAtStartup(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		var held []net.Conn // accepted, never answered
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	was := startupTimeout
	startupTimeout = 300 * time.Millisecond
	defer func() { startupTimeout = was }()
	url := "postgres://postgres@" + ln.Addr().String() + "/x"
	var stdout, stderr bytes.Buffer
	began := time.Now()
	code := Main([]string{"--database-url", url, "--id", "gw-silent", "--listen", "127.0.0.1:0"}, &stdout, &stderr)
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	last := lines[len(lines)-1]
	if code != exitFailure || !strings.Contains(last, "migrate") || !strings.Contains(last, ln.Addr().String()) ||
		!strings.Contains(last, "did not answer within 300ms") {
		t.Errorf("serve against a silent database = %d, last line %q; want %d naming the phase and %s", code, last, exitFailure, ln.Addr())
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("serve took %v to give up, want about the start-up timeout", took)
	}
}
