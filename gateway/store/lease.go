package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// AcquireLease takes or renews the gateway's lease for the process named
// owner (a random id per process): lease_until = clock_timestamp() + lease
// on the database clock, creating the row on first use. It succeeds only if
// the lease is free, already owner's, or expired; held is true (and nothing
// changes) while another owner's lease is live.
func (s *PG) AcquireLease(ctx context.Context, gateway, owner string, lease time.Duration) (held bool, err error) {
	tag, err := s.pool.Exec(ctx, `
		INSERT INTO gateways (gateway_id, lease_until, owner) VALUES ($1, clock_timestamp() + $2::interval, $3)
		ON CONFLICT (gateway_id) DO UPDATE SET lease_until = EXCLUDED.lease_until, owner = EXCLUDED.owner
		WHERE gateways.owner = EXCLUDED.owner OR gateways.lease_until < clock_timestamp()`, gateway, lease, owner)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 0, nil
}

// ExpireLease sets lease_until = clock_timestamp() if owner holds the lease,
// so every other gateway's next sweep reclaims this gateway's routes even if
// its drain is cut short.
func (s *PG) ExpireLease(ctx context.Context, gateway, owner string) error {
	_, err := s.pool.Exec(ctx, `UPDATE gateways SET lease_until = clock_timestamp() WHERE gateway_id = $1 AND owner = $2`,
		gateway, owner)
	return err
}

// Reclaimed counts the routes a sweep deleted for one expired gateway.
type Reclaimed struct {
	Gateway string
	Routes  int64
}

// Sweep deletes the routes of every gateway other than self whose lease has
// expired on the database clock, and reports how many per gateway.
// Concurrent identical sweeps by several gateways are safe.
func (s *PG) Sweep(ctx context.Context, self string) ([]Reclaimed, error) {
	rows, err := s.pool.Query(ctx, `
		WITH gone AS (
			DELETE FROM routes WHERE gateway_id IN (
				SELECT gateway_id FROM gateways WHERE lease_until < clock_timestamp() AND gateway_id <> $1)
			RETURNING gateway_id)
		SELECT gateway_id, count(*) FROM gone GROUP BY gateway_id ORDER BY gateway_id`, self)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Reclaimed
	for rows.Next() {
		var r Reclaimed
		if err := rows.Scan(&r.Gateway, &r.Routes); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// ReleaseGateway deletes every route the gateway still holds (the last step
// of a drain) and returns how many there were.
func (s *PG) ReleaseGateway(ctx context.Context, gateway string) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM routes WHERE gateway_id = $1`, gateway)
	return tag.RowsAffected(), err
}

// RouteKey names one route by its device and the connection holding it.
type RouteKey struct {
	Device string
	Conn   string
}

// RoutesOf lists the routes the gateway holds.
func (s *PG) RoutesOf(ctx context.Context, gateway string) ([]RouteKey, error) {
	rows, err := s.pool.Query(ctx, `SELECT device_id, conn_id FROM routes WHERE gateway_id = $1`, gateway)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (RouteKey, error) {
		var k RouteKey
		return k, r.Scan(&k.Device, &k.Conn)
	})
}

// ReleaseRoutes deletes each listed route if that connection still holds it,
// in one statement, and returns how many it deleted.
func (s *PG) ReleaseRoutes(ctx context.Context, routes []RouteKey) (int64, error) {
	devices := make([]string, len(routes))
	conns := make([]string, len(routes))
	for i, r := range routes {
		devices[i], conns[i] = r.Device, r.Conn
	}
	tag, err := s.pool.Exec(ctx, `
		DELETE FROM routes r USING unnest($1::text[], $2::text[]) AS k(device_id, conn_id)
		WHERE r.device_id = k.device_id AND r.conn_id = k.conn_id`, devices, conns)
	return tag.RowsAffected(), err
}
