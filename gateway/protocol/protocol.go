// Package protocol is the wire contract between the gateway and its clients:
// the handshake's path, query parameters and statuses, the JSON messages and
// the close codes. Both sides import it so they cannot drift apart.
package protocol

import "github.com/coder/websocket"

// Handshake request.
const (
	Path              = "/ws"           // WebSocket endpoint
	QueryAttempt      = "attempt"       // device's persisted attempt counter, incremented before every handshake
	QueryInstallEpoch = "install_epoch" // grows when the app is reinstalled; default 0
	// Authorization: "Bearer DEVICE:TOKEN"; the scheme is case-insensitive
	// and may be followed by several spaces (RFC 9110 11.4).
	HeaderAuthorization = "Authorization"
	HeaderRetryAfter    = "Retry-After" // seconds, on 429 and 503
	// HeaderGateway names the gateway on answers to authenticated handshakes
	// (101 and 409) only: the id may name the host, which an anonymous
	// client has no business learning.
	HeaderGateway = "X-Gateway-Id"
)

// Ranges of the claim. A device that reaches MaxAttempt reinstalls (install
// epoch + 1, attempt 0), which beats any attempt of the older epoch; a
// device at MaxInstallEpoch needs its floor reset by an operator
// (`gateway reset-floor`). Values outside [0, max] are refused with 400, so
// nobody can push a device's floor where it cannot climb back.
const (
	MaxAttempt      = 1<<31 - 1
	MaxInstallEpoch = 1<<31 - 1
)

// Credential syntax: a device id is 1-MaxDeviceIDBytes visible ASCII
// characters (0x21-0x7e) other than ':'; a token is 1-MaxTokenBytes visible
// ASCII characters. Anything else is refused with 401 before any query.
const (
	MaxDeviceIDBytes = 128
	MaxTokenBytes    = 256
)

// Handshake outcomes.
const (
	StatusSwitchingProtocols = 101 // accepted: a hello follows
	StatusTooManyRequests    = 429 // no admission token (or the source's pre-limit): back off, wait at least Retry-After
	StatusServiceUnavailable = 503 // draining, lease lost, claims queue full or store error: back off, maybe elsewhere
	StatusUnauthorized       = 401 // malformed credentials, unknown device or wrong token: do not retry
	StatusConflict           = 409 // claim not newer than the recorded one: increment attempt and retry
	StatusBadRequest         = 400 // malformed attempt or install_epoch, or a WebSocket version/key problem
	StatusForbidden          = 403 // Origin header naming another host
	StatusMethodNotAllowed   = 405 // not GET
	StatusUpgradeRequired    = 426 // no "Connection: Upgrade" / "Upgrade: websocket", or HTTP/1.0
)

// Close codes sent by the gateway.
const (
	// CloseGoingAway (1001, RFC 6455 7.4.1) follows a goaway during drain:
	// reconnect promptly, to another gateway.
	CloseGoingAway = websocket.StatusGoingAway
	// CloseReplaced (4001) means a newer connection of the same device took
	// over. Generic clients treat 4xxx as "reconnect"; this one means do NOT
	// reconnect, or two sessions of one device would evict each other forever.
	CloseReplaced websocket.StatusCode = 4001
	// CloseIdle (4002) closes a connection that missed its heartbeats.
	CloseIdle websocket.StatusCode = 4002
	// CloseLeaseLost (4003) closes connections whose routes may have been
	// swept while the gateway's lease lapsed: reconnect.
	CloseLeaseLost websocket.StatusCode = 4003
	// ClosePolicy (1008) answers a malformed or unknown frame.
	ClosePolicy = websocket.StatusPolicyViolation
	// CloseTooBig (1009) answers a frame over MaxFrameBytes.
	CloseTooBig = websocket.StatusMessageTooBig
	// CloseNotUTF8 (1007) answers a text frame that is not UTF-8 (RFC 6455
	// 8.1).
	CloseNotUTF8 = websocket.StatusInvalidFramePayloadData
	// CloseProtocolError (1002) answers a frame that breaks RFC 6455's
	// framing, such as a client frame without a mask.
	CloseProtocolError = websocket.StatusProtocolError
)

// MaxFrameBytes is the largest client frame the gateway reads.
const MaxFrameBytes = 4096

// Message types ("t" field).
const (
	TypeHello  = "hello"  // server -> client, first frame after 101
	TypeGoaway = "goaway" // server -> client before close 1001
	TypeSync   = "sync"   // client -> server: events of Conv after After
	TypeEvents = "events" // server -> client: answer to sync
	TypeError  = "error"  // server -> client before a policy close
)

// Hello is the first frame on an accepted connection.
type Hello struct {
	T            string `json:"t"`
	Gateway      string `json:"gateway"`
	Conn         string `json:"conn"`
	RouteVersion int64  `json:"route_version"`
}

// Goaway announces that the gateway is leaving.
type Goaway struct {
	T      string `json:"t"`
	Reason string `json:"reason"` // "drain"
	// ReconnectAfterMs, when present, is how long the client waits, in
	// milliseconds from the goaway, before its first reconnect attempt
	// (instead of its own initial jitter; backoff after a failed attempt
	// is its policy's). Absent: reconnect as the client's policy says.
	ReconnectAfterMs *int64 `json:"reconnect_after_ms,omitempty"`
}

// Sync asks for the events of conversation Conv with seq > After.
type Sync struct {
	T     string `json:"t"`
	Conv  string `json:"conv"`
	After int64  `json:"after"`
}

// Event is one entry of a conversation's log.
type Event struct {
	Seq  int64  `json:"seq"`
	Body string `json:"body"`
}

// Events answers a Sync; Head is the conversation's highest seq.
type Events struct {
	T      string  `json:"t"`
	Conv   string  `json:"conv"`
	Events []Event `json:"events"`
	Head   int64   `json:"head"`
}

// Error explains a policy close.
type Error struct {
	T       string `json:"t"`
	Message string `json:"message"`
}
