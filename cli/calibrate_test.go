package cli

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCalibrateBadDatabase: a database URL that cannot be parsed, a host
// that is not loopback and a database that does not answer are the user's
// to fix: exit 2 with one line naming the problem, and no output directory
// left behind.
func TestCalibrateBadDatabase(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cases := []struct {
		name, url, want string
	}{
		{"unparseable", "postgres://[::1", "database url"},
		{"not loopback", "postgres://postgres@db.example.com/x", "not loopback"},
		{"nothing listening", "postgres://postgres@127.0.0.1:" + strconv.Itoa(closed) + "/x?sslmode=disable", "not reachable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			code, stdout, stderr := stormsim("calibrate", "-c", "../configs/seed-lab.yaml", "-o", out, "--database-url", c.url)
			if code != ExitUsage || stdout != "" || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", code, stdout, stderr, c.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("output directory %s left behind (%v)", out, err)
			}
		})
	}
}

// TestCalibrateSizingNeedsWhatItSizes: sizing flags a storm cannot take
// are refused before anything runs: exit 2, one line, no directory.
func TestCalibrateSizingNeedsWhatItSizes(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"a queue of timeouts without a timeout", []string{"-c", "../configs/seed-lab-1000.yaml", "--size-queue", "3"}, "has no timeout"},
		{"a bucket fraction without a bucket", []string{"-c", "../configs/metastable-lab.yaml", "--size-bucket", "0.8"}, "admission is unlimited"},
		{"a bucket fraction over 1", []string{"-c", "../configs/metastable-lab-bucket.yaml", "--size-bucket", "1.5"}, "must be in (0, 1]"},
		{"a negative queue", []string{"-c", "../configs/metastable-lab.yaml", "--size-queue", "-1"}, "must be in (0, 100]"},
		{"both rules at 0", []string{"-c", "../configs/metastable-lab.yaml", "--size-queue", "0"}, "needs --size-queue or --size-bucket"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"calibrate", "-o", out, "--database-url", "postgres://postgres@127.0.0.1:1/x?sslmode=disable"}, c.args...)
			code, stdout, stderr := stormsim(args...)
			if code != ExitUsage || stdout != "" || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", code, stdout, stderr, c.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("output directory %s left behind (%v)", out, err)
			}
		})
	}
}
