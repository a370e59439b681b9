// Package client is stormsim's own reconnecting gateway client: it speaks
// the protocol package's handshake, hello, sync, goaway and close codes, and
// takes every wait from the policies package with exactly the counter-based
// draws the simulator makes, so a real storm replays a simulated one.
//
// A client lives in rounds. A round begins when the client starts or notices
// that its connection is gone; the round's first attempt waits
// policies.InitialWait(seed, index, jitter) (the start round does not wait),
// and after its failed attempt n (1-based, counted from the round's start)
// the client waits Backoff.Next(n, prev, retryAfter, Draw(seed, index, n,
// StreamBackoff)). The outcomes:
//
//	101 + hello       connected: sync each conversation from its cursor
//	429, 503          back off (Retry-After is a floor if the policy honours it)
//	no answer in time back off from sent + the policy's timeout, no Retry-After
//	409               counter behind the gateway's floor: retry at once with
//	                  the next counter value, at most MaxConflicts times in a row
//	401               stop with ErrUnauthorized
//	refused, reset    back off
//	goaway + close    reconnect with the Drain settings
//	close 4001        replaced by a newer connection: stop with ErrReplaced
//	any other close   reconnect with the Drop settings
package client

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"stormsim/gateway/protocol"
	"stormsim/policies"
	"stormsim/policies/rng"
)

// Reasons Run stops; test them with errors.Is.
var (
	ErrReplaced     = errors.New("replaced by a newer connection of the same device (close 4001)")
	ErrUnauthorized = errors.New("gateway refused the credentials (401)")
	ErrGaveUp       = errors.New("backoff policy gave up (max_attempts)")
	ErrConflict     = errors.New("attempt counter still behind the gateway's floor (409) after MaxConflicts retries")
)

// Client is one reconnecting device. Create it with New and drive it with
// Run; its accessors are safe to call from other goroutines meanwhile.
type Client struct {
	cfg Config

	mu       sync.Mutex
	gateways []string
	next     int              // index into gateways of the next attempt
	cursors  map[string]int64 // highest seq received per conversation
	heads    map[string]int64 // head reported by the last sync
}

// New validates cfg and returns a client that has not connected yet.
func New(cfg Config) (*Client, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	cl := &Client{cfg: c, cursors: map[string]int64{}, heads: map[string]int64{}}
	for _, conv := range c.Conversations {
		cl.cursors[conv] = 0
	}
	cl.setGatewaysLocked(c.Gateways)
	return cl, nil
}

// Index returns the client's number in the draws.
func (c *Client) Index() int { return c.cfg.Index }

// Device returns the client's device (with its attempt counter).
func (c *Client) Device() Device { return c.cfg.Device }

// SetGateways replaces the list the default round-robin picks from (as a
// load balancer's pool changes). The next attempt uses
// urls[Index % len(urls)]. Chooser-driven clients ignore the list.
func (c *Client) SetGateways(urls []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setGatewaysLocked(urls)
}

func (c *Client) setGatewaysLocked(urls []string) {
	c.gateways = append([]string(nil), urls...)
	c.next = 0
	if len(urls) > 0 {
		c.next = c.cfg.Index % len(urls)
	}
}

// SetCursor sets the sync cursor of conv (the highest seq already held),
// adding conv to the synced conversations if it is new.
func (c *Client) SetCursor(conv string, seq int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cursors[conv] = seq
}

// Cursors returns a copy of the highest seq received per conversation.
func (c *Client) Cursors() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.cursors)
}

// Heads returns a copy of the head per conversation reported by the last sync.
func (c *Client) Heads() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.heads)
}

// Run connects and keeps the client connected until ctx ends (returning
// ctx.Err()), the connection is replaced (ErrReplaced), the gateway refuses
// the credentials (ErrUnauthorized), the policy gives up (ErrGaveUp), 409s
// persist (ErrConflict) or the attempt counter cannot be persisted.
func (c *Client) Run(ctx context.Context) error {
	err := c.run(ctx)
	c.emit(Event{Kind: EventStopped, Err: err})
	return err
}

func (c *Client) run(ctx context.Context) error {
	kind, previous := RoundStart, ""
	for round := 1; ; round++ {
		s, err := c.connect(ctx, round, kind, previous)
		if err != nil {
			return err
		}
		kind, err = c.serve(ctx, s)
		if err != nil {
			return err
		}
		c.failed(s.gateway)
		previous = s.gateway
	}
}

// handshakeTimeout is the timeout of an attempt in a round with settings rc:
// the policy's (policies.Spec.Timeout) when it has one, otherwise
// Config.HandshakeTimeout.
func (c *Client) handshakeTimeout(rc Reconnect) time.Duration {
	if t := rc.Backoff.Spec.Timeout; t > 0 {
		return t
	}
	return c.cfg.HandshakeTimeout
}

