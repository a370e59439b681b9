package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Claim is one handshake's request to own a device's route.
type Claim struct {
	Device  string
	Gateway string
	Conn    string
	Epoch   int64 // install_epoch: grows when the app is reinstalled
	Attempt int64 // the device's persisted attempt counter
}

// Floor is the highest claim ever accepted for a device. A device that never
// claimed has Version 0, Epoch -1, Attempt -1.
type Floor struct {
	Version int64
	Epoch   int64
	Attempt int64
}

// Below reports whether a claim with (epoch, attempt) is newer than the
// floor: epoch first, then attempt, lexicographically (V2).
func (f Floor) Below(epoch, attempt int64) bool {
	return epoch > f.Epoch || (epoch == f.Epoch && attempt > f.Attempt)
}

// Owner is a route row's holder. The zero Owner means "no route".
type Owner struct {
	Gateway string
	Conn    string
	Version int64
}

// ClaimResult is the outcome of ClaimRoute.
type ClaimResult struct {
	// Accepted is false when the claim was not newer than the floor (409).
	Accepted bool
	// Version is the new route version (or the existing one on an
	// idempotent repeat); 0 when rejected.
	Version int64
	// Previous is the route replaced by this claim; zero if there was none
	// or it was this connection's own.
	Previous Owner
	// Floor is the floor as found before the claim.
	Floor Floor
}

// KickChannel is the seed's NOTIFY channel for replaced connections.
// Channels are database-wide, so a store opened with a schema uses
// KickChannel + "_" + schema instead: labs sharing a database stay apart.
const KickChannel = "im_kick"

// kickChannel is this store's channel (see KickChannel).
func (s *PG) kickChannel() string {
	if s.schema == "" {
		return KickChannel
	}
	return KickChannel + "_" + s.schema
}

// ClaimRoute is the seed's claimRoute: in one transaction it ensures the
// device's floor row, locks it, accepts the claim only if (epoch, attempt) is
// newer than the floor (or the route already belongs to this very
// connection), sets version = floor + 1, raises the floor, upserts the route
// and, when another connection held the route, sends
// pg_notify('im_kick', oldGateway|oldConn|device|newVersion), which is
// delivered only if the transaction commits.
func (s *PG) ClaimRoute(ctx context.Context, c Claim) (ClaimResult, error) {
	return s.claim(ctx, c, false)
}

// ReregisterRoute restores a live connection's route after its gateway's
// lease lapsed (and another gateway may have swept it). It succeeds only if
// the floor still records exactly this connection's (epoch, attempt), i.e. no
// newer claim has been accepted since; the route is then written again with a
// fresh version (or left alone if it survived). ok=false means a newer
// connection took over and this one must be closed as replaced.
func (s *PG) ReregisterRoute(ctx context.Context, c Claim) (ok bool, version int64, err error) {
	r, err := s.claim(ctx, c, true)
	return r.Accepted, r.Version, err
}

// claim runs the claimRoute transaction. A new claim must be newer than the
// floor (a repeat by the route's own connection is idempotent); a
// re-registration must match the floor exactly, whatever the route says.
func (s *PG) claim(ctx context.Context, c Claim, reregister bool) (ClaimResult, error) {
	var res ClaimResult
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// The seed's statements in the seed's order, pipelined in two
		// round trips: read under the floor's row lock, then write.
		res = ClaimResult{}
		f := &res.Floor
		var prev Owner
		read := &pgx.Batch{}
		read.Queue(`INSERT INTO route_floor (device_id) VALUES ($1) ON CONFLICT DO NOTHING`, c.Device)
		read.Queue(`SELECT max_version, max_epoch, max_attempt FROM route_floor WHERE device_id = $1 FOR UPDATE`,
			c.Device).QueryRow(func(r pgx.Row) error { return r.Scan(&f.Version, &f.Epoch, &f.Attempt) })
		read.Queue(`SELECT gateway_id, conn_id, route_version FROM routes WHERE device_id = $1`,
			c.Device).QueryRow(func(r pgx.Row) error {
			if err := r.Scan(&prev.Gateway, &prev.Conn, &prev.Version); !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
			return nil
		})
		if err := tx.SendBatch(ctx, read).Close(); err != nil {
			return err
		}
		own := prev.Conn == c.Conn && prev.Gateway == c.Gateway
		switch {
		case reregister && (f.Epoch != c.Epoch || f.Attempt != c.Attempt):
			return nil
		case own:
			res.Accepted, res.Version = true, prev.Version // idempotent repeat, or the route survived
			return nil
		case !reregister && !f.Below(c.Epoch, c.Attempt):
			return nil
		}
		v := f.Version + 1
		write := &pgx.Batch{}
		write.Queue(`UPDATE route_floor SET max_version = $2, max_epoch = $3, max_attempt = $4 WHERE device_id = $1`,
			c.Device, v, c.Epoch, c.Attempt)
		write.Queue(upsertRouteSQL, c.Device, c.Gateway, c.Conn, v)
		if prev.Conn != "" {
			write.Queue(`SELECT pg_notify($1, $2)`, s.kickChannel(),
				Kick{Gateway: prev.Gateway, Conn: prev.Conn, Device: c.Device, Version: v}.Payload())
		}
		if err := tx.SendBatch(ctx, write).Close(); err != nil {
			return err
		}
		res.Accepted, res.Version, res.Previous = true, v, prev
		return nil
	})
	if err != nil {
		return ClaimResult{}, fmt.Errorf("claim route of %s: %w", c.Device, err)
	}
	return res, nil
}

