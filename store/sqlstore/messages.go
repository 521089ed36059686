package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/parleyhq/parley/store"
)

// messageArgs is the number of messageColumns; seqArg the index of seq.
const messageArgs, seqArg = 20, 2

const messageColumns = `id, thread_id, seq, role, status, content, blocks, model_messages,
	input_tokens, output_tokens, guard_action, guard_severity, guard_categories, guard_exclude, guard_fence,
	source, replaces, superseded_at, created_at, updated_at`

// messageValues is the placeholders of one row of messageColumns.
const messageValues = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

func (s *Store) scanMessage(row rowScanner) (store.Message, error) {
	var (
		m                    store.Message
		rawBlocks, rawGuards []byte
	)
	err := row.Scan(&m.ID, &m.ThreadID, &m.Seq, &m.Role, &m.Status, s.text(&m.Content),
		s.json(&rawBlocks), s.json((*[]byte)(&m.ModelMessages)),
		&m.InputTokens, &m.OutputTokens, &m.Guard.Action, &m.Guard.Severity, s.json(&rawGuards),
		&m.Guard.ExcludeFromHistory, &m.Guard.FenceInHistory, &m.Source, &m.Replaces, timePtrDest{&m.SupersededAt},
		timeDest{&m.CreatedAt}, timeDest{&m.UpdatedAt})
	if err != nil {
		return store.Message{}, err
	}
	if m.Blocks, err = decodeBlocks(rawBlocks); err != nil {
		return store.Message{}, err
	}
	if m.Guard.Categories, err = decodeStrings(rawGuards); err != nil {
		return store.Message{}, err
	}
	return m, nil
}

