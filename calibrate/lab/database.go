package lab

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"stormsim/internal/safetext"
)

// How long the harness waits for PostgreSQL before giving up with an error.
const (
	dbConnectTimeout = 5 * time.Second  // one connection attempt to a given URL
	clusterStartWait = 30 * time.Second // initdb plus the first accepted connection
	clusterStopWait  = 5 * time.Second  // fast shutdown before SIGKILL
)

// Database is the PostgreSQL a calibration runs against: a URL given by the
// caller, or a throwaway cluster that Close removes.
type Database struct {
	URL    string // postgres:// URL, loopback only
	Source string // "--database-url", "DATABASE_URL" or "throwaway cluster"

	cluster *cluster // nil unless throwaway
}

// OpenDatabase picks the database: url if set, else $DATABASE_URL, else a
// throwaway cluster in a temporary directory on a free loopback port when
// PostgreSQL's initdb and postgres binaries are installed. It checks that
// the database answers and returns a one-line error when it does not.
func OpenDatabase(ctx context.Context, rawURL string) (*Database, error) {
	db := &Database{URL: rawURL, Source: "--database-url"}
	if db.URL == "" {
		db.URL, db.Source = os.Getenv("DATABASE_URL"), "DATABASE_URL"
	}
	if db.URL == "" {
		c, err := startCluster(ctx)
		if err != nil {
			return nil, fmt.Errorf("no --database-url or DATABASE_URL, and no throwaway cluster: %w", err)
		}
		db.URL, db.Source, db.cluster = c.url, "throwaway cluster", c
		return db, nil
	}
	if err := checkLoopbackURL(db.URL); err != nil {
		return nil, fmt.Errorf("%s: %w", db.Source, err)
	}
	if err := ping(ctx, db.URL); err != nil {
		return nil, fmt.Errorf("PostgreSQL at %s (%s) is not reachable: %w", hostOf(db.URL), db.Source, err)
	}
	return db, nil
}

// String says where the database comes from and where it is, never the
// password.
func (db *Database) String() string { return db.Source + " at " + hostOf(db.URL) }

// Close removes a throwaway cluster; for a given URL it does nothing.
func (db *Database) Close() error {
	if db == nil || db.cluster == nil {
		return nil
	}
	return db.cluster.stop()
}

// checkLoopbackURL refuses database hosts other than loopback: a
// calibration creates and drops schemas and must not touch a shared server
// by accident. A Unix socket directory (host starting with '/') is local.
func checkLoopbackURL(raw string) error {
	cfg, err := pgx.ParseConfig(raw)
	if err != nil {
		return fmt.Errorf("database url: %w", err)
	}
	host := cfg.Host
	if strings.HasPrefix(host, "/") || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("database host %s is not loopback (calibration runs on this machine only)", host)
}

// hostOf is the host:port of a database URL, for messages (never the
// password).
func hostOf(raw string) string {
	cfg, err := pgx.ParseConfig(raw)
	if err != nil {
		return "?"
	}
	return net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
}

func ping(ctx context.Context, raw string) error {
	ctx, cancel := context.WithTimeout(ctx, dbConnectTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, raw)
	if err != nil {
		return errors.New(safetext.OneLine(err.Error()))
	}
	defer conn.Close(context.Background())
	return conn.Ping(ctx)
}

// newSchemaName returns a fresh schema name for one real run.
func newSchemaName() string {
	var b [6]byte
	rand.Read(b[:])
	return "calib_" + hex.EncodeToString(b[:])
}

// cluster is a throwaway PostgreSQL cluster: initdb into a temporary
// directory, the postmaster run directly (not through pg_ctl) in its own
// process group, so that stopping it is a signal to a group this process
// owns.
type cluster struct {
	dir    string
	url    string
	cmd    *exec.Cmd
	exited chan struct{}
	log    bytes.Buffer
}

// postgresBinDir finds a directory holding initdb and postgres: the newest
// /usr/lib/postgresql/*/bin (Debian's layout), then $PATH.
func postgresBinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int {
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
		return vb - va
	})
	for _, d := range dirs {
		if IsExecutable(filepath.Join(d, "initdb")) && IsExecutable(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		d := filepath.Dir(p)
		if IsExecutable(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", errors.New("PostgreSQL's initdb and postgres are not installed (looked in /usr/lib/postgresql/*/bin and $PATH)")
}

// IsExecutable reports whether path is an executable file.
func IsExecutable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// clusterUser is who runs initdb and postgres: the current user, or the
// "postgres" user when running as root (PostgreSQL refuses root).
func clusterUser() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, errors.New("running as root, and PostgreSQL refuses root while there is no postgres user to run it as")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// freeLoopbackPort asks the kernel for a free TCP port on 127.0.0.1. The
// port is released before use, so a race is possible; startCluster then
// fails with PostgreSQL's own message.
func freeLoopbackPort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("no free loopback port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func startCluster(ctx context.Context) (*cluster, error) {
	bin, err := postgresBinDir()
	if err != nil {
		return nil, err
	}
	cred, err := clusterUser()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "stormsim-pg-")
	if err != nil {
		return nil, err
	}
	c := &cluster{dir: dir, exited: make(chan struct{})}
	ok := false
	defer func() {
		if !ok {
			c.stop()
		}
	}()
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	ctx, cancel := context.WithTimeout(ctx, clusterStartWait)
	defer cancel()
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync")
	initdb.SysProcAttr = processAttr(cred)
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %v: %s", err, lastLine(out))
	}
	port, err := freeLoopbackPort()
	if err != nil {
		return nil, err
	}
	c.cmd = exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port), "-k", dir,
		"-c", "listen_addresses=127.0.0.1")
	c.cmd.SysProcAttr = processAttr(cred)
	c.cmd.Stdout, c.cmd.Stderr = &c.log, &c.log
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	go func() { c.cmd.Wait(); close(c.exited) }()
	c.url = (&url.URL{Scheme: "postgres", User: url.User("postgres"), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Path: "/postgres", RawQuery: "sslmode=disable"}).String()
	for {
		if err := ping(ctx, c.url); err == nil {
			ok = true
			return c, nil
		}
		select {
		case <-c.exited:
			return nil, fmt.Errorf("postgres exited at start: %s", lastLine(c.log.Bytes()))
		case <-ctx.Done():
			return nil, fmt.Errorf("postgres did not accept connections within %v", clusterStartWait)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stop asks the postmaster for a fast shutdown, kills its process group if
// it lingers, and removes the directory.
func (c *cluster) stop() error {
	if c.cmd != nil && c.cmd.Process != nil {
		c.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-c.exited:
		case <-time.After(clusterStopWait):
		}
		killGroup(c.cmd.Process.Pid)
		<-c.exited
	}
	return os.RemoveAll(c.dir)
}

// lastLine is the last non-empty line of out, for one-line errors.
func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
