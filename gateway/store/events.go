package store

import (
	"context"

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

// EventsAfter returns up to limit events of conv with seq > after, in seq
// order, and the conversation's head (0 for an empty conversation). The head
// is read after the events, so head >= the last returned seq; a client syncs
// again while its cursor is below head.
func (s *PG) EventsAfter(ctx context.Context, conv string, after int64, limit int) ([]protocol.Event, int64, error) {
	rows, err := s.pool.Query(ctx,
		`SELECT seq, body FROM events WHERE conv_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, conv, after, limit)
	if err != nil {
		return nil, 0, err
	}
	events := []protocol.Event{}
	for rows.Next() {
		var e protocol.Event
		if err := rows.Scan(&e.Seq, &e.Body); err != nil {
			rows.Close()
			return nil, 0, err
		}
		events = append(events, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	var head int64
	err = s.pool.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM events WHERE conv_id = $1`, conv).Scan(&head)
	return events, head, err
}
