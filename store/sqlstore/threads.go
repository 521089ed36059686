package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/parleyhq/parley/store"
)

const threadColumns = `id, owner_id, title, created_at, updated_at, archived_at, cancel_requested_at`

// threadSelect is what a read returns: the written columns, last_seq,
// which only AppendTurn changes, and the summary, which only SetSummary
// writes (and AppendTurn clears).
const threadSelect = threadColumns + `, last_seq, summary, summary_through`

// threadChildren are the tables whose rows belong to a thread, deleted
// before it: SQLite may run without foreign keys.
var threadChildren = []string{"parley_feedback", "parley_messages", "parley_proposals"}

func (s *Store) scanThread(row rowScanner) (store.Thread, error) {
	var t store.Thread
	err := row.Scan(&t.ID, &t.OwnerID, s.text(&t.Title), timeDest{&t.CreatedAt}, timeDest{&t.UpdatedAt},
		timePtrDest{&t.ArchivedAt}, timePtrDest{&t.CancelRequestedAt}, &t.LastSeq, s.text(&t.Summary), &t.SummaryThrough)
	return t, err
}

// CreateThread implements store.Threads. The caller's thread is filled in
// (ID, zero times) only when it is written.
func (s *Store) CreateThread(ctx context.Context, t *store.Thread) error {
	const op = "create thread"
	if err := ctx.Err(); err != nil {
		return fail(ctx, op, err)
	}
	if t == nil || t.OwnerID == "" {
		return invalid(op, "owner required")
	}
	row := *t
	if row.ID == "" {
		row.ID = uuid.NewString()
	}
	now := s.clock()
	if row.CreatedAt.IsZero() {
		row.CreatedAt = now
	}
	if row.UpdatedAt.IsZero() {
		row.UpdatedAt = now
	}
	a := s.args(7).add(row.ID, row.OwnerID).text(row.Title).time(row.CreatedAt).time(row.UpdatedAt).
		timePtr(row.ArchivedAt).timePtr(row.CancelRequestedAt)
	if a.err != nil {
		return invalid(op, "%v", a.err)
	}
	_, err := s.exec(ctx, `INSERT INTO parley_threads (`+threadColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)`, a.a...)
	if err != nil {
		return fail(ctx, op, err)
	}
	t.ID, t.CreatedAt, t.UpdatedAt = row.ID, row.CreatedAt, row.UpdatedAt
	return nil
}

// GetThread implements store.Threads.
func (s *Store) GetThread(ctx context.Context, id string) (store.Thread, error) {
	const op = "get thread"
	if err := ctx.Err(); err != nil {
		return store.Thread{}, fail(ctx, op, err)
	}
	t, err := s.scanThread(s.db.QueryRowContext(ctx, s.rebind(`SELECT `+threadSelect+` FROM parley_threads WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Thread{}, notFound(op, "thread", id)
	}
	if err != nil {
		return store.Thread{}, fail(ctx, op, err)
	}
	return t, nil
}

// ListThreads implements store.Threads. Threads updated at the same instant
// list by descending ID, so that the order is stable. The index on
// (owner_id, updated_at DESC, id DESC) serves the query.
func (s *Store) ListThreads(ctx context.Context, ownerID string, opts store.ListOptions) ([]store.Thread, error) {
	const op = "list threads"
	if err := ctx.Err(); err != nil {
		return nil, fail(ctx, op, err)
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = 50
	}
	q := `SELECT ` + threadSelect + ` FROM parley_threads WHERE owner_id = ?`
	a := s.args(3).add(ownerID)
	if !opts.IncludeArchived {
		q += ` AND archived_at IS NULL`
	}
	if !opts.Before.IsZero() {
		q += ` AND updated_at < ?`
		a.time(opts.Before)
	}
	q += ` ORDER BY updated_at DESC, id DESC LIMIT ?`
	a.add(limit)
	if a.err != nil {
		return nil, invalid(op, "%v", a.err)
	}
	out, err := queryAll(ctx, s.db, s.rebind(q), a.a, s.scanThread)
	if err != nil {
		return nil, fail(ctx, op, err)
	}
	return out, nil
}

// RenameThread implements store.Threads. The title is part of the thread,
// so a rename also sets UpdatedAt to now.
func (s *Store) RenameThread(ctx context.Context, id, title string) error {
	return s.updateThread(ctx, "rename thread", id,
		`UPDATE parley_threads SET title = ?, updated_at = ? WHERE id = ?`,
		s.args(3).text(title).time(s.clock()).add(id))
}

