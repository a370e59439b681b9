package store

import (
	"context"
	"time"
)

// RenewLease sets the gateway's lease_until = clock_timestamp() + lease on
// the database clock, creating the row on first use.
func (s *PG) RenewLease(ctx context.Context, gateway string, lease time.Duration) error {
	_, err := s.pool.Exec(ctx, `
		INSERT INTO gateways (gateway_id, lease_until) VALUES ($1, clock_timestamp() + $2::interval)
		ON CONFLICT (gateway_id) DO UPDATE SET lease_until = EXCLUDED.lease_until`, gateway, lease)
	return err
}

// ExpireLease sets lease_until = clock_timestamp(), so every other gateway's
// next sweep reclaims this gateway's routes even if its drain is cut short.
func (s *PG) ExpireLease(ctx context.Context, gateway string) error {
	_, err := s.pool.Exec(ctx, `UPDATE gateways SET lease_until = clock_timestamp() WHERE gateway_id = $1`, gateway)
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
