package lab

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestUnreachableDatabase: a closed port is a one-line error within the
// connect timeout, not a hang; a remote host is refused before connecting.
func TestUnreachableDatabase(t *testing.T) {
	port, err := freeLoopbackPort()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		url, want string
	}{
		{"postgres://postgres@127.0.0.1:" + strconv.Itoa(port) + "/x?sslmode=disable", "is not reachable"},
		{"postgres://postgres@db.example.com/x", "not loopback"},
	}
	for _, c := range cases {
		began := time.Now()
		_, err := OpenDatabase(context.Background(), c.url)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err = %v, want one line with %q", c.url, err, c.want)
		}
		if took := time.Since(began); took > dbConnectTimeout+time.Second {
			t.Errorf("%s: took %v", c.url, took)
		}
	}
}

// TestThrowawayCluster starts and removes a cluster of its own (skipped
// where PostgreSQL's server binaries are not installed: the cluster is the
// fallback, not a requirement).
func TestThrowawayCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster")
	}
	if _, err := postgresBinDir(); err != nil {
		t.Skip(err)
	}
	if _, err := clusterUser(); err != nil {
		t.Skip(err)
	}
	t.Setenv("DATABASE_URL", "")
	db, err := OpenDatabase(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if db.Source != "throwaway cluster" || checkLoopbackURL(db.URL) != nil {
		t.Errorf("database %+v", db)
	}
	if err := ping(context.Background(), db.URL); err != nil {
		t.Errorf("cluster does not answer: %v", err)
	}
	dir := db.cluster.dir
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("cluster directory %s left: %v", dir, err)
	}
	if err := ping(context.Background(), db.URL); err == nil {
		t.Error("cluster still answers after Close")
	}
}
