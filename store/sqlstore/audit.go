package sqlstore

import (
	"context"

	"github.com/google/uuid"

	"github.com/parleyhq/parley/store"
)

// AppendAudit implements store.Audit. The caller's event is filled in (ID,
// zero CreatedAt) only when it is written.
func (s *Store) AppendAudit(ctx context.Context, e *store.AuditEvent) error {
	const op = "append audit"
	if err := ctx.Err(); err != nil {
		return fail(ctx, op, err)
	}
	if e == nil || e.Kind == "" || e.ActorID == "" {
		return invalid(op, "kind and actor required")
	}
	row := *e
	if row.ID == "" {
		row.ID = uuid.NewString()
	}
	if row.CreatedAt.IsZero() {
		row.CreatedAt = s.clock()
	}
	a := s.args(6).add(row.ID, row.Kind, row.ActorID, row.ThreadID).json("data", row.Data).time(row.CreatedAt)
	if a.err != nil {
		return invalid(op, "%v", a.err)
	}
	_, err := s.exec(ctx, `INSERT INTO parley_audit (id, kind, actor_id, thread_id, data, created_at)
		VALUES (?, ?, ?, ?, ?, ?)`, a.a...)
	if err != nil {
		return fail(ctx, op, err)
	}
	e.ID, e.CreatedAt = row.ID, row.CreatedAt
	return nil
}

// ListAudit implements store.Audit. Events of the same instant list in
// reverse order of insertion.
func (s *Store) ListAudit(ctx context.Context, f store.AuditFilter) ([]store.AuditEvent, error) {
	const op = "list audit"
	if err := ctx.Err(); err != nil {
		return nil, fail(ctx, op, err)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	q := `SELECT id, kind, actor_id, thread_id, data, created_at FROM parley_audit WHERE 1 = 1`
	a := s.args(4)
	for _, c := range []struct{ col, v string }{{"kind", f.Kind}, {"actor_id", f.ActorID}, {"thread_id", f.ThreadID}} {
		if c.v != "" {
			q += ` AND ` + c.col + ` = ?`
			a.add(c.v)
		}
	}
	q += ` ORDER BY created_at DESC, n DESC LIMIT ?`
	a.add(limit)
	out, err := queryAll(ctx, s.db, s.rebind(q), a.a, func(row rowScanner) (store.AuditEvent, error) {
		var e store.AuditEvent
		err := row.Scan(&e.ID, &e.Kind, &e.ActorID, &e.ThreadID, s.json((*[]byte)(&e.Data)), timeDest{&e.CreatedAt})
		return e, err
	})
	if err != nil {
		return nil, fail(ctx, op, err)
	}
	return out, nil
}
