package client

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"stormsim/policies"
)

// Reconnect is how a client gets back in after one kind of drop.
type Reconnect struct {
	// Backoff gives the wait after each failed attempt of the round:
	// Backoff.Next(n, prev, retryAfter, rng.Draw(seed, index, n,
	// rng.StreamBackoff)) after attempt n.
	Backoff *policies.Backoff
	// InitialJitter bounds the wait before the round's first attempt:
	// policies.InitialWait(seed, index, InitialJitter), uniform on
	// [0, InitialJitter); 0 attempts at once.
	InitialJitter time.Duration
}

// Pick describes the attempt a Chooser picks a gateway for.
type Pick struct {
	Client    int       // Config.Index
	Round     int       // 1-based round number
	RoundKind RoundKind // why the round began
	Attempt   int       // 1-based attempt number within the round
	Gateways  []string  // the client's current list (do not modify)
	// Previous is the gateway of the previous attempt, or of the lost
	// connection for a round's first attempt; "" before the first attempt.
	Previous string
	// PreviousFailed reports whether Previous refused, failed or dropped
	// the client (false after a 409, which is not the gateway's fault).
	PreviousFailed bool
}

// Chooser picks the gateway URL for one attempt.
type Chooser func(Pick) string

// Defaults of Config.
const (
	// DefaultHandshakeTimeout bounds a handshake, hello included, when the
	// round's policy has no timeout (policies.Spec.Timeout 0): a safety net
	// the model does not have.
	DefaultHandshakeTimeout = 10 * time.Second
	DefaultSyncTimeout      = 10 * time.Second // all conversations of one connect
	DefaultMaxConflicts     = 32               // consecutive 409s before giving up
	// MaxInboundFrameBytes is the largest frame the client reads: an events
	// page, far larger than anything the client sends.
	MaxInboundFrameBytes = 1 << 20
)

// Config configures one client. Zero values take the defaults above.
type Config struct {
	Device Device
	// Index is the client's number in the draws (0..N-1), as the
	// simulator numbers clients.
	Index int
	// Seed is the draws' seed, the scenario's seed.
	Seed uint64
	// Gateways are the URLs to dial (ws://host:port, with or without
	// protocol.Path). Without Choose the client starts at
	// Gateways[Index % len] and moves to the next one after a failure.
	Gateways []string
	// Choose, if set, picks every attempt's gateway instead.
	Choose Chooser
	// Drop is used for the start round and after a connection is lost;
	// Drop.Backoff is required.
	Drop Reconnect
	// Start, if Start.Backoff is set, is used for the start round instead
	// of Drop: a harness that sets up a storm connects its clients with a
	// patience the storm's own policy may not have.
	Start Reconnect
	// Drain is used after a goaway; a nil Drain.Backoff means Drop's.
	Drain Reconnect
	// Conversations are synced from their cursors after every connect.
	Conversations []string
	// HandshakeTimeout bounds one handshake, hello included, when the
	// round's policy sets no timeout; default DefaultHandshakeTimeout. A
	// policy's Timeout always wins (see Client.Run).
	HandshakeTimeout time.Duration
	// SyncTimeout bounds the sync of all conversations after a connect.
	SyncTimeout time.Duration
	// PingEvery, if > 0, makes the client ping the gateway this often and
	// drop the connection when a pong takes longer than PingTimeout
	// (default PingEvery): the only way to notice a hung gateway. The
	// interval is slept on Clock, so use it with a real clock.
	PingEvery, PingTimeout time.Duration
	// MaxConflicts is how many consecutive 409s the client retries (each
	// with the counter one higher) before Run fails with ErrConflict.
	MaxConflicts int
	// HTTPClient dials the handshakes; nil means DefaultHTTPClient.
	HTTPClient *http.Client
	// Clock provides time and sleeps; nil means SystemClock.
	Clock Clock
	// Observer, if set, receives every Event synchronously; keep it fast.
	Observer func(Event)
}

// DefaultHTTPClient dials every handshake on a fresh TCP connection, as a
// reconnecting device does, and never through a proxy. The handshake's
// timeout bounds the dial too.
var DefaultHTTPClient = &http.Client{Transport: &http.Transport{
	DialContext:       (&net.Dialer{}).DialContext,
	DisableKeepAlives: true,
	ForceAttemptHTTP2: false,
}}

func (c *Config) withDefaults() (Config, error) {
	cfg := *c
	switch {
	case cfg.Device.ID == "":
		return cfg, errors.New("client: device id is empty")
	case cfg.Index < 0:
		return cfg, fmt.Errorf("client: index must be >= 0 (got %d)", cfg.Index)
	case len(cfg.Gateways) == 0 && cfg.Choose == nil:
		return cfg, errors.New("client: no gateways and no chooser")
	case cfg.Drop.Backoff == nil:
		return cfg, errors.New("client: Drop.Backoff is required")
	case cfg.Drop.InitialJitter < 0 || cfg.Drain.InitialJitter < 0:
		return cfg, fmt.Errorf("client: initial jitter must be >= 0 (got %v, %v)", cfg.Drop.InitialJitter, cfg.Drain.InitialJitter)
	case cfg.HandshakeTimeout < 0 || cfg.SyncTimeout < 0 || cfg.PingEvery < 0 || cfg.PingTimeout < 0 || cfg.MaxConflicts < 0:
		return cfg, errors.New("client: timeouts, ping interval and max conflicts must be >= 0")
	}
	if cfg.Device.Attempts == nil {
		cfg.Device.Attempts = &MemoryCounter{}
	}
	if cfg.Drain.Backoff == nil {
		cfg.Drain.Backoff = cfg.Drop.Backoff
	}
	if cfg.HandshakeTimeout == 0 {
		cfg.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if cfg.SyncTimeout == 0 {
		cfg.SyncTimeout = DefaultSyncTimeout
	}
	if cfg.PingTimeout == 0 {
		cfg.PingTimeout = cfg.PingEvery
	}
	if cfg.MaxConflicts == 0 {
		cfg.MaxConflicts = DefaultMaxConflicts
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = DefaultHTTPClient
	}
	if cfg.Clock == nil {
		cfg.Clock = SystemClock
	}
	cfg.Gateways = append([]string(nil), cfg.Gateways...)
	cfg.Conversations = append([]string(nil), cfg.Conversations...)
	return cfg, nil
}
