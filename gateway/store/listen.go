package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Kick is an im_kick notification: connection Conn of gateway Gateway lost
// Device to a claim that produced route version Version.
type Kick struct {
	Gateway string
	Conn    string
	Device  string
	Version int64
}

// Payload is the seed's wire form: oldGateway|oldConn|device|newVersion.
func (k Kick) Payload() string {
	return fmt.Sprintf("%s|%s|%s|%d", k.Gateway, k.Conn, k.Device, k.Version)
}

// ParseKick parses Payload's form. Gateway and conn ids contain no '|'; a
// device id may, so it is whatever lies between the second and the last '|'.
func ParseKick(payload string) (Kick, error) {
	parts := strings.SplitN(payload, "|", 3)
	last := strings.LastIndexByte(payload, '|')
	if len(parts) < 3 || last <= len(parts[0])+len(parts[1])+1 {
		return Kick{}, fmt.Errorf("kick payload %q: want gateway|conn|device|version", payload)
	}
	v, err := strconv.ParseInt(payload[last+1:], 10, 64)
	if err != nil {
		return Kick{}, fmt.Errorf("kick payload %q: version: %w", payload, err)
	}
	return Kick{Gateway: parts[0], Conn: parts[1], Device: payload[len(parts[0])+len(parts[1])+2 : last], Version: v}, nil
}

// ListenKicks opens a dedicated connection (not from the pool, so a busy
// pool cannot delay it and a dead one is noticed at once), LISTENs on
// the store's kick channel, calls ready once listening, then calls onKick for every
// notification until ctx ends or the connection fails; it returns that
// error. Notifications sent while no connection listens are lost: the caller
// reconciles in ready.
func (s *PG) ListenKicks(ctx context.Context, ready func(), onKick func(Kick)) error {
	cfg := s.pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = cfg.RuntimeParams["application_name"] + "-listen"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{s.kickChannel()}.Sanitize()); err != nil {
		return err
	}
	ready()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if k, err := ParseKick(n.Payload); err == nil {
			onKick(k)
		}
	}
}
