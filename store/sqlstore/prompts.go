package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/parleyhq/parley/store"
)

var _ store.SystemPrompts = (*Store)(nil)

const promptColumns = `id, name, text, active, created_by, created_at, updated_at`

func (s *Store) scanPrompt(row rowScanner) (store.SystemPrompt, error) {
	var p store.SystemPrompt
	err := row.Scan(&p.ID, s.text(&p.Name), s.text(&p.Text), &p.Active, &p.CreatedBy,
		timeDest{&p.CreatedAt}, timeDest{&p.UpdatedAt})
	return p, err
}

// CreateSystemPrompt implements store.SystemPrompts. The caller's prompt is
// filled in (ID, Active, the times) only when it is written.
func (s *Store) CreateSystemPrompt(ctx context.Context, p *store.SystemPrompt) error {
	const op = "create system prompt"
	if err := ctx.Err(); err != nil {
		return fail(ctx, op, err)
	}
	if p == nil || p.Text == "" {
		return invalid(op, "text required")
	}
	row := *p
	row.Active = false // only ActivateSystemPrompt makes one active
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
	a := s.args(7).add(row.ID).text(row.Name).text(row.Text).add(row.Active, row.CreatedBy).
		time(row.CreatedAt).time(row.UpdatedAt)
	if a.err != nil {
		return invalid(op, "%v", a.err)
	}
	if _, err := s.exec(ctx, `INSERT INTO parley_system_prompts (`+promptColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)`, a.a...); err != nil {
		return fail(ctx, op, err)
	}
	*p = row
	return nil
}

// GetSystemPrompt implements store.SystemPrompts.
func (s *Store) GetSystemPrompt(ctx context.Context, id string) (store.SystemPrompt, error) {
	const op = "get system prompt"
	p, err := s.onePrompt(ctx, op, `WHERE id = ?`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return store.SystemPrompt{}, notFound(op, "system prompt", id)
	}
	return p, err
}

// ActiveSystemPrompt implements store.SystemPrompts. The partial unique
// index on active serves the query.
func (s *Store) ActiveSystemPrompt(ctx context.Context) (store.SystemPrompt, error) {
	const op = "active system prompt"
	p, err := s.onePrompt(ctx, op, `WHERE active = TRUE`)
	if errors.Is(err, sql.ErrNoRows) {
		return store.SystemPrompt{}, fmt.Errorf("sqlstore: %s: none is active: %w", op, store.ErrNotFound)
	}
	return p, err
}

// onePrompt reads the prompt that where selects. No row is sql.ErrNoRows,
// for the caller to name; any other error is wrapped for op.
func (s *Store) onePrompt(ctx context.Context, op, where string, args ...any) (store.SystemPrompt, error) {
	if err := ctx.Err(); err != nil {
		return store.SystemPrompt{}, fail(ctx, op, err)
	}
	p, err := s.scanPrompt(s.db.QueryRowContext(ctx,
		s.rebind(`SELECT `+promptColumns+` FROM parley_system_prompts `+where), args...))
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		err = fail(ctx, op, err)
	}
	return p, err
}

// ListSystemPrompts implements store.SystemPrompts. Operators keep a
// handful of prompts, so the sort needs no index.
func (s *Store) ListSystemPrompts(ctx context.Context) ([]store.SystemPrompt, error) {
	const op = "list system prompts"
	if err := ctx.Err(); err != nil {
		return nil, fail(ctx, op, err)
	}
	out, err := queryAll(ctx, s.db, `SELECT `+promptColumns+` FROM parley_system_prompts
		ORDER BY created_at DESC, id DESC`, nil, s.scanPrompt)
	if err != nil {
		return nil, fail(ctx, op, err)
	}
	return out, nil
}

// ActivateSystemPrompt implements store.SystemPrompts in one transaction:
// it locks the prompt's row (finding it), deactivates the active one and
// activates id, so a reader sees the old prompt or the new one active,
// never none or two. On PostgreSQL it first takes a lock on the table in
// SHARE ROW EXCLUSIVE mode, which conflicts with itself and with every
// write to the table, so activations (and the other writes) queue and
// each sees the one before it committed. Without it two activations of
// different prompts would each see no other active row, and the second
// would fail the unique index on active; retrying that instead would
// leave the loser's outcome to a loop under contention, for an operator's
// action that is rare and short. SQLite takes its write lock up front,
// which serializes the same way. The unique index stays as the backstop.
func (s *Store) ActivateSystemPrompt(ctx context.Context, id string) error {
	const op = "activate system prompt"
	if err := ctx.Err(); err != nil {
		return fail(ctx, op, err)
	}
	a := s.args(2).time(s.clock()).add(id) // updated_at, id
	if a.err != nil {
		return invalid(op, "%v", a.err)
	}
	updated := a.a[0]
	found := true
	err := s.write(ctx, func(q querier) error {
		if s.dialect == Postgres {
			if _, err := q.ExecContext(ctx, `LOCK TABLE parley_system_prompts IN SHARE ROW EXCLUSIVE MODE`); err != nil {
				return err
			}
		}
		var active bool
		err := q.QueryRowContext(ctx, s.rebind(`SELECT active FROM parley_system_prompts WHERE id = ?`), id).Scan(&active)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			found = false
			return err
		case err != nil || active:
			return err
		}
		if _, err := q.ExecContext(ctx, s.rebind(`UPDATE parley_system_prompts SET active = FALSE, updated_at = ?
			WHERE active = TRUE`), updated); err != nil {
			return err
		}
		_, err = q.ExecContext(ctx, s.rebind(`UPDATE parley_system_prompts SET active = TRUE, updated_at = ?
			WHERE id = ?`), a.a...)
		return err
	})
	switch {
	case !found:
		return notFound(op, "system prompt", id)
	case err != nil:
		return fail(ctx, op, err)
	}
	return nil
}

// DeactivateSystemPrompts implements store.SystemPrompts.
func (s *Store) DeactivateSystemPrompts(ctx context.Context) error {
	const op = "deactivate system prompts"
	if err := ctx.Err(); err != nil {
		return fail(ctx, op, err)
	}
	a := s.args(1).time(s.clock())
	if _, err := s.exec(ctx, `UPDATE parley_system_prompts SET active = FALSE, updated_at = ? WHERE active = TRUE`, a.a...); err != nil {
		return fail(ctx, op, err)
	}
	return nil
}

// DeleteSystemPrompt implements store.SystemPrompts.
func (s *Store) DeleteSystemPrompt(ctx context.Context, id string) error {
	const op = "delete system prompt"
	if err := ctx.Err(); err != nil {
		return fail(ctx, op, err)
	}
	n, err := s.exec(ctx, `DELETE FROM parley_system_prompts WHERE id = ?`, id)
	if err != nil {
		return fail(ctx, op, err)
	}
	if n == 0 {
		return notFound(op, "system prompt", id)
	}
	return nil
}
