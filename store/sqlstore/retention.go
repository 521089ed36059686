package sqlstore

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/parleyhq/parley/internal/sqltx"
)

// sweepBatch bounds the threads one retention transaction deletes, so a
// large sweep never holds locks for long.
const sweepBatch = 500

// DeleteThreadsOlderThan deletes the threads last updated before cutoff,
// archived or not, with their messages, feedback and proposals, and
// returns how many threads it deleted. Audit events stay. It is meant for a periodic sweeper:
//
//	n, err := s.DeleteThreadsOlderThan(ctx, time.Now().AddDate(0, 0, -days))
//
// Whether retention is on at all (Parley's convention: days of -1 disables
// it) is the caller's decision; this method always deletes.
//
// It works in batches of a few hundred threads, each its own transaction,
// so a thread is deleted whole or not at all, and a sweep interrupted by
// ctx leaves a consistent database (the error reports how many went
// before). On PostgreSQL a thread that a concurrent turn is writing to at
// that moment is skipped (it is about to be updated anyway), and several
// sweepers may run at once without waiting for each other.
func (s *Store) DeleteThreadsOlderThan(ctx context.Context, cutoff time.Time) (int, error) {
	const op = "delete old threads"
	total := 0
	for {
		if err := ctx.Err(); err != nil {
			return total, fail(ctx, op, err)
		}
		a := s.args(2).time(cutoff).add(sweepBatch)
		if a.err != nil {
			return total, invalid(op, "cutoff: %v", a.err)
		}
		var n int64
		var err error
		if s.dialect == Postgres {
			n, err = s.sweepPostgres(ctx, a.a)
		} else {
			n, err = s.sweepSQLite(ctx, a.a)
		}
		total += int(n)
		if err != nil {
			return total, fail(ctx, op, err)
		}
		if n < sweepBatch {
			return total, nil
		}
	}
}

// sweepPostgres deletes one batch; the foreign keys cascade to messages
// (and from them to feedback) and proposals.
// SKIP LOCKED passes over threads another transaction holds (a turn being
// appended), and lets concurrent sweepers share the work.
func (s *Store) sweepPostgres(ctx context.Context, args []any) (int64, error) {
	return sqltx.Exec(ctx, s.db, s.rebind(`DELETE FROM parley_threads WHERE id IN (
		SELECT id FROM parley_threads WHERE updated_at < ?
		ORDER BY updated_at LIMIT ? FOR UPDATE SKIP LOCKED)`), args...)
}

// sweepSQLite deletes one batch inside a write transaction: the ids first,
// then their feedback, messages and proposals, and the threads themselves.
func (s *Store) sweepSQLite(ctx context.Context, args []any) (int64, error) {
	var n int64
	err := s.write(ctx, func(q querier) error {
		rows, err := q.QueryContext(ctx,
			`SELECT id FROM parley_threads WHERE updated_at < ? ORDER BY updated_at LIMIT ?`, args...)
		if err != nil {
			return err
		}
		var ids []any
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		in := "(?" + strings.Repeat(", ?", len(ids)-1) + ")"
		for _, child := range threadChildren {
			if _, err := q.ExecContext(ctx, `DELETE FROM `+child+` WHERE thread_id IN `+in, ids...); err != nil {
				return err
			}
		}
		var res sql.Result
		if res, err = q.ExecContext(ctx, `DELETE FROM parley_threads WHERE id IN `+in, ids...); err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}
