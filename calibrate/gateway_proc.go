package calibrate

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"stormsim/models"
)

// How long the harness waits on a gateway process.
const (
	gatewayStartWait = 15 * time.Second // until its "listening" log line
	gatewayExitWait  = 10 * time.Second // after SIGTERM, for the drain and exit
	metricsTimeout   = 2 * time.Second
)

// gatewaySpec is one gateway process of the lab.
type gatewaySpec struct {
	ID         string
	Lease      time.Duration
	Ping, Idle time.Duration
	Admission  models.AdmissionSpec // token_bucket or unlimited
	DrainGrace time.Duration
	DBConns    int // handshake pool size
	DBURL      string
	Schema     string
	LogPath    string // the process's raw JSON log (stderr)
}

// args is the command line of cmd/gateway serve for s.
func (s gatewaySpec) args() ([]string, error) {
	rate, burst := 0.0, 1
	switch s.Admission.Kind {
	case "token_bucket":
		rate, burst = s.Admission.Rate, s.Admission.Burst
	case "unlimited":
	default:
		return nil, fmt.Errorf("gateway %s: admission kind %q has no real gateway counterpart (token_bucket or unlimited)", s.ID, s.Admission.Kind)
	}
	return []string{"serve", "--id", s.ID, "--listen", "127.0.0.1:0", "--schema", s.Schema,
		"--lease", s.Lease.String(), "--ping", s.Ping.String(), "--idle", s.Idle.String(),
		"--admit-rate", strconv.FormatFloat(rate, 'g', -1, 64), "--admit-burst", strconv.Itoa(burst),
		"--retry-after", s.Admission.RetryAfter.String(), "--drain-grace", s.DrainGrace.String(),
		"--db-conns", strconv.Itoa(s.DBConns), "--log-rejections", "each"}, nil
}

// gatewayProc is a running gateway subprocess and its parsed log.
type gatewayProc struct {
	spec   gatewaySpec
	cmd    *exec.Cmd
	addr   string // host:port from the "listening" line
	log    *logBook
	exited chan struct{}
	state  *os.ProcessState
}

// startGateway starts bin with spec in its own process group and waits for
// its "listening" line. On any error the process is already killed.
func startGateway(ctx context.Context, bin string, spec gatewaySpec) (*gatewayProc, error) {
	args, err := spec.args()
	if err != nil {
		return nil, err
	}
	raw, err := os.Create(spec.LogPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(gatewayEnv(), "DATABASE_URL="+spec.DBURL)
	cmd.SysProcAttr = processAttr(nil)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		raw.Close()
		return nil, err
	}
	p := &gatewayProc{spec: spec, cmd: cmd, log: newLogBook(), exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		raw.Close()
		return nil, fmt.Errorf("gateway %s: %w", spec.ID, err)
	}
	go func() {
		p.log.read(io.TeeReader(stderr, raw))
		cmd.Wait()
		raw.Close()
		p.state = cmd.ProcessState
		close(p.exited)
	}()
	line, err := p.waitLog(ctx, "listening", gatewayStartWait)
	if err != nil {
		p.kill()
		return nil, err
	}
	p.addr, _ = line.Fields["addr"].(string)
	if p.addr == "" {
		p.kill()
		return nil, fmt.Errorf("gateway %s: listening line without addr", spec.ID)
	}
	return p, nil
}

// gatewayEnv is this process's environment without GATEWAY_* variables,
// which would silently override the flags the harness sets.
func gatewayEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GATEWAY_") && !strings.HasPrefix(kv, "DATABASE_URL=") {
			env = append(env, kv)
		}
	}
	return env
}

// url is the gateway's WebSocket base URL.
func (p *gatewayProc) url() string { return "ws://" + p.addr }

// waitLog waits for the first log line with message msg.
func (p *gatewayProc) waitLog(ctx context.Context, msg string, within time.Duration) (logLine, error) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	for {
		lines, changed := p.log.find(msg)
		if len(lines) > 0 {
			return lines[0], nil
		}
		select {
		case <-changed:
		case <-p.exited:
			if lines, _ := p.log.find(msg); len(lines) > 0 {
				return lines[0], nil
			}
			return logLine{}, fmt.Errorf("gateway %s exited (%v) before logging %q: %s", p.spec.ID, p.state, msg, p.log.last())
		case <-ctx.Done():
			if ctx.Err() == context.DeadlineExceeded {
				return logLine{}, fmt.Errorf("gateway %s did not log %q within %v (last: %s)", p.spec.ID, msg, within, p.log.last())
			}
			return logLine{}, ctx.Err()
		}
	}
}

