package gateway

import (
	"context"
	"time"

	"stormsim/gateway/protocol"
	"stormsim/gateway/store"
)

// Handshakes is the store work on the handshake path and in sessions.
type Handshakes interface {
	// AuthenticateAndClaim authenticates the device and claims its route in
	// one round trip. Cancelling ctx abandons the claim only while it waits
	// for a database connection; once sent, the claim completes.
	AuthenticateAndClaim(ctx context.Context, c store.Claim, token string) (store.ClaimResult, error)
	ReregisterRoute(ctx context.Context, c store.Claim) (store.ClaimResult, error)
	ReleaseRoute(ctx context.Context, device, conn string) error
	EventsAfter(ctx context.Context, device, conv string, after int64, page store.Page) ([]protocol.Event, int64, error)
}

// Leases is the store work of the lease loop, kick reconciliation and the
// drain. It gets its own small pool so that a claim storm cannot starve
// renewals or delay closing replaced connections.
type Leases interface {
	AcquireLease(ctx context.Context, gateway, owner string, lease time.Duration) (held bool, err error)
	ExpireLease(ctx context.Context, gateway, owner string) error
	Sweep(ctx context.Context, self string) ([]store.Reclaimed, error)
	ReleaseGateway(ctx context.Context, gateway string) (int64, error)
	Floors(ctx context.Context, devices []string) (map[string]store.Floor, error)
	RoutesOf(ctx context.Context, gateway string) ([]store.RouteKey, error)
	ReleaseRoutes(ctx context.Context, routes []store.RouteKey) (int64, error)
}

// Kicks delivers im_kick notifications over a dedicated connection; see
// store.PG.ListenKicks.
type Kicks interface {
	ListenKicks(ctx context.Context, ready func(), onKick func(store.Kick)) error
}

// Deps are the gateway's outside dependencies. One *store.PG can serve all
// three; cmd/gateway gives Leases a separate two-connection pool.
type Deps struct {
	Handshakes Handshakes
	Leases     Leases
	Kicks      Kicks
}

var (
	_ Handshakes = (*store.PG)(nil)
	_ Leases     = (*store.PG)(nil)
	_ Kicks      = (*store.PG)(nil)
)
