package store

import (
	"context"
	"errors"

	"stormsim/gateway/protocol"
)

// AppendEvents appends bodies to conversation conv with consecutive seqs
// after its current head and returns the new head. Appends to one
// conversation are serialised by a transaction-scoped advisory lock.
func (s *PG) AppendEvents(ctx context.Context, conv string, bodies []string) (head int64, err error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('events:' || $1))`, conv); err != nil {
		return 0, err
	}
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM events WHERE conv_id = $1`, conv).Scan(&head); err != nil {
		return 0, err
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO events (conv_id, seq, body)
		SELECT $1, $2 + u.ord, u.body FROM unnest($3::text[]) WITH ORDINALITY AS u(body, ord)`,
		conv, head, bodies); err != nil {
		return 0, err
	}
	return head + int64(len(bodies)), tx.Commit(ctx)
}

// ErrNotMember answers a sync of a conversation the device does not belong
// to, whether or not the conversation exists.
var ErrNotMember = errors.New("not a member of the conversation")

// Page bounds one EventsAfter answer: at most Events events, and no event
// once the bodies before it reach Bytes (the first event always comes, so a
// page is at most Bytes plus one body).
type Page struct {
	Events int
	Bytes  int
}

// EventsAfter returns the events of conv with seq > after, in seq order, as
// far as page allows, and the conversation's head (0 for an empty
// conversation), if device is a member of conv; otherwise ErrNotMember. One
// statement, one snapshot: head >= the last returned seq, and a client syncs
// again while its cursor is below head.
func (s *PG) EventsAfter(ctx context.Context, device, conv string, after int64, page Page) ([]protocol.Event, int64, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT m.ok, h.head, e.seq, e.body
		FROM (SELECT EXISTS (SELECT 1 FROM members WHERE conv_id = $1 AND device_id = $2) AS ok) m
		CROSS JOIN LATERAL (SELECT coalesce(max(seq), 0) AS head FROM events WHERE conv_id = $1 AND m.ok) h
		LEFT JOIN LATERAL (
			SELECT seq, body FROM (
				SELECT seq, body, sum(octet_length(body)) OVER (ORDER BY seq) - octet_length(body) AS before
				FROM events WHERE conv_id = $1 AND seq > $3 AND m.ok ORDER BY seq LIMIT $4) w
			WHERE before < $5) e ON true
		ORDER BY e.seq`, conv, device, after, page.Events, page.Bytes)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	events := []protocol.Event{}
	var member bool
	var head int64
	for rows.Next() {
		var seq *int64
		var body *string
		if err := rows.Scan(&member, &head, &seq, &body); err != nil {
			return nil, 0, err
		}
		if seq != nil {
			events = append(events, protocol.Event{Seq: *seq, Body: *body})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	if !member {
		return nil, 0, ErrNotMember
	}
	return events, head, nil
}

// Join makes devices members of conv (existing memberships are kept) and
// returns how many memberships it added.
func (s *PG) Join(ctx context.Context, conv string, devices []string) (int64, error) {
	tag, err := s.pool.Exec(ctx, `
		INSERT INTO members (conv_id, device_id) SELECT $1, d FROM unnest($2::text[]) AS d
		ON CONFLICT DO NOTHING`, conv, devices)
	return tag.RowsAffected(), err
}
