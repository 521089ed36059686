package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/parleyhq/parley/store"
)

var _ store.FeedbackStore = (*Store)(nil)

const feedbackColumns = `message_id, user_id, thread_id, rating, category, comment, created_at, updated_at`

func (s *Store) scanFeedback(row rowScanner) (store.Feedback, error) {
	var f store.Feedback
	err := row.Scan(&f.MessageID, &f.UserID, &f.ThreadID, &f.Rating, s.text(&f.Category), s.text(&f.Comment),
		timeDest{&f.CreatedAt}, timeDest{&f.UpdatedAt})
	return f, err
}

// SetFeedback implements store.FeedbackStore with one upsert: it inserts
// the row from the message itself (INSERT ... SELECT, so thread_id is the
// message's and only an assistant message yields a row) and on a taken
// (message_id, user_id) replaces the rating, category, comment and
// updated_at, keeping created_at. The database serializes the writers of
// one key, so concurrent sets leave one row, the last one written. When
// nothing was written, a read of the message tells a missing message from
// a user's. That read may find an assistant message (on PostgreSQL, which
// reads with a new snapshot per statement): it was appended after the
// upsert looked, so the upsert runs once more. A message deleted meanwhile
// fails the foreign key: ErrNotFound. The caller's feedback is filled in
// (ThreadID and the times) only when it is written.
func (s *Store) SetFeedback(ctx context.Context, f *store.Feedback) error {
	const op = "set feedback"
	if err := ctx.Err(); err != nil {
		return fail(ctx, op, err)
	}
	switch {
	case f == nil:
		return invalid(op, "nil feedback")
	case f.MessageID == "" || f.UserID == "":
		return invalid(op, "message and user required")
	case !f.Rating.Valid():
		return invalid(op, "rating %q, want up or down", f.Rating)
	}
	now := s.clock()
	a := s.args(7).add(f.UserID, string(f.Rating)).text(f.Category).text(f.Comment).time(now).time(now).
		add(f.MessageID)
	if a.err != nil {
		return invalid(op, "%v", a.err)
	}
	row := *f
	var refused error // why no row was written, when the message is the reason
	err := s.write(ctx, func(q querier) error {
		for range 2 {
			err := q.QueryRowContext(ctx, s.rebind(`INSERT INTO parley_feedback (`+feedbackColumns+`)
				SELECT id, ?, thread_id, ?, ?, ?, ?, ? FROM parley_messages WHERE id = ? AND role = 'assistant'
				ON CONFLICT (message_id, user_id) DO UPDATE SET rating = excluded.rating,
					category = excluded.category, comment = excluded.comment, updated_at = excluded.updated_at
				RETURNING thread_id, created_at, updated_at`), a.a...).
				Scan(&row.ThreadID, timeDest{&row.CreatedAt}, timeDest{&row.UpdatedAt})
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			var role store.Role
			err = q.QueryRowContext(ctx, s.rebind(`SELECT role FROM parley_messages WHERE id = ?`), f.MessageID).Scan(&role)
			switch {
			case errors.Is(err, sql.ErrNoRows):
				refused = notFound(op, "message", f.MessageID)
				return refused
			case err != nil:
				return err
			case role != store.RoleAssistant:
				refused = invalid(op, "message %q is the %s's, not the assistant's", f.MessageID, role)
				return refused
			}
		}
		// Not reached: the assistant message the read found matches the
		// second upsert.
		refused = notFound(op, "message", f.MessageID)
		return refused
	})
	if refused != nil {
		return refused
	}
	if err != nil {
		return fail(ctx, op, err)
	}
	f.ThreadID, f.CreatedAt, f.UpdatedAt = row.ThreadID, row.CreatedAt, row.UpdatedAt
	return nil
}

// DeleteFeedback implements store.FeedbackStore.
func (s *Store) DeleteFeedback(ctx context.Context, messageID, userID string) error {
	const op = "delete feedback"
	if err := ctx.Err(); err != nil {
		return fail(ctx, op, err)
	}
	n, err := s.exec(ctx, `DELETE FROM parley_feedback WHERE message_id = ? AND user_id = ?`, messageID, userID)
	if err != nil {
		return fail(ctx, op, err)
	}
	if n == 0 {
		return notFound(op, "feedback on message", messageID)
	}
	return nil
}

// ListFeedback implements store.FeedbackStore; an unknown thread has none.
// The index on (thread_id, created_at, message_id, user_id) serves the
// query, in order.
func (s *Store) ListFeedback(ctx context.Context, threadID string) ([]store.Feedback, error) {
	const op = "list feedback"
	if err := ctx.Err(); err != nil {
		return nil, fail(ctx, op, err)
	}
	out, err := queryAll(ctx, s.db, s.rebind(`SELECT `+feedbackColumns+` FROM parley_feedback
		WHERE thread_id = ? ORDER BY created_at, message_id, user_id`), []any{threadID}, s.scanFeedback)
	if err != nil {
		return nil, fail(ctx, op, err)
	}
	return out, nil
}
