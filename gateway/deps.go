package gateway

import (
	"context"
	"time"

	"stormsim/gateway/protocol"
	"stormsim/gateway/store"
)

// Handshakes is the store work on the handshake path and in sessions.
type Handshakes interface {
	Authenticate(ctx context.Context, device, token string) (bool, error)
	ClaimRoute(ctx context.Context, c store.Claim) (store.ClaimResult, error)
	ReregisterRoute(ctx context.Context, c store.Claim) (ok bool, version int64, err error)
	ReleaseRoute(ctx context.Context, device, conn string) error
	EventsAfter(ctx context.Context, conv string, after int64, limit int) ([]protocol.Event, int64, error)
}

// Leases is the store work of the lease loop, kick reconciliation and the
// drain. It gets its own small pool so that a claim storm cannot starve
// renewals or delay closing replaced connections.
type Leases interface {
	RenewLease(ctx context.Context, gateway string, lease time.Duration) error
	ExpireLease(ctx context.Context, gateway string) error
	Sweep(ctx context.Context, self string) ([]store.Reclaimed, error)
	ReleaseGateway(ctx context.Context, gateway string) (int64, error)
	Floors(ctx context.Context, devices []string) (map[string]store.Floor, error)
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