// reconnectFor returns the settings of a round of kind k.
func (c *Client) reconnectFor(k RoundKind) Reconnect {
	switch {
	case k == RoundDrain:
		return c.cfg.Drain
	case k == RoundStart && c.cfg.Start.Backoff != nil:
		return c.cfg.Start
	}
	return c.cfg.Drop
}

// connect runs one round: the initial wait, then attempts until one is
// accepted or the round ends the client.
func (c *Client) connect(ctx context.Context, round int, kind RoundKind, previous string) (*session, error) {
	rc := c.reconnectFor(kind)
	seed, index := c.cfg.Seed, uint64(c.cfg.Index)
	var wait time.Duration
	if kind != RoundStart {
		wait = policies.InitialWait(seed, index, rc.InitialJitter)
	}
	c.emit(Event{Kind: EventRound, Round: round, RoundKind: kind, Gateway: previous, Wait: wait})
	if err := c.cfg.Clock.Sleep(ctx, wait); err != nil {
		return nil, err
	}
	var prev time.Duration // the policy's previous raw delay, for decorrelated jitter
	conflicts := 0
	previousFailed := kind != RoundStart
	for n := 1; ; n++ {
		url := c.pick(Pick{Client: c.cfg.Index, Round: round, RoundKind: kind, Attempt: n, Previous: previous, PreviousFailed: previousFailed})
		deviceAttempt, err := c.cfg.Device.Attempts.Next()
		if err != nil {
			return nil, fmt.Errorf("client %s: persist attempt counter: %w", c.cfg.Device.ID, err)
		}
		s, h := c.handshake(ctx, url, deviceAttempt, c.handshakeTimeout(rc))
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		ev := Event{Kind: EventAttempt, Time: h.answered, Round: round, RoundKind: kind, Attempt: n,
			DeviceAttempt: deviceAttempt, Gateway: url, Sent: h.sent, Answered: h.answered,
			Status: h.status, RetryAfter: h.retryAfter, TimedOut: h.timedOut, Err: h.err}
		previous = url
		switch {
		case s != nil:
			c.emit(ev)
			s.round, s.kind, s.attempt = round, kind, n
			c.emit(Event{Kind: EventConnected, Time: h.answered, Round: round, RoundKind: kind, Attempt: n,
				DeviceAttempt: deviceAttempt, Gateway: url, Hello: s.hello})
			return s, nil
		case h.status == protocol.StatusConflict:
			c.emit(ev)
			conflicts++
			if conflicts >= c.cfg.MaxConflicts {
				return nil, fmt.Errorf("client %s: %w (last attempt %d)", c.cfg.Device.ID, ErrConflict, deviceAttempt)
			}
			previousFailed = false
			continue
		case h.status == protocol.StatusUnauthorized:
			c.emit(ev)
			return nil, fmt.Errorf("client %s at %s: %w", c.cfg.Device.ID, url, ErrUnauthorized)
		}
		conflicts = 0
		wait, raw, giveUp := rc.Backoff.Next(n, prev, h.retryAfter, rng.Draw(seed, index, uint64(n), rng.StreamBackoff))
		prev = raw
		ev.Wait = wait
		c.emit(ev)
		if giveUp {
			return nil, fmt.Errorf("client %s after %d attempts: %w", c.cfg.Device.ID, n, ErrGaveUp)
		}
		c.failed(url)
		previousFailed = true
		sleep := wait
		if h.timedOut {
			// The backoff starts when the attempt was abandoned,
			// sent + timeout, however late the timer woke the client.
			sleep -= max(0, c.cfg.Clock.Now().Sub(h.answered))
		}
		if err := c.cfg.Clock.Sleep(ctx, sleep); err != nil {
			return nil, err
		}
	}
}

// pick returns the gateway of the next attempt.
func (c *Client) pick(p Pick) string {
	c.mu.Lock()
	gateways, next := c.gateways, c.next
	c.mu.Unlock()
	if c.cfg.Choose != nil {
		p.Gateways = gateways // SetGateways replaces the slice, never edits it
		return c.cfg.Choose(p)
	}
	if len(gateways) == 0 {
		return ""
	}
	return gateways[next]
}

// failed moves the round-robin past url if url is still the next gateway
// (a SetGateways since the attempt already chose afresh).
func (c *Client) failed(url string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.gateways) > 0 && c.gateways[c.next] == url {
		c.next = (c.next + 1) % len(c.gateways)
	}
}

func (c *Client) emit(ev Event) {
	if c.cfg.Observer == nil {
		return
	}
	if ev.Time.IsZero() {
		ev.Time = c.cfg.Clock.Now()
	}
	ev.Client = c.cfg.Index
	ev.Device = c.cfg.Device.ID
	c.cfg.Observer(ev)
}