// signal sends sig to the gateway process and returns when it was sent.
func (p *gatewayProc) signal(sig syscall.Signal) (time.Time, error) {
	at := time.Now()
	if err := p.cmd.Process.Signal(sig); err != nil {
		return at, fmt.Errorf("gateway %s: %v: %w", p.spec.ID, sig, err)
	}
	return at, nil
}

// wait waits for the process to exit and returns its exit code (-1 when a
// signal ended it).
func (p *gatewayProc) wait(ctx context.Context, within time.Duration) (int, error) {
	select {
	case <-p.exited:
		return p.state.ExitCode(), nil
	case <-time.After(within):
		return 0, fmt.Errorf("gateway %s did not exit within %v", p.spec.ID, within)
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// kill ends the process group at once and waits for the process.
func (p *gatewayProc) kill() {
	killGroup(p.cmd.Process.Pid)
	<-p.exited
}

// metrics scrapes /metrics into sample name (with labels) -> value.
func (p *gatewayProc) metrics(ctx context.Context) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, metricsTimeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.addr+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("gateway %s /metrics: %w", p.spec.ID, err)
	}
	defer resp.Body.Close()
	return parseMetrics(resp.Body)
}

// parseMetrics reads the Prometheus text format: "name{labels} value"
// lines; comments are skipped.
func parseMetrics(r io.Reader) (map[string]float64, error) {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			return nil, fmt.Errorf("metrics: malformed line %q", line)
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("metrics: malformed value in %q", line)
		}
		out[line[:i]] = v
	}
	return out, sc.Err()
}

// logLine is one JSON line of a gateway's slog output.
type logLine struct {
	Time   time.Time      // the line's "time" (millisecond resolution)
	Msg    string         // its "msg"
	Fields map[string]any // everything, "time" and "msg" included
}

// num returns a numeric field (0 if absent).
func (l logLine) num(key string) float64 {
	f, _ := l.Fields[key].(float64)
	return f
}

// logBook collects a process's log lines as they arrive.
type logBook struct {
	mu      sync.Mutex
	lines   []logLine
	other   []string // lines that are not JSON
	changed chan struct{}
}

func newLogBook() *logBook { return &logBook{changed: make(chan struct{})} }

func (b *logBook) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		b.add(sc.Text())
	}
	io.Copy(io.Discard, r) // a line over the limit: keep the pipe drained
}

func (b *logBook) add(text string) {
	var fields map[string]any
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := json.Unmarshal([]byte(text), &fields); err != nil {
		b.other = append(b.other, text)
	} else {
		l := logLine{Fields: fields}
		l.Msg, _ = fields["msg"].(string)
		if ts, ok := fields["time"].(string); ok {
			l.Time, _ = time.Parse(time.RFC3339Nano, ts)
		}
		b.lines = append(b.lines, l)
	}
	close(b.changed)
	b.changed = make(chan struct{})
}

// find returns the lines with message msg so far and a channel closed at
// the next line.
func (b *logBook) find(msg string) ([]logLine, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []logLine
	for _, l := range b.lines {
		if l.Msg == msg {
			out = append(out, l)
		}
	}
	return out, b.changed
}

// all returns every JSON line so far.
func (b *logBook) all() []logLine {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]logLine(nil), b.lines...)
}

// last describes the last line, for error messages.
func (b *logBook) last() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n := len(b.other); n > 0 {
		return b.other[n-1]
	}
	if n := len(b.lines); n > 0 {
		data, _ := json.Marshal(b.lines[n-1].Fields)
		return string(data)
	}
	return "no output"
}

// buildGateway compiles cmd/gateway into dir and returns the binary's path.
func buildGateway(ctx context.Context, dir string) (string, error) {
	return buildCommand(ctx, dir, "gateway")
}

// buildCommand compiles ./cmd/NAME into dir and returns the binary's path.
// It needs the go tool and the module's source: it looks for the stormsim
// go.mod from the working directory up.
func buildCommand(ctx context.Context, dir, name string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, name)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/"+name)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/%s: %v: %s", name, err, lastLine(out))
	}
	return bin, nil
}

// moduleRoot is the nearest directory at or above the working directory
// whose go.mod declares module stormsim.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if first, _, _ := strings.Cut(strings.TrimSpace(string(data)), "\n"); err == nil && strings.TrimSpace(first) == "module stormsim" {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot build the gateway outside the stormsim source tree: pass --gateway-bin")
		}
		dir = parent
	}
}
