package store

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// DeviceID is the seed's device naming: u-000-d1, u-001-d1, ... (at least
// three digits; u-1000-d1 after u-999-d1).
func DeviceID(i int) string { return fmt.Sprintf("u-%03d-d1", i) }

// DeviceToken is the provisioned token of a device: "tok-" + device id.
func DeviceToken(device string) string { return "tok-" + device }

// ProvisionDevices makes sure devices DeviceID(0) .. DeviceID(count-1) exist
// with their DeviceToken; existing rows are left untouched. It returns how
// many rows it inserted.
func (s *PG) ProvisionDevices(ctx context.Context, count int) (inserted int64, err error) {
	ids := make([]string, count)
	tokens := make([]string, count)
	for i := range ids {
		ids[i] = DeviceID(i)
		tokens[i] = DeviceToken(ids[i])
	}
	tag, err := s.pool.Exec(ctx, `
		INSERT INTO devices (device_id, token) SELECT * FROM unnest($1::text[], $2::text[])
		ON CONFLICT (device_id) DO NOTHING`, ids, tokens)
	return tag.RowsAffected(), err
}

// Authenticate reports whether device exists and token matches its token.
func (s *PG) Authenticate(ctx context.Context, device, token string) (bool, error) {
	var want string
	err := s.pool.QueryRow(ctx, `SELECT token FROM devices WHERE device_id = $1`, device).Scan(&want)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return subtle.ConstantTimeCompare([]byte(want), []byte(token)) == 1, nil
}

// ResetFloor sets the device's floor back to "never claimed" (epoch and
// attempt -1) while keeping its version, so any next claim is accepted and
// versions keep growing. It is the operator's way out for a device whose
// install_epoch reached the protocol's maximum. It reports whether the
// device had a floor.
func (s *PG) ResetFloor(ctx context.Context, device string) (bool, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE route_floor SET max_epoch = -1, max_attempt = -1 WHERE device_id = $1`, device)
	return tag.RowsAffected() == 1, err
}
