package sqlstore

import (
	"context"
	"slices"

	"github.com/parleyhq/parley/store"
)

var _ store.AutoApprovals = (*Store)(nil)

// AutoApprovals implements store.AutoApprovals.
func (s *Store) AutoApprovals(ctx context.Context, userID string) ([]string, error) {
	const op = "get auto-approvals"
	if err := ctx.Err(); err != nil {
		return nil, fail(ctx, op, err)
	}
	rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT grant_name FROM parley_auto_approvals
		WHERE user_id = ? ORDER BY grant_name`), userID)
	if err != nil {
		return nil, fail(ctx, op, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var g string
		if err := rows.Scan(&g); err != nil {
			return nil, fail(ctx, op, err)
		}
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fail(ctx, op, err)
	}
	// The database's collation may order differently from Go's.
	slices.Sort(out)
	return out, nil
}

// SetAutoApprovals implements store.AutoApprovals: the user's rows are
// deleted and written again in one transaction, which on PostgreSQL first
// takes a lock on the user, so concurrent sets of one user, from anywhere,
// leave one of the lists whole.
func (s *Store) SetAutoApprovals(ctx context.Context, userID string, grants []string) error {
	const op = "set auto-approvals"
	if err := ctx.Err(); err != nil {
		return fail(ctx, op, err)
	}
	if userID == "" || slices.Contains(grants, "") {
		return invalid(op, "user and grants must not be empty")
	}
	gs := slices.Compact(slices.Sorted(slices.Values(grants)))
	err := s.write(ctx, func(q querier) error {
		if s.dialect == Postgres {
			if _, err := q.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 7))`, "parley_auto_approvals:"+userID); err != nil {
				return err
			}
		}
		if _, err := q.ExecContext(ctx, s.rebind(`DELETE FROM parley_auto_approvals WHERE user_id = ?`), userID); err != nil {
			return err
		}
		for _, g := range gs {
			if _, err := q.ExecContext(ctx, s.rebind(`INSERT INTO parley_auto_approvals (user_id, grant_name) VALUES (?, ?)`),
				userID, g); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fail(ctx, op, err)
	}
	return nil
}
