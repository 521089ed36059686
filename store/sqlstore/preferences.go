package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/parleyhq/parley/store"
)

var _ store.Preferences = (*Store)(nil)

// ModelPreference implements store.Preferences.
func (s *Store) ModelPreference(ctx context.Context, userID string) (store.ModelPreference, error) {
	const op = "get model preference"
	if err := ctx.Err(); err != nil {
		return store.ModelPreference{}, fail(ctx, op, err)
	}
	p := store.ModelPreference{UserID: userID}
	err := s.db.QueryRowContext(ctx, s.rebind(`SELECT connection, model, updated_at
		FROM parley_model_preferences WHERE user_id = ?`), userID).
		Scan(&p.Connection, &p.Model, timeDest{&p.UpdatedAt})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.ModelPreference{}, notFound(op, "model preference of user", userID)
	case err != nil:
		return store.ModelPreference{}, fail(ctx, op, err)
	}
	return p, nil
}

// SetModelPreference implements store.Preferences with one upsert on the
// primary key: the database serializes the writers of one user, so
// concurrent sets, from anywhere, leave one row, the last one written.
func (s *Store) SetModelPreference(ctx context.Context, p store.ModelPreference) error {
	const op = "set model preference"
	if err := ctx.Err(); err != nil {
		return fail(ctx, op, err)
	}
	if p.UserID == "" || p.Connection == "" || p.Model == "" {
		return invalid(op, "user, connection and model required")
	}
	if p.UpdatedAt.IsZero() {
		p.UpdatedAt = s.clock()
	}
	a := s.args(4).add(p.UserID, p.Connection, p.Model).time(p.UpdatedAt)
	if a.err != nil {
		return invalid(op, "%v", a.err)
	}
	if _, err := s.exec(ctx, `INSERT INTO parley_model_preferences (user_id, connection, model, updated_at)
		VALUES (?, ?, ?, ?)
		ON CONFLICT (user_id) DO UPDATE SET connection = excluded.connection, model = excluded.model,
			updated_at = excluded.updated_at`, a.a...); err != nil {
		return fail(ctx, op, err)
	}
	return nil
}

// ClearModelPreference implements store.Preferences.
func (s *Store) ClearModelPreference(ctx context.Context, userID string) error {
	const op = "clear model preference"
	if err := ctx.Err(); err != nil {
		return fail(ctx, op, err)
	}
	if _, err := s.exec(ctx, `DELETE FROM parley_model_preferences WHERE user_id = ?`, userID); err != nil {
		return fail(ctx, op, err)
	}
	return nil
}