const upsertRouteSQL = `
	INSERT INTO routes (device_id, gateway_id, conn_id, route_version) VALUES ($1, $2, $3, $4)
	ON CONFLICT (device_id) DO UPDATE SET gateway_id = EXCLUDED.gateway_id, conn_id = EXCLUDED.conn_id,
		route_version = EXCLUDED.route_version, connected_at = clock_timestamp()`

// UpsertRouteUnconditional is last-writer-wins: it overwrites the route with
// version = current route version + 1 whatever the claim's (epoch, attempt).
// It exists only as the negative control that shows what ClaimRoute
// prevents; the gateway never calls it.
func (s *PG) UpsertRouteUnconditional(ctx context.Context, c Claim) (version int64, err error) {
	err = s.pool.QueryRow(ctx, `
		INSERT INTO routes (device_id, gateway_id, conn_id, route_version) VALUES ($1, $2, $3, 1)
		ON CONFLICT (device_id) DO UPDATE SET gateway_id = EXCLUDED.gateway_id, conn_id = EXCLUDED.conn_id,
			route_version = routes.route_version + 1, connected_at = clock_timestamp()
		RETURNING route_version`, c.Device, c.Gateway, c.Conn).Scan(&version)
	return version, err
}

// ReleaseRoute deletes the device's route if this connection still holds it
// (a replaced connection must not delete its successor's route).
func (s *PG) ReleaseRoute(ctx context.Context, device, conn string) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM routes WHERE device_id = $1 AND conn_id = $2`, device, conn)
	return err
}

// Route returns the device's current route; the zero Owner if none.
func (s *PG) Route(ctx context.Context, device string) (Owner, error) {
	var o Owner
	err := s.pool.QueryRow(ctx, `SELECT gateway_id, conn_id, route_version FROM routes WHERE device_id = $1`,
		device).Scan(&o.Gateway, &o.Conn, &o.Version)
	if errors.Is(err, pgx.ErrNoRows) {
		return Owner{}, nil
	}
	return o, err
}

// Floors returns the floors of the given devices (absent devices are left
// out), for reconciling live connections after missed kicks.
func (s *PG) Floors(ctx context.Context, devices []string) (map[string]Floor, error) {
	rows, err := s.pool.Query(ctx,
		`SELECT device_id, max_version, max_epoch, max_attempt FROM route_floor WHERE device_id = ANY($1)`, devices)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[string]Floor, len(devices))
	for rows.Next() {
		var d string
		var f Floor
		if err := rows.Scan(&d, &f.Version, &f.Epoch, &f.Attempt); err != nil {
			return nil, err
		}
		out[d] = f
	}
	return out, rows.Err()
}

// RouteCount returns how many routes a gateway holds ("" counts all).
func (s *PG) RouteCount(ctx context.Context, gateway string) (n int64, err error) {
	err = s.pool.QueryRow(ctx, `SELECT count(*) FROM routes WHERE $1 = '' OR gateway_id = $1`, gateway).Scan(&n)
	return n, err
}
