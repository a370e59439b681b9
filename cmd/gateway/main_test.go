package main

import (
	"os"
	"strings"
	"testing"
)

// TestBadInputExitsTwo: every malformed command line or environment value
// exits 2 before touching the database.
func TestBadInputExitsTwo(t *testing.T) {
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
		{"id with a pipe", []string{"--id", "gw|a"}, nil},
		{"bad log level", []string{"--log-level", "loud"}, nil},
		{"stray argument", []string{"serve", "extra"}, nil},
		{"bad env value", nil, map[string]string{"GATEWAY_LEASE": "soon"}},
		{"no database url", []string{"--id", "gw-a"}, map[string]string{"DATABASE_URL": ""}},
		{"devices without count", []string{"devices"}, nil},
		{"events without conv", []string{"events", "--count", "3"}, nil},
		{"bad schema name", []string{"migrate", "--schema", "Bad-Name"}, map[string]string{"DATABASE_URL": "postgres://127.0.0.1:1/x"}},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			if c.env["DATABASE_URL"] == "" && c.env != nil {
				os.Unsetenv("DATABASE_URL")
			}
			if code := run(c.args); code != 2 {
				t.Errorf("run(%q) = %d, want 2", c.args, code)
			}
		})
	}
}

// TestOneLine: pgx's multi-line connection errors reach stderr as one line.
func TestOneLine(t *testing.T) {
	got := oneLine("failed to connect:\n\t127.0.0.1:1: refused\n\t127.0.0.1:1: refused")
	if want := "failed to connect:; 127.0.0.1:1: refused; 127.0.0.1:1: refused"; got != want {
		t.Errorf("oneLine = %q, want %q", got, want)
	}
}