// AppendTurn implements store.Messages in one transaction. It first bumps
// the thread's updated_at and its last_seq counter by two, which both finds
// the thread and locks its row: concurrent turns on one thread (from any
// process) queue there and get consecutive, distinct Seqs; a turn that
// fails afterwards rolls the counter back with everything else, so no Seq
// is lost. A non-zero user.Seq adds "AND last_seq = user.Seq-1" to that
// UPDATE, so the check and the taking of the Seqs are one step, which
// PostgreSQL re-checks after waiting for the row's lock; when it matches
// nothing, a read of the thread tells a missing thread from a moved Seq.
// A non-empty user.Replaces is checked and superseded after that UPDATE,
// under the row's lock (see supersede), so of concurrent edits of one
// message, from anywhere, one wins. The caller's messages are filled in
// only when the turn is written.
func (s *Store) AppendTurn(ctx context.Context, user, assistant *store.Message) error {
	const op = "append turn"
	if err := ctx.Err(); err != nil {
		return fail(ctx, op, err)
	}
	switch {
	case user == nil || assistant == nil:
		return invalid(op, "nil message")
	case user.Role != store.RoleUser || assistant.Role != store.RoleAssistant:
		return invalid(op, "roles %q, %q, want user, assistant", user.Role, assistant.Role)
	case user.ThreadID == "":
		return invalid(op, "thread id required")
	case assistant.ThreadID != "" && assistant.ThreadID != user.ThreadID:
		return invalid(op, "messages name threads %q and %q", user.ThreadID, assistant.ThreadID)
	case !user.Source.Valid():
		return invalid(op, "unknown source %q", user.Source)
	case user.ID != "" && user.ID == assistant.ID:
		return fmt.Errorf("sqlstore: %s: both messages have id %q: %w", op, user.ID, store.ErrConflict)
	}

	u, a := *user, *assistant
	a.ThreadID = u.ThreadID
	a.Replaces, a.Source = "", "" // only a user message replaces one, or has a source
	u.SupersededAt, a.SupersededAt = nil, nil
	now := s.clock()
	for _, m := range []*store.Message{&u, &a} {
		if m.ID == "" {
			m.ID = uuid.NewString()
		}
		if m.CreatedAt.IsZero() {
			m.CreatedAt = now
		}
		if m.UpdatedAt.IsZero() {
			m.UpdatedAt = now
		}
	}
	ins := s.args(2 * messageArgs)
	for _, m := range []*store.Message{&u, &a} {
		ins.add(m.ID, m.ThreadID, 0, string(m.Role), string(m.Status)).text(m.Content).
			blocks(m.Blocks).json("model messages", m.ModelMessages).
			add(m.InputTokens, m.OutputTokens, m.Guard.Action, m.Guard.Severity).
			strings(m.Guard.Categories).add(m.Guard.ExcludeFromHistory, m.Guard.FenceInHistory, string(m.Source), m.Replaces, nil).
			time(m.CreatedAt).time(m.UpdatedAt)
	}
	bump := s.args(3).time(now).add(u.ThreadID)
	cond := ""
	if u.Seq != 0 {
		cond = " AND last_seq = ?"
		bump.add(u.Seq - 1)
	}
	if ins.err != nil || bump.err != nil {
		return invalid(op, "%v", errors.Join(ins.err, bump.err))
	}

	found, moved := true, -1 // moved: the thread's last Seq, when not u.Seq-1
	var refused error        // why user.Replaces cannot be replaced
	err := s.write(ctx, func(q querier) error {
		var last int
		err := q.QueryRowContext(ctx, s.rebind(
			`UPDATE parley_threads SET updated_at = ?, last_seq = last_seq + 2 WHERE id = ?`+cond+` RETURNING last_seq`),
			bump.a...).Scan(&last)
		if errors.Is(err, sql.ErrNoRows) && u.Seq != 0 {
			err = q.QueryRowContext(ctx, s.rebind(`SELECT last_seq FROM parley_threads WHERE id = ?`),
				u.ThreadID).Scan(&last)
			switch {
			case err == nil && last != u.Seq-1:
				moved = last
				return errSeqMoved
			case err == nil:
				// At u.Seq-1 now but not at the UPDATE (PostgreSQL reads
				// with a new snapshot per statement): the thread was
				// created after the UPDATE looked for it.
				err = sql.ErrNoRows
			}
		}
		if errors.Is(err, sql.ErrNoRows) {
			found = false
			return err
		}
		if err != nil {
			return err
		}
		if u.Replaces != "" {
			if refused, err = s.supersede(ctx, q, u.ThreadID, u.Replaces, now); refused != nil || err != nil {
				return cmp.Or(refused, err)
			}
		}
		u.Seq, a.Seq = last-1, last
		ins.a[seqArg], ins.a[messageArgs+seqArg] = u.Seq, a.Seq
		_, err = q.ExecContext(ctx, s.rebind(`INSERT INTO parley_messages (`+messageColumns+`)
			VALUES `+messageValues+`, `+messageValues), ins.a...)
		return err
	})
	switch {
	case refused != nil:
		return fmt.Errorf("sqlstore: %s: %w", op, refused)
	case !found:
		return notFound(op, "thread", u.ThreadID)
	case moved >= 0:
		return fmt.Errorf("sqlstore: %s: seq %d, thread's last is %d: %w", op, u.Seq, moved, store.ErrConflict)
	case err != nil:
		return fail(ctx, op, err)
	}
	*user, *assistant = u, a
	return nil
}

// supersede marks at the messages of the thread from the one with id
// replaced on that are still on the current branch, and clears the
// thread's summary if it covers that message. It runs in AppendTurn's
// transaction after the thread's row is locked; every supersession does,
// so what it reads cannot change before it commits. refused says why
// replaced cannot be replaced (not in the thread, not a user's, already
// superseded), with nothing written.
func (s *Store) supersede(ctx context.Context, q querier, threadID, replaced string, at time.Time) (refused, err error) {
	var (
		seq  int
		role store.Role
		gone *time.Time
	)
	err = q.QueryRowContext(ctx, s.rebind(`SELECT seq, role, superseded_at FROM parley_messages WHERE id = ? AND thread_id = ?`),
		replaced, threadID).Scan(&seq, &role, timePtrDest{&gone})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("replaced message %q is not in thread %q: %w", replaced, threadID, store.ErrNotFound), nil
	case err != nil:
		return nil, err
	case role != store.RoleUser:
		return fmt.Errorf("replaced message %q is the %s's, not the user's: %w", replaced, role, store.ErrInvalid), nil
	case gone != nil:
		return fmt.Errorf("replaced message %q is already superseded: %w", replaced, store.ErrConflict), nil
	}
	a := s.args(3).time(at).add(threadID, seq)
	if _, err := q.ExecContext(ctx, s.rebind(`UPDATE parley_messages SET superseded_at = ?
		WHERE thread_id = ? AND seq >= ? AND superseded_at IS NULL`), a.a...); err != nil {
		return nil, err
	}
	_, err = q.ExecContext(ctx, s.rebind(`UPDATE parley_threads SET summary = '', summary_through = 0
		WHERE id = ? AND summary_through >= ?`), threadID, seq)
	return nil, err
}

