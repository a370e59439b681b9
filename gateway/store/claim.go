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
	// Unauthorized is set by AuthenticateAndClaim for an unknown device or a
	// wrong token (401); nothing else is then filled in.
	Unauthorized bool
	// Accepted is false when the claim was not newer than the floor (409).
	Accepted bool
	// Version is the new route version (or the existing one on an
	// idempotent repeat); 0 when rejected.
	Version int64
	// Previous is the route replaced by this claim; zero if there was none
	// or it was this connection's own.
	Previous Owner
	// Floor is the floor that refused the claim; zero when it was accepted.
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

// ClaimRoute is the seed's claimRoute (the claim_route function of
// schema.sql, one round trip): it ensures the device's floor row, locks it,
// accepts the claim only if (epoch, attempt) is newer than the floor (or the
// route already belongs to this very connection), sets version = floor + 1,
// raises the floor, upserts the route and, when another connection held the
// route, sends pg_notify('im_kick', oldGateway|oldConn|device|newVersion),
// which is delivered only if the claim commits. It does not authenticate:
// the handshake path uses AuthenticateAndClaim.
//
// Cancelling ctx abandons the claim only while it waits for a pooled
// connection; once the statement is sent it runs to completion (or to ctx's
// deadline), so a caller that goes away never leaves a claim half done or
// costs the pool a connection.
func (s *PG) ClaimRoute(ctx context.Context, c Claim) (ClaimResult, error) {
	return s.claim(ctx, c, nil, false)
}

// AuthenticateAndClaim is ClaimRoute preceded, in the same round trip, by the
// device's authentication: an unknown device or a wrong token answers
// ClaimResult{Unauthorized: true} and changes nothing.
func (s *PG) AuthenticateAndClaim(ctx context.Context, c Claim, token string) (ClaimResult, error) {
	return s.claim(ctx, c, &token, false)
}

// ReregisterRoute restores a live connection's route after its gateway's
// lease lapsed (and another gateway may have swept it). It succeeds only if
// the floor still records exactly this connection's (epoch, attempt), i.e. no
// newer claim has been accepted since; the route is then written again with a
// fresh version (or left alone if it survived). Accepted false means a
// newer connection took over and this one must be closed as replaced;
// Floor is then the claim that took over.
func (s *PG) ReregisterRoute(ctx context.Context, c Claim) (ClaimResult, error) {
	return s.claim(ctx, c, nil, true)
}

const claimSQL = `SELECT outcome, version, floor_version, floor_epoch, floor_attempt, prev_gateway, prev_conn, prev_version
	FROM claim_route($1, $2, $3, $4, $5, $6, $7, $8)`

// claim calls claim_route. A new claim must be newer than the floor (a
// repeat by the route's own connection is idempotent); a re-registration
// must match the floor exactly, whatever the route says.
func (s *PG) claim(ctx context.Context, c Claim, token *string, reregister bool) (ClaimResult, error) {
	conn, err := s.pool.Acquire(ctx)
	if err == nil && ctx.Err() != nil { // cancelled as the connection came: still nothing sent
		conn.Release()
		err = ctx.Err()
	}
	if err != nil {
		return ClaimResult{}, fmt.Errorf("claim route of %s: wait for a connection: %w", c.Device, err)
	}
	defer conn.Release()
	run, cancel := committed(ctx)
	defer cancel()
	var (
		res                           ClaimResult
		outcome                       string
		version, fv, fe, fa, prevVers *int64
		prevGateway, prevConn         *string
	)
	err = conn.QueryRow(run, claimSQL, c.Device, token, c.Gateway, c.Conn, c.Epoch, c.Attempt, s.kickChannel(), reregister).
		Scan(&outcome, &version, &fv, &fe, &fa, &prevGateway, &prevConn, &prevVers)
	if err != nil {
		return ClaimResult{}, fmt.Errorf("claim route of %s: %w", c.Device, err)
	}
	switch outcome {
	case "unauthorized":
		return ClaimResult{Unauthorized: true}, nil
	case "accepted":
		res.Accepted, res.Version = true, *version
		if prevConn != nil {
			res.Previous = Owner{Gateway: *prevGateway, Conn: *prevConn, Version: *prevVers}
		}
	default:
		res.Floor = Floor{Version: *fv, Epoch: *fe, Attempt: *fa}
	}
	return res, nil
}

// committed returns a context that keeps ctx's values and deadline but not
// its cancellation: work sent to the database finishes even if the caller
// stops waiting for it.
func committed(ctx context.Context) (context.Context, context.CancelFunc) {
	run := context.WithoutCancel(ctx)
	if d, ok := ctx.Deadline(); ok {
		return context.WithDeadline(run, d)
	}
	return run, func() {}
}

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
