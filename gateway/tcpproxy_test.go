package gateway_test

import (
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// tcpProxy forwards connections to a target (PostgreSQL, in these tests)
// and injects the faults of a slow or absent database:
//
//   - cut: every forwarded connection is dropped and new ones are closed
//     on arrival;
//   - hold: bytes stop flowing both ways (connections stay open, new ones
//     are accepted and wait), as a stalled network or database would do;
//   - delay: every chunk read from either side waits before it is
//     forwarded, one chunk after the other, so a round trip costs at least
//     two delays.
//
// Only one mode holds at a time: setting one ends the others.
type tcpProxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	cut     bool
	hold    bool
	delay   time.Duration
	changed chan struct{} // closed and replaced on every change of mode
	open    map[net.Conn]struct{}
}

func startProxy(t testing.TB, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{ln: ln, target: target, open: map[net.Conn]struct{}{}, changed: make(chan struct{})}
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.setCut(true) })
	return p
}

func (p *tcpProxy) addr() string { return p.ln.Addr().String() }

func (p *tcpProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.forward(c)
	}
}

func (p *tcpProxy) forward(c net.Conn) {
	p.mu.Lock()
	if p.cut {
		p.mu.Unlock()
		c.Close()
		return
	}
	p.mu.Unlock()
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.cut {
		p.mu.Unlock()
		c.Close()
		up.Close()
		return
	}
	p.open[c], p.open[up] = struct{}{}, struct{}{}
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { p.pump(up, c); done <- struct{}{} }()
	go func() { p.pump(c, up); done <- struct{}{} }()
	<-done
	c.Close()
	up.Close()
	p.mu.Lock()
	delete(p.open, c)
	delete(p.open, up)
	p.mu.Unlock()
}

// pump copies src to dst chunk by chunk, each chunk waiting out a hold and
// the delay before it is written.
func (p *tcpProxy) pump(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.pass() {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// pass waits while the proxy holds, then for the delay; false means the
// connection was cut meanwhile.
func (p *tcpProxy) pass() bool {
	for {
		p.mu.Lock()
		cut, hold, delay, changed := p.cut, p.hold, p.delay, p.changed
		p.mu.Unlock()
		switch {
		case cut:
			return false
		case hold:
			<-changed
		case delay > 0:
			time.Sleep(delay)
			return true
		default:
			return true
		}
	}
}

// set changes the mode; with cut, every forwarded connection is dropped.
func (p *tcpProxy) set(cut, hold bool, delay time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut, p.hold, p.delay = cut, hold, delay
	close(p.changed)
	p.changed = make(chan struct{})
	if cut {
		for c := range p.open {
			c.Close()
		}
	}
}

// setCut(true) drops every forwarded connection and refuses new ones;
// setCut(false) forwards again.
func (p *tcpProxy) setCut(cut bool) { p.set(cut, false, 0) }

// setHold(true) stops every byte, both ways, until setHold(false).
func (p *tcpProxy) setHold(hold bool) { p.set(false, hold, 0) }

// setDelay makes every chunk wait d before it is forwarded (0: none).
func (p *tcpProxy) setDelay(d time.Duration) { p.set(false, false, d) }

// TestProxyFaults: the proxy's modes do what the fault tests rely on: a
// cut drops the connection, a hold stops bytes until it ends (nothing is
// lost), and a delay makes a round trip cost at least two delays.
func TestProxyFaults(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	p := startProxy(t, echo.Addr().String())
	c, err := net.Dial("tcp", p.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	roundTrip := func(msg string, within time.Duration) (time.Duration, error) {
		began := time.Now()
		c.SetDeadline(began.Add(within))
		if _, err := c.Write([]byte(msg)); err != nil {
			return 0, err
		}
		buf := make([]byte, len(msg))
		if _, err := io.ReadFull(c, buf); err != nil {
			return 0, err
		}
		if string(buf) != msg {
			return 0, fmt.Errorf("echo %q, want %q", buf, msg)
		}
		return time.Since(began), nil
	}
	if _, err := roundTrip("pass", 5*time.Second); err != nil {
		t.Fatalf("passing: %v", err)
	}

	const delay = 100 * time.Millisecond
	p.setDelay(delay)
	if took, err := roundTrip("slow", 5*time.Second); err != nil || took < 2*delay {
		t.Errorf("delayed round trip took %v (%v), want >= %v", took, err, 2*delay)
	}

	p.setHold(true)
	released := make(chan time.Time, 1)
	go func() { time.Sleep(300 * time.Millisecond); released <- time.Now(); p.setHold(false) }()
	if _, err := roundTrip("held", 10*time.Second); err != nil {
		t.Errorf("held round trip: %v", err)
	} else if at := <-released; time.Now().Before(at) {
		t.Errorf("the held bytes arrived before the hold ended")
	}

	p.setCut(true)
	if _, err := roundTrip("cut", 2*time.Second); err == nil {
		t.Errorf("a cut connection still echoes")
	}
	if c2, err := net.Dial("tcp", p.addr()); err == nil {
		c2.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err := c2.Read(make([]byte, 1)); err == nil {
			t.Errorf("a new connection during the cut was forwarded")
		}
		c2.Close()
	}
	p.setCut(false)
	c3, err := net.Dial("tcp", p.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	c = c3
	if _, err := roundTrip("back", 5*time.Second); err != nil {
		t.Errorf("after the cut: %v", err)
	}
}