// errSeqMoved rolls back a conditional AppendTurn whose Seq is not the
// thread's next.
var errSeqMoved = errors.New("sqlstore: seq moved")

// UpdateMessage implements store.Messages. A zero m.UpdatedAt is set to
// now, in m as well.
func (s *Store) UpdateMessage(ctx context.Context, m *store.Message) error {
	const op = "update message"
	if err := ctx.Err(); err != nil {
		return fail(ctx, op, err)
	}
	if m == nil {
		return invalid(op, "nil message")
	}
	updated := m.UpdatedAt
	if updated.IsZero() {
		updated = s.clock()
	}
	a := s.args(7).add(string(m.Status)).blocks(m.Blocks).json("model messages", m.ModelMessages).
		add(m.InputTokens, m.OutputTokens).time(updated).add(m.ID)
	if a.err != nil {
		return invalid(op, "%v", a.err)
	}
	n, err := s.exec(ctx, `UPDATE parley_messages SET status = ?, blocks = ?, model_messages = ?,
		input_tokens = ?, output_tokens = ?, updated_at = ? WHERE id = ?`, a.a...)
	if err != nil {
		return fail(ctx, op, err)
	}
	if n == 0 {
		return notFound(op, "message", m.ID)
	}
	m.UpdatedAt = updated
	return nil
}

// GetMessage implements store.Messages.
func (s *Store) GetMessage(ctx context.Context, id string) (store.Message, error) {
	const op = "get message"
	if err := ctx.Err(); err != nil {
		return store.Message{}, fail(ctx, op, err)
	}
	m, err := s.scanMessage(s.db.QueryRowContext(ctx,
		s.rebind(`SELECT `+messageColumns+` FROM parley_messages WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Message{}, notFound(op, "message", id)
	}
	if err != nil {
		return store.Message{}, fail(ctx, op, err)
	}
	return m, nil
}

// ListMessages implements store.Messages. A thread with messages costs one
// query; an empty result costs a second, to tell an empty thread from none.
func (s *Store) ListMessages(ctx context.Context, threadID string) ([]store.Message, error) {
	const op = "list messages"
	if err := ctx.Err(); err != nil {
		return nil, fail(ctx, op, err)
	}
	out, err := queryAll(ctx, s.db,
		s.rebind(`SELECT `+messageColumns+` FROM parley_messages WHERE thread_id = ? ORDER BY seq`), []any{threadID}, s.scanMessage)
	if err != nil {
		return nil, fail(ctx, op, err)
	}
	if len(out) == 0 {
		var one int
		err := s.db.QueryRowContext(ctx, s.rebind(`SELECT 1 FROM parley_threads WHERE id = ?`), threadID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, notFound(op, "thread", threadID)
		}
		if err != nil {
			return nil, fail(ctx, op, err)
		}
	}
	return out, nil
}

// InterruptStale implements store.Messages.
func (s *Store) InterruptStale(ctx context.Context, updatedBefore time.Time) (int, error) {
	const op = "interrupt stale"
	if err := ctx.Err(); err != nil {
		return 0, fail(ctx, op, err)
	}
	a := s.args(4).add(string(store.StatusInterrupted)).time(s.clock()).add(string(store.StatusStreaming)).time(updatedBefore)
	if a.err != nil {
		return 0, invalid(op, "%v", a.err)
	}
	n, err := s.exec(ctx, `UPDATE parley_messages SET status = ?, updated_at = ? WHERE status = ? AND updated_at < ?`, a.a...)
	if err != nil {
		return 0, fail(ctx, op, err)
	}
	return int(n), nil
}
