// Package logline is the contract of the gateway's log: the message (slog's
// "msg") of every JSON line the gateway writes and the keys those lines
// carry. The gateway logs with these constants, its tests read them, and
// stormsim calibrate rebuilds a storm's timeline from them, as
// gateway/protocol is the contract of the handshake; a reader treats a
// missing key as an error.
package logline

// Messages of the lifecycle lines: a process's life, its lease and sweeps,
// its LISTEN connection and its drain. The keys each line carries, among
// others, are named beside it.
const (
	Start               = "start"                 // the process has its config
	Listening           = "listening"             // KeyAddr: the address it serves on
	SweepReclaimed      = "sweep_reclaimed"       // KeyDeadGateway, KeyCount: routes of an expired gateway deleted
	SweepPaused         = "sweep_paused"          // renews stalled: no sweeping for one lease
	StaleRoutesReleased = "stale_routes_released" // KeyCount
	LeaseLost           = "lease_lost"            // its own lease lapsed: answering 503
	LeaseRegained       = "lease_regained"        // renewed again
	LeaseRenewFailed    = "lease_renew_failed"    // one renew failed
	LeaseExpireFailed   = "lease_expire_failed"   // the drain could not expire its lease
	ListenLost          = "listen_lost"           // the kick channel's connection failed
	ListenReconnected   = "listen_reconnected"    // and is back
	DrainStart          = "drain_start"           // SIGTERM received
	DrainDone           = "drain_done"            // KeyGoaway, KeyFailedGoaways, KeyLeftoverRoutes, KeyCutGoaways, KeyLastGoawayMs
	Exit                = "exit"                  // the process ends
)

// Messages of the per-handshake lines.
const (
	// Admitted is written once the route is claimed and the connection
	// upgraded: KeyDevice, KeyAttempt and KeyTokenMs, the admission
	// decision on the gateway's monotonic clock.
	Admitted = "admitted"
	// Rejected is written at the decision to refuse a handshake: KeyStatus
	// and KeyDevice (no attempt).
	Rejected = "rejected"
	// ClaimWasted is written when a route claim completed after its client
	// had gone (--abandoned serve): KeyDevice, KeyAttempt and KeyTokenMs.
	// The claim's work was done; nothing was upgraded.
	ClaimWasted = "claim_wasted"
	// Abandoned is written when a handshake admitted by the bucket is
	// dropped unclaimed because its client had gone (--abandoned skip):
	// KeyDevice, KeyAttempt and KeyTokenMs.
	Abandoned = "abandoned"
	// UpgradeFailed is written when the WebSocket upgrade failed after the
	// claim (the route is then released): KeyDevice, KeyConn.
	UpgradeFailed = "upgrade_failed"
	// Rejections is the per-second summary of refused handshakes
	// (--log-rejections summary): counts by reason.
	Rejections = "rejections"
)

// Messages of the per-session lines, each with KeyDevice and KeyConn.
const (
	Kicked     = "kicked"      // closed 4001 (replaced); KeySource: local, notify, reregister or a reconcile's
	IdleClosed = "idle_closed" // closed 4002: no frame or pong within --idle
	GoawaySent = "goaway_sent" // the drain's goaway was written
	// GoawayFailed: the drain's goaway could not be written (its "err" says
	// why: the write bound passed, the connection broke); the session is
	// closed 1001 all the same, so its client learns of the drain only
	// from the close.
	GoawayFailed = "goaway_failed"
	Closed       = "closed" // the session ended and its route was released: KeyCode, KeyReason
)

// Messages of the other lines: the lease's and the process's side events.
const (
	LeaseHeld            = "lease_held"             // the id's lease is another live process's: waiting for it to lapse
	LeaseRenewed         = "lease_renewed"          // debug: one renew and its latency
	Reregistered         = "reregistered"           // routes restored after a lapse: KeyKept, KeyRestored, KeyReplaced, KeyClosedCount
	OrphanRoutesReleased = "orphan_routes_released" // KeyCount own routes without a connection deleted
	AcceptFailed         = "accept_failed"          // accepting a TCP connection failed (descriptors)
	Stopping             = "stopping"               // the gateway's own reason to stop, then a drain
)

// Keys.
const (
	KeyGateway        = "gateway"         // the logging gateway's id, on every line
	KeyAddr           = "addr"            // host:port
	KeyDevice         = "device"          // device id
	KeyAttempt        = "attempt"         // the device's attempt counter (?attempt=)
	KeyTokenMs        = "token_ms"        // ms since the process started, when admission was decided
	KeyStatus         = "status"          // HTTP status answered
	KeyDeadGateway    = "dead_gateway"    // the expired gateway whose routes a sweep deleted
	KeyCount          = "count"           // routes
	KeyGoaway         = "goaway"          // goaway frames sent during the drain
	KeyLeftoverRoutes = "leftover_routes" // routes no session released before the drain ended
	KeyConn           = "conn"            // connection id (the hello's conn)
	KeyCode           = "code"            // WebSocket close code; -1 when the session never opened
	KeyReason         = "reason"          // close reason, or a refusal's metric reason
	KeySource         = "source"          // what closed a replaced session
	KeySinceRenewMs   = "since_renew_ms"  // lease_lost: ms from the last successful renewal's send to the loss
	KeyLateRenewalMs  = "late_renewal_ms" // lease_lost: the round trip of a renewal that completed a lease or more after the previous one
	KeyRenewGapMs     = "renew_gap_ms"    // sweep_paused: ms between the sends of two successful renewals
	KeyKept           = "kept"            // reregistered: routes that survived
	KeyRestored       = "restored"        // reregistered: routes written again
	KeyReplaced       = "replaced"        // reregistered: sessions closed 4001, a newer claim won
	KeyClosedCount    = "closed"          // reregistered: sessions closed 4003, the database failed
	KeyCutGoaways     = "cut_goaways"     // goaways the pace would have sent after the grace, sent at it
	KeyLastGoawayMs   = "last_goaway_ms"  // ms from the drain's start to its last goaway request
	KeyFailedGoaways  = "failed_goaways"  // drain_done: goaways whose write failed (goaway_failed lines)
)

// IsLifecycle reports whether msg is one of the lifecycle messages above.
func IsLifecycle(msg string) bool {
	switch msg {
	case Start, Listening, SweepReclaimed, SweepPaused, StaleRoutesReleased, LeaseLost, LeaseRegained,
		LeaseRenewFailed, LeaseExpireFailed, ListenLost, ListenReconnected, DrainStart, DrainDone, Exit:
		return true
	}
	return false
}