// ArchiveThread implements store.Threads. An archived thread keeps its
// first archive time.
func (s *Store) ArchiveThread(ctx context.Context, id string, at time.Time) error {
	return s.updateThread(ctx, "archive thread", id,
		`UPDATE parley_threads SET archived_at = COALESCE(archived_at, ?) WHERE id = ?`,
		s.args(2).time(at).add(id))
}

// RequestCancel implements store.Threads. A later request replaces the
// time of an earlier one. Any process sharing the database sees the request
// on its next GetThread.
func (s *Store) RequestCancel(ctx context.Context, id string, at time.Time) error {
	return s.updateThread(ctx, "request cancel", id,
		`UPDATE parley_threads SET cancel_requested_at = ? WHERE id = ?`,
		s.args(2).time(at).add(id))
}

// ClearCancel implements store.Threads.
func (s *Store) ClearCancel(ctx context.Context, id string) error {
	return s.updateThread(ctx, "clear cancel", id,
		`UPDATE parley_threads SET cancel_requested_at = NULL WHERE id = ?`,
		s.args(1).add(id))
}

// SetSummary implements store.Threads with one conditional UPDATE, so the
// compare and the set are one step: PostgreSQL re-checks summary_through
// after waiting for the row's lock (held by a concurrent SetSummary or
// AppendTurn). When it matches nothing, a read of the thread tells a
// missing thread from a summary that moved.
func (s *Store) SetSummary(ctx context.Context, id, summary string, through, prevThrough int) error {
	const op = "set summary"
	switch {
	case through < 0:
		return invalid(op, "through %d is negative", through)
	case through == 0 && summary != "":
		return invalid(op, "a summary through 0 covers nothing")
	}
	err := s.updateThread(ctx, op, id,
		`UPDATE parley_threads SET summary = ?, summary_through = ? WHERE id = ? AND summary_through = ?`,
		s.args(4).text(summary).add(through, id, prevThrough))
	if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	var cur int
	err = s.db.QueryRowContext(ctx, s.rebind(`SELECT summary_through FROM parley_threads WHERE id = ?`), id).Scan(&cur)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return notFound(op, "thread", id)
	case err != nil:
		return fail(ctx, op, err)
	}
	return fmt.Errorf("sqlstore: %s: thread %q is summarized through %d, not %d: %w",
		op, id, cur, prevThrough, store.ErrConflict)
}

// updateThread runs one UPDATE of a thread by id: no row is ErrNotFound.
// Both dialects count a matched row as affected even when no value changed.
func (s *Store) updateThread(ctx context.Context, op, id, q string, a *args) error {
	if err := ctx.Err(); err != nil {
		return fail(ctx, op, err)
	}
	if a.err != nil {
		return invalid(op, "%v", a.err)
	}
	n, err := s.exec(ctx, q, a.a...)
	if err != nil {
		return fail(ctx, op, err)
	}
	if n == 0 {
		return notFound(op, "thread", id)
	}
	return nil
}

// DeleteThread implements store.Threads: the thread, its messages (with
// their feedback) and its proposals go in one transaction. Audit events
// that name the thread stay.
func (s *Store) DeleteThread(ctx context.Context, id string) error {
	const op = "delete thread"
	if err := ctx.Err(); err != nil {
		return fail(ctx, op, err)
	}
	var n int64
	var err error
	if s.dialect == Postgres {
		// One statement: the foreign keys cascade to messages (and from
		// them to feedback) and proposals.
		n, err = s.exec(ctx, `DELETE FROM parley_threads WHERE id = ?`, id)
	} else {
		// SQLite enforces foreign keys only on connections that asked for
		// it, so the feedback, messages and proposals are deleted
		// explicitly, in the same transaction.
		err = s.write(ctx, func(q querier) error {
			for _, child := range threadChildren {
				if _, err := q.ExecContext(ctx, `DELETE FROM `+child+` WHERE thread_id = ?`, id); err != nil {
					return err
				}
			}
			res, err := q.ExecContext(ctx, `DELETE FROM parley_threads WHERE id = ?`, id)
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			return err
		})
	}
	if err != nil {
		return fail(ctx, op, err)
	}
	if n == 0 {
		return notFound(op, "thread", id)
	}
	return nil
}
