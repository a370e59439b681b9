package client

import (
	"time"

	"stormsim/gateway/protocol"
)

// EventKind names what an Event reports.
type EventKind string

// Event kinds, in the order a client's life produces them.
const (
	// EventRound: a round of attempts begins. Wait is the wait before its
	// first attempt (policies.InitialWait; 0 for the start round).
	EventRound EventKind = "round"
	// EventAttempt: one handshake was answered or failed. Wait is the wait
	// the client chose before its next attempt (0 after 101, 401 and 409).
	EventAttempt EventKind = "attempt"
	// EventConnected: hello received; Hello holds it.
	EventConnected EventKind = "connected"
	// EventSynced: every configured conversation synced; Cursors and Heads.
	EventSynced EventKind = "synced"
	// EventGoaway: the gateway announced it is leaving; Hint is the delay
	// it asked for, if any.
	EventGoaway EventKind = "goaway"
	// EventClosed: the connection ended; CloseCode is -1 when no close frame
	// arrived (reset, EOF, heartbeat lost).
	EventClosed EventKind = "closed"
	// EventReplaced: closed with 4001; the client stops and does not reconnect.
	EventReplaced EventKind = "replaced"
	// EventStopped: Run returns; Err says why (nil-free: context errors too).
	EventStopped EventKind = "stopped"
)

// RoundKind says why a round of attempts began; it selects the Reconnect
// settings the round uses.
type RoundKind string

// Round kinds.
const (
	RoundStart RoundKind = "start" // first connect: no initial wait, Drop's backoff
	RoundDrop  RoundKind = "drop"  // connection lost without a goaway: Drop
	RoundDrain RoundKind = "drain" // goaway seen before the connection ended: Drain
)

// Event is one attempt or lifecycle step of a client, passed to
// Config.Observer from the client's own goroutine.
type Event struct {
	Kind   EventKind
	Time   time.Time // when the event happened; equals Answered for attempts
	Client int       // Config.Index
	Device string    // Device.ID

	Round     int       // 1-based round number of this client (start round = 1)
	RoundKind RoundKind // kind of the current round
	Attempt   int       // 1-based attempt number within the round (attempt, connected)

	DeviceAttempt int64         // the persisted counter value sent as ?attempt=
	Gateway       string        // URL dialled (attempt) or connected to
	Sent          time.Time     // handshake request about to be sent
	Answered      time.Time     // handshake answered, failed, or hello read
	Status        int           // 101, 429, 503, 409, 401, other HTTP; 0 when no HTTP answer
	RetryAfter    time.Duration // parsed Retry-After (0 if none or unparseable)
	// TimedOut: no answer (for a 101, no hello) reached the client within
	// the handshake timeout; Answered is then Sent + the timeout, Status 0.
	TimedOut bool
	Wait     time.Duration // see EventRound and EventAttempt
	Err      error         // transport error, bad Retry-After, or why Run stopped

	// Hint is a goaway's reconnect_after_ms (EventGoaway), nil when it
	// carried none (or one out of range, which the client ignores).
	Hint *time.Duration

	CloseCode   int    // EventClosed: WebSocket close code, -1 without a close frame
	CloseReason string // EventClosed: close reason or the error frame's message

	Hello   protocol.Hello   // EventConnected
	Cursors map[string]int64 // EventSynced: highest seq received per conversation
	Heads   map[string]int64 // EventSynced: head reported per conversation
}
