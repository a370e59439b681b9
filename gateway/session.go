package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"stormsim/gateway/logline"
	"stormsim/gateway/protocol"
	"stormsim/gateway/store"
	"stormsim/models"
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
	// syncPage bounds one sync answer; the client syncs again while its
	// cursor is below head. With syncSlots it bounds the memory that sync
	// answers can hold at once to about syncSlots * syncPage.Bytes.
	syncMaxEvents = 1000
	syncMaxBytes  = 256 << 10
	// syncSlots is how many sync answers the gateway prepares and writes at
	// once; a sync beyond waits for a slot.
	syncSlots = 64
	// maxConvBytes bounds a sync's conversation id.
	maxConvBytes = 256
)

var syncPage = store.Page{Events: syncMaxEvents, Bytes: syncMaxBytes}

// unmaskedFrame is how coder/websocket's error for a client frame without a
// mask reads. The library closes every other framing error with 1002 itself
// but drops this one silently; TestUnmaskedFrameIsAProtocolError notices if
// its wording changes.
const unmaskedFrame = "received unmasked frame from client"

// serveSession runs an upgraded connection: hello, then frames until the
// peer leaves or the gateway asks the connection to close (kick, idle, drain,
// lease loss, bad frame). This goroutine also pings the client and closes
// it when idle; a second one reads its frames.
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
	readErr := g.heartbeat(c, ws, readDone)
	code, reason, ours := c.termination()
	if ours {
		if code == protocol.CloseGoingAway {
			if err := g.writeJSON(ws, protocol.Goaway{T: protocol.TypeGoaway, Reason: reason, ReconnectAfterMs: g.reconnectAfter(c)}); err == nil {
				g.goawaySent.Add(1)
				g.log.Info(logline.GoawaySent, logline.KeyDevice, c.device, logline.KeyConn, c.id)
			} else {
				g.goawayFailed.Add(1)
				g.log.Info(logline.GoawayFailed, logline.KeyDevice, c.device, logline.KeyConn, c.id, "err", err.Error())
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

// heartbeat waits for the session to end (a termination request or the
// reader's end, whose error it returns) while it pings the client every
// Config.Ping and closes it (4002) after Config.Idle without a frame or pong.
// After a stall of this process the client gets a fresh idle window: its
// silence was the gateway's fault.
func (g *Gateway) heartbeat(c *conn, ws *websocket.Conn, readDone chan error) error {
	every := g.cfg.Ping
	if every == 0 {
		every = g.cfg.Idle / 4
	}
	var tick <-chan time.Time
	if every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
	}
	last := g.mono()
	for {
		select {
		case <-c.stop:
			return nil
		case err := <-readDone:
			readDone <- err
			return err
		case <-tick:
		}
		now := g.mono()
		if now-last > 2*every {
			c.lastSeen.Store(int64(now))
		}
		last = now
		if g.cfg.Idle > 0 && now-time.Duration(c.lastSeen.Load()) > g.cfg.Idle {
			if c.terminate(protocol.CloseIdle, "idle") {
				g.log.Info(logline.IdleClosed, logline.KeyDevice, c.device, logline.KeyConn, c.id)
			}
			return nil
		}
		if g.cfg.Ping > 0 {
			// The pong updates lastSeen (OnPongReceived); Ping only waits for
			// it, at most one interval, and a late pong still counts.
			pctx, cancel := context.WithTimeout(g.ctx, g.cfg.Ping)
			ws.Ping(pctx)
			cancel()
		}
	}
}

// endSession unregisters c and releases its route (only if c still holds
// it); a drain waits for the release before releasing what is left. A
// failed release leaves an orphan route, which the lease loop deletes.
func (g *Gateway) endSession(c *conn, code websocket.StatusCode, reason string) {
	g.reg.beginRelease(c)
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	err := g.deps.Handshakes.ReleaseRoute(ctx, c.device, c.id)
	cancel()
	if err != nil {
		g.orphansSuspected.Store(true)
	}
	g.reg.endRelease(c)
	args := []any{logline.KeyDevice, c.device, logline.KeyConn, c.id, logline.KeyCode, int(code), logline.KeyReason, reason}
	if err != nil {
		args = append(args, "release_err", err.Error())
	}
	g.log.Info(logline.Closed, args...)
}

// readFrames reads client frames until the connection fails or a frame
// breaks the protocol (then it asks for a 1008 close and returns).
func (g *Gateway) readFrames(c *conn, ws *websocket.Conn) error {
	syncs := models.NewTokenBucket(g.cfg.SyncRate, g.cfg.SyncBurst)
	for {
		typ, data, err := ws.Read(g.ctx)
		if err != nil {
			if strings.Contains(err.Error(), unmaskedFrame) {
				c.terminate(protocol.CloseProtocolError, "client frames must be masked")
			}
			return err
		}
		c.lastSeen.Store(int64(g.mono()))
		if typ != websocket.MessageText {
			return g.policyClose(c, ws, "text frames only")
		}
		if !utf8.Valid(data) {
			c.terminate(protocol.CloseNotUTF8, "text frames must be UTF-8")
			return errors.New("text frame not UTF-8")
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
			if json.Unmarshal(data, &m) != nil || m.Conv == "" || len(m.Conv) > maxConvBytes ||
				strings.ContainsRune(m.Conv, 0) || m.After < 0 {
				return g.policyClose(c, ws, "sync needs conv (1-256 bytes, no NUL) and after >= 0")
			}
			if err := g.awaitSyncToken(c, syncs); err != nil {
				return err
			}
			if err := g.sync(c, ws, m); err != nil {
				return err
			}
		default:
			return g.policyClose(c, ws, "unknown message type")
		}
	}
}

// awaitSyncToken waits until the connection's sync bucket has a token: a
// client that syncs faster than Config.SyncRate is served at that rate.
func (g *Gateway) awaitSyncToken(c *conn, syncs *models.TokenBucket) error {
	if syncs.Admit(g.mono()) {
		return nil
	}
	g.metrics.SyncsThrottled.Add(1)
	step := time.Duration(float64(time.Second) / g.cfg.SyncRate)
	for {
		select {
		case <-c.stop:
			return errors.New("session ending")
		case <-g.ctx.Done():
			return g.ctx.Err()
		case <-time.After(step):
		}
		if syncs.Admit(g.mono()) {
			return nil
		}
	}
}

// sync answers one Sync with a page of events; a store error or a
// conversation the device does not belong to is answered with an error frame
// and the connection stays open.
func (g *Gateway) sync(c *conn, ws *websocket.Conn, m protocol.Sync) error {
	select {
	case g.syncSlots <- struct{}{}:
	case <-c.stop:
		return errors.New("session ending")
	case <-g.ctx.Done():
		return g.ctx.Err()
	}
	defer func() { <-g.syncSlots }()
	ctx, cancel := context.WithTimeout(g.ctx, storeTimeout)
	events, head, err := g.deps.Handshakes.EventsAfter(ctx, c.device, m.Conv, m.After, syncPage)
	cancel()
	switch {
	case errors.Is(err, store.ErrNotMember):
		return g.writeJSON(ws, protocol.Error{T: protocol.TypeError, Message: "not a member of this conversation"})
	case err != nil:
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
