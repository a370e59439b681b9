package lab

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"stormsim/gateway/logline"
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
	Abandoned  models.Abandoned // --abandoned
	MaxQueue   int              // --max-claims-inflight; 0 = none
	DBConns    int              // handshake pool size
	DrainPace  models.DrainPaceSpec
	Hint       models.ReconnectHintSpec
	Listen     string // host:port; "" picks a free port
	DBURL      string
	Schema     string
	LogPath    string // the process's raw JSON log (stderr)
}

// args is the command line of cmd/gateway serve for s.
func (s gatewaySpec) args() ([]string, error) {
	rate, burst := 0.0, 1
	switch s.Admission.Kind {
	case models.AdmissionTokenBucket:
		rate, burst = s.Admission.Rate, s.Admission.Burst
	case models.AdmissionUnlimited:
	default:
		return nil, fmt.Errorf("gateway %s: admission kind %q has no real gateway counterpart (token_bucket or unlimited)", s.ID, s.Admission.Kind)
	}
	listen := s.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	pace, hint := s.DrainPace.String(), s.Hint.String()
	if s.DrainPace.Kind == "" {
		pace = string(models.PaceAll)
	}
	if s.Hint.Kind == "" {
		hint = string(models.HintNone)
	}
	return []string{"serve", "--id", s.ID, "--listen", listen, "--schema", s.Schema, "--drain-pace", pace, "--reconnect-hint", hint,
		"--lease", s.Lease.String(), "--ping", s.Ping.String(), "--idle", s.Idle.String(),
		"--admit-rate", strconv.FormatFloat(rate, 'g', -1, 64), "--admit-burst", strconv.Itoa(burst),
		"--retry-after", s.Admission.RetryAfter.String(), "--drain-grace", s.DrainGrace.String(),
		"--abandoned", string(s.Abandoned), "--max-claims-inflight", strconv.Itoa(s.MaxQueue),
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
	// The gateway writes its log into a file, never a pipe: a pipe's writer
	// waits whenever its reader falls behind, and the reader here is this
	// process, whose goroutines are the storm's clients. Behind a pipe the
	// gateway's every logged decision and goaway waited for the clients'
	// process to find time to read (at 1,000 clients a drained session's
	// close frame came 260-330 ms after its goaway), a lab effect the
	// model would have had to fit as the gateway's.
	raw, err := os.Create(spec.LogPath)
	if err != nil {
		return nil, err
	}
	tail, err := os.Open(spec.LogPath)
	if err != nil {
		raw.Close()
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(gatewayEnv(), "DATABASE_URL="+spec.DBURL)
	cmd.SysProcAttr = processAttr(nil)
	cmd.Stdout, cmd.Stderr = raw, raw
	p := &gatewayProc{spec: spec, cmd: cmd, log: newLogBook(), exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		raw.Close()
		tail.Close()
		return nil, fmt.Errorf("gateway %s: %w", spec.ID, err)
	}
	raw.Close() // the child holds its own descriptor
	waited := make(chan struct{})
	go func() {
		cmd.Wait()
		p.state = cmd.ProcessState
		close(waited)
	}()
	go func() {
		p.log.read(&follower{f: tail, done: waited})
		tail.Close()
		close(p.exited)
	}()
	line, err := p.waitLog(ctx, logline.Listening, gatewayStartWait)
	if err == nil {
		p.addr, err = line.str(logline.KeyAddr)
	}
	if err != nil {
		p.kill()
		return nil, err
	}
	return p, nil
}

// follower reads a file another process is writing, as tail -f does: at
// its end it waits for more, until done is closed and everything written
// before has been read.
type follower struct {
	f    *os.File
	done <-chan struct{}
}

// followPoll is how long a follower waits at the end of the file before
// it looks again: short beside the lab's waits for a log line (tens of ms
// and up), and its 500 wake-ups a second cost well under a hundredth of a
// core.
const followPoll = 2 * time.Millisecond

func (r *follower) Read(b []byte) (int, error) {
	for {
		n, err := r.f.Read(b)
		if n > 0 || err != io.EOF {
			return n, err
		}
		select {
		case <-r.done:
			return r.f.Read(b) // the last bytes, or io.EOF
		case <-time.After(followPoll):
		}
	}
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

// cpuTicks is the process's CPU time so far in /proc's clock ticks: read
// from /proc while it runs, from its exit status once it has been waited
// for.
func (p *gatewayProc) cpuTicks() (uint64, bool) {
	select {
	case <-p.exited:
		cpu := p.state.UserTime() + p.state.SystemTime()
		return uint64(cpu * ticksPerSecond / time.Second), true
	default:
		return processTicks(p.cmd.Process.Pid)
	}
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

// signal sends sig to the gateway process.
func (p *gatewayProc) signal(sig syscall.Signal) error {
	if err := p.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("gateway %s: %v: %w", p.spec.ID, sig, err)
	}
	return nil
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
