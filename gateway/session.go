package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/coder/websocket"

	"stormsim/gateway/protocol"
)

const (
	// writeTimeout bounds one server frame write; a client that stops reading
	// long enough to fill its TCP window is dropped.
	writeTimeout = 2 * time.Second
	// closeTimeout bounds the close handshake: a peer that does not answer
	// the close frame within it is dropped (the library would wait 5s+5s).
	closeTimeout = time.Second
	// storeTimeout bounds one store call made for a session.
	storeTimeout = 5 * time.Second
	// syncLimit is the most events one sync answer carries; the client syncs
	// again while its cursor is below head.
	syncLimit = 1000
)

// serveSession runs an upgraded connection: hello, then frames until the
// peer leaves or the gateway asks the connection to close (kick, idle, drain,
// lease loss, bad frame).
func (g *Gateway) serveSession(c *conn, ws *websocket.Conn) {
	g.metrics.Live.Add(1)
	ws.SetReadLimit(protocol.MaxFrameBytes)
	readDone := make(chan error, 1)
	if err := g.writeJSON(ws, protocol.Hello{T: protocol.TypeHello, Gateway: g.cfg.ID, Conn: c.id,
		RouteVersion: c.version.Load()}); err != nil {
		readDone <- err
	} else {
		go func() { readDone <- g.readFrames(c, ws) }()
	}
	var readErr error
	select {
	case <-c.stop:
	case readErr = <-readDone:
		readDone <- readErr
	}
	code, reason, ours := c.termination()
	if ours {
		if code == protocol.CloseGoingAway {
			if err := g.writeJSON(ws, protocol.Goaway{T: protocol.TypeGoaway, Reason: reason}); err == nil {
				g.goawaySent.Add(1)
				g.log.Info("goaway_sent", "device", c.device, "conn", c.id)
			}
		}
		stuck := time.AfterFunc(closeTimeout, c.forceClose)
		ws.Close(code, reason)
		stuck.Stop()
	} else {
		code = websocket.CloseStatus(readErr)
		if errors.Is(readErr, websocket.ErrMessageTooBig) {
			code, reason = protocol.CloseTooBig, "frame too big"
		}
		ws.CloseNow()
	}
	<-readDone
	g.metrics.Live.Add(-1)
	g.endSession(c, code, reason)
}

// endSession unregisters c and releases its route (only if c still holds
// it); a drain waits for the release before releasing what is left.
func (g *Gateway) endSession(c *conn, code websocket.StatusCode, reason string) {
	g.reg.beginRelease(c)
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	err := g.deps.Handshakes.ReleaseRoute(ctx, c.device, c.id)
	cancel()
	g.reg.endRelease()
	args := []any{"device", c.device, "conn", c.id, "code", int(code), "reason", reason}
	if err != nil {
		args = append(args, "release_err", err.Error())
	}
	g.log.Info("closed", args...)
}

// readFrames reads client frames until the connection fails or a frame
// breaks the protocol (then it asks for a 1008 close and returns).
func (g *Gateway) readFrames(c *conn, ws *websocket.Conn) error {
	for {
		typ, data, err := ws.Read(g.ctx)
		if err != nil {
			return err
		}
		c.lastSeen.Store(int64(g.mono()))
		if typ != websocket.MessageText {
			return g.policyClose(c, ws, "text frames only")
		}
		var env struct {
			T string `json:"t"`
		}
		if json.Unmarshal(data, &env) != nil {
			return g.policyClose(c, ws, "frame is not a JSON object")
		}
		switch env.T {
		case protocol.TypeSync:
			var m protocol.Sync
			if json.Unmarshal(data, &m) != nil || m.Conv == "" || m.After < 0 {
				return g.policyClose(c, ws, "sync needs conv (non-empty) and after >= 0")
			}
			if err := g.sync(ws, m); err != nil {
				return err
			}
		default:
			return g.policyClose(c, ws, "unknown message type")
		}
	}
}

// sync answers one Sync; a store error is reported as an error frame and
// the connection stays open.
func (g *Gateway) sync(ws *websocket.Conn, m protocol.Sync) error {
	ctx, cancel := context.WithTimeout(g.ctx, storeTimeout)
	events, head, err := g.deps.Handshakes.EventsAfter(ctx, m.Conv, m.After, syncLimit)
	cancel()
	if err != nil {
		return g.writeJSON(ws, protocol.Error{T: protocol.TypeError, Message: "sync failed, retry"})
	}
	return g.writeJSON(ws, protocol.Events{T: protocol.TypeEvents, Conv: m.Conv, Events: events, Head: head})
}

// policyClose explains the violation in an error frame and asks for 1008.
func (g *Gateway) policyClose(c *conn, ws *websocket.Conn, msg string) error {
	g.writeJSON(ws, protocol.Error{T: protocol.TypeError, Message: msg})
	c.terminate(protocol.ClosePolicy, msg)
	return errors.New(msg)
}

func (g *Gateway) writeJSON(ws *websocket.Conn, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(g.ctx, writeTimeout)
	defer cancel()
	return ws.Write(ctx, websocket.MessageText, b)
}
