package gateway_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"stormsim/gateway/logline"
	"stormsim/gateway/store"
	"stormsim/internal/pgtest"
)

// gatewayBin is cmd/gateway, built by the first test that starts a process
// (benchmarks never do), into binDir, which TestMain removes.
var (
	buildOnce  sync.Once
	binDir     string
	gatewayBin string
	buildErr   error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// gatewayBinary builds cmd/gateway once.
func gatewayBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "gateway-bin-"); buildErr != nil {
			return
		}
		gatewayBin = filepath.Join(binDir, "gateway")
		if out, err := exec.Command("go", "build", "-o", gatewayBin, "stormsim/cmd/gateway").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("build cmd/gateway: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return gatewayBin
}

// proc is a gateway subprocess.
type proc struct {
	id     string
	cmd    *exec.Cmd
	addr   string
	logs   *logLines
	exited chan struct{}
	state  *os.ProcessState
}

// procConfig are the subprocess flags the tests vary.
type procConfig struct {
	lease, ping, idle time.Duration
	dbURL             string // default DATABASE_URL
	fdLimit           int    // if > 0, the process runs under ulimit -n fdLimit
	extra             []string
}

// shortLease is the subprocess default: lease 600ms, ping 200ms, so the
// period is 200ms, and the reclaim window [400, 800] ms.
var shortLease = procConfig{lease: 600 * time.Millisecond, ping: 200 * time.Millisecond, idle: 3 * time.Second}

// startProc starts cmd/gateway on a free port in schema and waits for its
// "listening" line. It is SIGKILLed at cleanup if still running.
func startProc(t testing.TB, schema, id string, pc procConfig) *proc {
	t.Helper()
	p := launchProc(t, schema, id, pc)
	waitFor(t, 15*time.Second, id+" listening", func() bool {
		select {
		case <-p.exited:
			t.Fatalf("%s exited early: %s", id, p.logs.buf.String())
		default:
		}
		return len(p.logs.events(logline.Listening)) > 0
	})
	p.addr = p.logs.events(logline.Listening)[0]["addr"].(string)
	return p
}

// launchProc starts cmd/gateway without waiting for anything.
func launchProc(t testing.TB, schema, id string, pc procConfig) *proc {
	t.Helper()
	if pc.dbURL == "" {
		pc.dbURL = pgtest.URL(t)
	}
	args := []string{"serve", "--id", id, "--listen", "127.0.0.1:0", "--schema", schema,
		"--lease", pc.lease.String(), "--ping", pc.ping.String(), "--idle", pc.idle.String(),
		"--db-conns", "4", "--drain-grace", "3s"}
	args = append(args, pc.extra...)
	bin := gatewayBinary(t)
	cmd := exec.Command(bin, args...)
	if pc.fdLimit > 0 {
		cmd = exec.Command("sh", append([]string{"-c", `ulimit -n "$0" && exec "$@"`, strconv.Itoa(pc.fdLimit), bin}, args...)...)
	}
	cmd.Env = append(os.Environ(), "DATABASE_URL="+pc.dbURL)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{id: id, cmd: cmd, logs: &logLines{}, exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r := bufio.NewReader(stderr)
		io.Copy(p.logs, r)
		cmd.Wait()
		p.state = cmd.ProcessState
		close(p.exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Kill()
		<-p.exited
		if t.Failed() {
			for _, e := range p.logs.events("") {
				if e["msg"] != logline.Admitted && e["msg"] != logline.Closed && e["msg"] != logline.GoawaySent {
					t.Logf("%s: %v", id, e)
				}
			}
		}
	})
	return p
}

func (p *proc) signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// wait waits for the process to exit and returns its exit code (-1 if
// killed by a signal).
func (p *proc) wait(t testing.TB, within time.Duration) int {
	t.Helper()
	select {
	case <-p.exited:
		return p.state.ExitCode()
	case <-time.After(within):
		t.Fatalf("%s did not exit within %v", p.id, within)
		return 0
	}
}

// metric scrapes one sample (e.g. `gateway_kicks_sent_total`) from /metrics.
func (p *proc) metric(t testing.TB, name string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + p.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	t.Fatalf("metric %s not found", name)
	return 0
}

// withHost returns the database URL with its host:port replaced.
func withHost(t testing.TB, raw, hostport string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = hostport
	return u.String()
}

// connectAll connects devices [from, to) to addr with the given attempt.
// A 503 "lease lost" (a loaded machine stalled the gateway's renewals past
// its lease; nothing was claimed) is retried for up to 5 s.
func connectAll(t testing.TB, addr string, from, to int, attempt int64) []*client {
	t.Helper()
	out := make([]*client, 0, to-from)
	for i := from; i < to; i++ {
		deadline := time.Now().Add(5 * time.Second)
		for {
			c, resp, err := dial(context.Background(), addr, store.DeviceID(i), 0, attempt, true)
			if err == nil {
				out = append(out, c)
				break
			}
			if status(resp) == 503 && time.Now().Before(deadline) {
				if body, _ := io.ReadAll(resp.Body); strings.Contains(string(body), "lease lost") {
					time.Sleep(50 * time.Millisecond)
					continue
				}
			}
			t.Fatalf("connect device %d: %d %v", i, status(resp), err)
		}
	}
	return out
}
