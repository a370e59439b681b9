package gateway

import (
	"bytes"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"stormsim/gateway/logline"
)

const (
	// refusedAnswer is what a connection over the cap gets: cheap to write,
	// and it tells a client to come back rather than leaving it to time out.
	refusedAnswer = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n" +
		"Retry-After: %d\r\nConnection: close\r\nContent-Length: 16\r\n\r\ntoo many clients"
	// refusalLinger bounds how long a refused connection is kept to read
	// what the client already sent: closing a socket with unread data sends
	// a reset, which can destroy the 503 before the client reads it.
	refusalLinger = 200 * time.Millisecond
	// maxRefusedHead bounds what is read of a refused request before the
	// answer: a handshake's head is a few hundred bytes.
	maxRefusedHead = 4096
	// maxLingering bounds the refused connections lingering at once (their
	// descriptors count against the reserve, not the cap).
	maxLingering = 64
	// acceptWarnEvery bounds the accept_failed warnings to one per interval;
	// the others are counted in the next line.
	acceptWarnEvery = time.Second
)

// capListener counts the gateway's open TCP connections and holds them
// under Config.MaxConns: at the cap it closes an idle keep-alive connection
// to make room, or answers the newcomer a canned 503 and closes it. It also
// makes running out of descriptors loud (a warning, a metric) and frees one
// by closing an idle keep-alive connection.
type capListener struct {
	net.Listener
	g    *Gateway
	max  int
	open atomic.Int64

	idleMu sync.Mutex
	idle   map[*countedConn]struct{} // HTTP keep-alive connections between requests

	lingering  chan struct{} // semaphore of refused connections being drained
	warnMu     sync.Mutex
	lastWarn   time.Time
	suppressed int
}

func newCapListener(ln net.Listener, g *Gateway) *capListener {
	return &capListener{Listener: ln, g: g, max: g.cfg.MaxConns, idle: map[*countedConn]struct{}{},
		lingering: make(chan struct{}, maxLingering)}
}

// Accept returns the next connection under the cap. Errors are the
// listener's; http.Server retries the temporary ones (EMFILE included) with
// a backoff.
func (l *capListener) Accept() (net.Conn, error) {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
				l.g.metrics.DescriptorsExhausted.Add(1)
				l.warnAccept(err)
				l.evictIdle()
			}
			return nil, err
		}
		if l.max > 0 && int(l.open.Load()) >= l.max && !l.evictIdle() {
			l.g.metrics.ConnsRefused.Add(1)
			l.refuse(nc)
			continue
		}
		l.open.Add(1)
		l.g.metrics.TCPConns.Store(l.open.Load())
		return &countedConn{Conn: nc, l: l}, nil
	}
}

// connState is http.Server.ConnState: it tracks the idle keep-alive
// connections, the ones that can be closed without losing a request.
func (l *capListener) connState(nc net.Conn, state http.ConnState) {
	c, ok := nc.(*countedConn)
	if !ok {
		return
	}
	l.idleMu.Lock()
	if state == http.StateIdle {
		l.idle[c] = struct{}{}
	} else {
		delete(l.idle, c)
	}
	l.idleMu.Unlock()
}

// evictIdle closes one idle keep-alive connection, if there is one.
func (l *capListener) evictIdle() bool {
	l.idleMu.Lock()
	var victim *countedConn
	for c := range l.idle {
		victim = c
		delete(l.idle, c)
		break
	}
	l.idleMu.Unlock()
	if victim == nil {
		return false
	}
	l.g.metrics.IdleEvicted.Add(1)
	victim.Close()
	return true
}

// refuse answers a connection over the cap with a canned 503 and closes it
// (at most maxLingering at once; beyond that it is closed at once). The
// answer waits for the request's head, read within refusalLinger: an HTTP
// client that gets an answer before it has sent its request takes it for
// an unsolicited response on an idle connection and fails the request
// without reading it.
func (l *capListener) refuse(nc net.Conn) {
	select {
	case l.lingering <- struct{}{}:
	default:
		nc.Close()
		return
	}
	go func() {
		defer func() { <-l.lingering }()
		defer nc.Close()
		nc.SetDeadline(time.Now().Add(refusalLinger))
		var head [maxRefusedHead]byte
		n := 0
		for n < len(head) && !bytes.Contains(head[:n], []byte("\r\n\r\n")) {
			k, err := nc.Read(head[n:])
			n += k
			if err != nil {
				break
			}
		}
		if _, err := nc.Write(l.g.refusedAnswer); err != nil {
			return
		}
		if cw, ok := nc.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
		for {
			if _, err := nc.Read(head[:]); err != nil {
				return
			}
		}
	}()
}

// warnAccept logs a failed accept at warn level, at most once per
// acceptWarnEvery, with the number of failures it stands for.
func (l *capListener) warnAccept(err error) {
	l.warnMu.Lock()
	defer l.warnMu.Unlock()
	l.suppressed++
	if time.Since(l.lastWarn) < acceptWarnEvery {
		return
	}
	l.g.log.Warn(logline.AcceptFailed, "err", err.Error(), logline.KeyCount, l.suppressed,
		"open", l.open.Load(), "max_conns", l.max)
	l.lastWarn, l.suppressed = time.Now(), 0
}

// countedConn is a connection counted by its listener until its first Close.
type countedConn struct {
	net.Conn
	l      *capListener
	closed atomic.Bool
}

func (c *countedConn) Close() error {
	if c.closed.CompareAndSwap(false, true) {
		c.l.idleMu.Lock()
		delete(c.l.idle, c)
		c.l.idleMu.Unlock()
		c.l.g.metrics.TCPConns.Store(c.l.open.Add(-1))
	}
	return c.Conn.Close()
}

// CloseWrite lets http.Server half-close before closing, as it does on a
// bare *net.TCPConn.
func (c *countedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
