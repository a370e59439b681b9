package store

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

// RouteCountExcept returns how many routes gateway holds, not counting
// device's: a lab that keeps one device of its own apart (a witness) counts
// its clients' routes with it.
func (s *PG) RouteCountExcept(ctx context.Context, gateway, device string) (n int64, err error) {
	err = s.pool.QueryRow(ctx, `SELECT count(*) FROM routes WHERE gateway_id = $1 AND device_id <> $2`, gateway, device).Scan(&n)
	return n, err
}

// DropSchema removes Options.Schema with everything in it: the end of a
// lab or a test that Migrate gave a schema of its own. Without a schema it
// refuses, rather than drop the tables of the default one.
func (s *PG) DropSchema(ctx context.Context) error {
	if s.schema == "" {
		return errors.New("store: no schema of its own to drop")
	}
	_, err := s.pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{s.schema}.Sanitize()+" CASCADE")
	return err
}
