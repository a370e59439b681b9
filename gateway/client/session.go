package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"stormsim/gateway/protocol"
)

// Bounds of one connect's sync, per conversation: pages, in case a gateway
// keeps announcing a head it never delivers, and retries after error frames.
const (
	maxSyncPages   = 10_000
	maxSyncRetries = 3
)

// frame is any server frame: its type, plus the fields of the ones the
// client reads after the hello.
type frame struct {
	T       string           `json:"t"`
	Conv    string           `json:"conv"`
	Events  []protocol.Event `json:"events"`
	Head    int64            `json:"head"`
	Reason  string           `json:"reason"`
	Message string           `json:"message"`
	// ReconnectAfterMs is a goaway's hint (protocol.Goaway).
	ReconnectAfterMs *int64 `json:"reconnect_after_ms"`
}

// connState is what the client learned on one connection before it ended.
type connState struct {
	goaway  bool
	hint    *time.Duration // the goaway's reconnect_after_ms; nil: none
	lastErr string         // message of the gateway's last error frame
}

// next is how the round after a connection begins: its kind and the
// goaway's hint.
type next struct {
	kind RoundKind
	hint *time.Duration
}

// maxHint bounds a gateway's reconnect hint: a day, as the simulator
// bounds one (models.MaxPaceDuration); a larger or negative one is a
// gateway's mistake, and the client ignores it and uses its own wait.
const maxHint = 24 * time.Hour

// serve syncs, then reads until the connection ends, and returns how the
// next round begins, or the error that ends the client.
func (c *Client) serve(ctx context.Context, s *session) (next, error) {
	defer s.conn.CloseNow()
	var st connState
	var heartbeatLost atomic.Bool
	if c.cfg.PingEvery > 0 {
		pctx, stop := context.WithCancel(ctx)
		defer stop()
		go c.heartbeat(pctx, s.conn, &heartbeatLost)
	}
	err := c.sync(ctx, s, &st)
	if err == nil {
		c.emit(Event{Kind: EventSynced, Round: s.round, RoundKind: s.kind, Gateway: s.gateway,
			Cursors: c.Cursors(), Heads: c.Heads()})
		for err == nil {
			var f frame
			f, err = readFrame(ctx, s.conn)
			if err == nil {
				c.handle(s, f, &st)
			}
		}
	}
	if ctx.Err() != nil {
		s.conn.Close(websocket.StatusNormalClosure, "client stopping")
		return next{}, ctx.Err()
	}
	code := int(websocket.CloseStatus(err))
	reason := st.lastErr
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		reason = ce.Reason
	} else if heartbeatLost.Load() {
		reason = "heartbeat lost"
	} else if err != nil {
		reason = err.Error()
	}
	c.emit(Event{Kind: EventClosed, Round: s.round, RoundKind: s.kind, Gateway: s.gateway, CloseCode: code, CloseReason: reason})
	if code == int(protocol.CloseReplaced) {
		c.emit(Event{Kind: EventReplaced, Round: s.round, RoundKind: s.kind, Gateway: s.gateway, CloseCode: code, CloseReason: reason})
		return next{}, fmt.Errorf("client %s at %s: %w", c.cfg.Device.ID, s.gateway, ErrReplaced)
	}
	if st.goaway {
		return next{kind: RoundDrain, hint: st.hint}, nil
	}
	return next{kind: RoundDrop}, nil
}

// handle applies a frame that arrived outside a sync answer.
func (c *Client) handle(s *session, f frame, st *connState) {
	switch f.T {
	case protocol.TypeGoaway:
		if !st.goaway {
			st.goaway = true
			ev := Event{Kind: EventGoaway, Round: s.round, RoundKind: s.kind, Gateway: s.gateway, CloseReason: f.Reason}
			if h := f.ReconnectAfterMs; h != nil && *h >= 0 && *h <= maxHint.Milliseconds() {
				hint := time.Duration(*h) * time.Millisecond
				st.hint, ev.Hint = &hint, &hint
			}
			c.emit(ev)
		}
	case protocol.TypeError:
		st.lastErr = f.Message
	case protocol.TypeEvents:
		c.absorb(f)
	}
}

// sync brings every conversation up to its head, page by page. An error
// frame in answer ("sync failed, retry") is retried at once, at most
// maxSyncRetries times per conversation; then that conversation stays
// behind and the next one is synced.
func (c *Client) sync(ctx context.Context, s *session, st *connState) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.SyncTimeout)
	defer cancel()
	c.mu.Lock()
	convs := slices.Sorted(maps.Keys(c.cursors))
	c.mu.Unlock()
	for _, conv := range convs {
		failures := 0
		for page := 0; page < maxSyncPages; page++ {
			after := c.Cursors()[conv]
			req, _ := json.Marshal(protocol.Sync{T: protocol.TypeSync, Conv: conv, After: after})
			if err := s.conn.Write(ctx, websocket.MessageText, req); err != nil {
				return err
			}
			f, err := c.awaitAnswer(ctx, s, st, conv)
			if err != nil {
				return err
			}
			if f.T == protocol.TypeError {
				if failures++; failures > maxSyncRetries {
					break
				}
				continue
			}
			if c.absorb(f) <= after || c.Cursors()[conv] >= f.Head {
				break // caught up, or the gateway has nothing more to give
			}
		}
	}
	return nil
}

// awaitAnswer reads until the answer to a sync of conv: its events, or an
// error frame. Other frames are handled as they come.
func (c *Client) awaitAnswer(ctx context.Context, s *session, st *connState, conv string) (frame, error) {
	for {
		f, err := readFrame(ctx, s.conn)
		if err != nil {
			return f, err
		}
		c.handle(s, f, st)
		if f.T == protocol.TypeError || (f.T == protocol.TypeEvents && f.Conv == conv) {
			return f, nil
		}
	}
}

// absorb moves conv's cursor past the events of f and records its head; it
// returns the new cursor.
func (c *Client) absorb(f frame) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	cur := c.cursors[f.Conv]
	for _, e := range f.Events {
		cur = max(cur, e.Seq)
	}
	c.cursors[f.Conv] = cur
	c.heads[f.Conv] = f.Head
	return cur
}

// heartbeat pings until ctx ends and closes conn when a pong is late, which
// ends serve's read with an error.
func (c *Client) heartbeat(ctx context.Context, conn *websocket.Conn, lost *atomic.Bool) {
	for c.cfg.Clock.Sleep(ctx, c.cfg.PingEvery) == nil {
		pctx, cancel := context.WithTimeout(ctx, c.cfg.PingTimeout)
		err := conn.Ping(pctx)
		cancel()
		if err != nil && ctx.Err() == nil {
			lost.Store(true)
			conn.CloseNow()
			return
		}
	}
}

func readFrame(ctx context.Context, conn *websocket.Conn) (frame, error) {
	var f frame
	_, data, err := conn.Read(ctx)
	if err != nil {
		return f, err
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return f, fmt.Errorf("gateway sent a frame that is not JSON: %w", err)
	}
	return f, nil
}
