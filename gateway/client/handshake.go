package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/coder/websocket"

	"stormsim/gateway/protocol"
)

// handshakeResult is what one attempt saw, whether or not it connected.
type handshakeResult struct {
	sent, answered time.Time
	status         int // HTTP status; 0 without an HTTP answer (or after a timeout)
	retryAfter     time.Duration
	err            error
	// timedOut: no answer (for a 101, no hello) reached the client by
	// sent + timeout; answered is then sent + timeout.
	timedOut bool
}

// ErrTimedOut is the error of an attempt whose answer did not reach the
// client within the handshake timeout.
var ErrTimedOut = errors.New("handshake timed out")

// session is an accepted connection.
type session struct {
	conn    *websocket.Conn
	gateway string
	hello   protocol.Hello
	round   int
	kind    RoundKind
	attempt int
}

// handshakeURL adds protocol.Path (when base has no path) and the device's
// claim to base.
func handshakeURL(base string, attempt, epoch int64) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = protocol.Path
	}
	q := u.Query()
	q.Set(protocol.QueryAttempt, strconv.FormatInt(attempt, 10))
	q.Set(protocol.QueryInstallEpoch, strconv.FormatInt(epoch, 10))
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// handshake dials gateway and, on 101, reads the hello, giving up after
// timeout (0: none) with its connection closed. It returns a session only
// when the hello arrived in time; the result describes the attempt either
// way.
func (c *Client) handshake(ctx context.Context, gateway string, deviceAttempt int64, timeout time.Duration) (*session, handshakeResult) {
	var h handshakeResult
	h.sent = c.cfg.Clock.Now()
	u, err := handshakeURL(gateway, deviceAttempt, c.cfg.Device.InstallEpoch)
	if err != nil {
		h.answered, h.err = h.sent, fmt.Errorf("gateway URL %q: %w", gateway, err)
		return nil, h
	}
	hctx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		hctx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	// timedOut reports whether the attempt ended because its time ran out
	// (not because the client is stopping), and then records it so.
	timedOut := func() bool {
		if timeout == 0 || ctx.Err() != nil || !errors.Is(hctx.Err(), context.DeadlineExceeded) {
			return false
		}
		h.timedOut, h.status, h.retryAfter = true, 0, 0
		h.answered, h.err = h.sent.Add(timeout), fmt.Errorf("%w after %v", ErrTimedOut, timeout)
		return true
	}
	header := http.Header{}
	header.Set(protocol.HeaderAuthorization, "Bearer "+c.cfg.Device.ID+":"+c.cfg.Device.Token)
	conn, resp, err := websocket.Dial(hctx, u, &websocket.DialOptions{HTTPClient: c.cfg.HTTPClient, HTTPHeader: header})
	h.answered = c.cfg.Clock.Now()
	if resp != nil {
		h.status = resp.StatusCode
	}
	if err != nil {
		h.err = err
		switch {
		case resp != nil && resp.StatusCode != http.StatusSwitchingProtocols:
			// A refusal is the expected outcome, not a transport error:
			// report only what is wrong with it.
			h.err = nil
			h.retryAfter, h.err = ParseRetryAfter(resp.Header.Get(protocol.HeaderRetryAfter), h.answered)
		case resp == nil:
			timedOut()
		}
		return nil, h
	}
	conn.SetReadLimit(MaxInboundFrameBytes)
	hello, err := readHello(hctx, conn)
	h.answered = c.cfg.Clock.Now()
	if err != nil {
		conn.CloseNow()
		if !timedOut() {
			h.err = fmt.Errorf("hello: %w", err)
		}
		return nil, h
	}
	return &session{conn: conn, gateway: gateway, hello: hello}, h
}

// readHello reads the first frame, which must be a hello.
func readHello(ctx context.Context, conn *websocket.Conn) (protocol.Hello, error) {
	var hello protocol.Hello
	_, data, err := conn.Read(ctx)
	if err != nil {
		return hello, err
	}
	if err := json.Unmarshal(data, &hello); err != nil {
		return hello, err
	}
	if hello.T != protocol.TypeHello {
		return hello, errors.New("first frame is not a hello (got type " + strconv.Quote(hello.T) + ")")
	}
	return hello, nil
}
