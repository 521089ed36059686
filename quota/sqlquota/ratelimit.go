package sqlquota

import (
	"context"
	"time"

	"github.com/parleyhq/parley/quota"
)

var _ quota.RateLimiter = (*RateLimiter)(nil)

// RateLimiter is a quota.RateLimiter in a Ledger's database: a sliding
// log of counted calls per key, shared by every process using the
// database. Get it from (*Ledger).RateLimiter; Migrate creates its tables.
//
// Take is one transaction that first locks the key (PostgreSQL: an upsert
// of the key's row, which takes its row lock; SQLite: the database's write
// lock), then counts the window and logs the call, so concurrent Takes for
// one key, from any process, never count more than the rate allows.
type RateLimiter struct {
	db *db
}

// Take implements quota.RateLimiter. Calls that left the window (at or
// before now - r.Per) are deleted as it goes.
func (rl *RateLimiter) Take(ctx context.Context, key string, r quota.Rate, now time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !r.Enabled() {
		return nil
	}
	nowNs, err := nanos("take", now)
	if err != nil {
		return err
	}
	since := nowNs - int64(r.Per)
	var limited *quota.RateLimitError
	err = rl.db.write(ctx, func(q querier) error {
		limited = nil
		if rl.db.dialect == Postgres {
			// Takes for one key queue here, on the key row's lock.
			if _, err := q.ExecContext(ctx, `INSERT INTO parley_quota_rate_keys AS k (key) VALUES ($1)
ON CONFLICT (key) DO UPDATE SET key = k.key`, key); err != nil {
				return err
			}
		}
		if _, err := q.ExecContext(ctx, `DELETE FROM parley_quota_rate_calls WHERE key = $1 AND at_ns <= $2`, key, since); err != nil {
			return err
		}
		var n int
		if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM parley_quota_rate_calls WHERE key = $1 AND at_ns > $2 AND at_ns <= $3`,
			key, since, nowNs).Scan(&n); err != nil {
			return err
		}
		if n >= r.Calls {
			// The call that must leave the window first is the
			// (n-Calls+1)-th oldest in it.
			var at int64
			if err := q.QueryRowContext(ctx, `SELECT at_ns FROM parley_quota_rate_calls WHERE key = $1 AND at_ns > $2 AND at_ns <= $3
ORDER BY at_ns LIMIT 1 OFFSET $4`, key, since, nowNs, n-r.Calls).Scan(&at); err != nil {
				return err
			}
			limited = &quota.RateLimitError{Key: key, Rate: r, RetryAt: fromNanos(at + int64(r.Per))}
			return nil // keep the pruning; count nothing
		}
		_, err := q.ExecContext(ctx, `INSERT INTO parley_quota_rate_calls (key, at_ns) VALUES ($1, $2)`, key, nowNs)
		return err
	})
	if err != nil {
		return fail(ctx, "take", err)
	}
	if limited != nil {
		return limited
	}
	return nil
}

// Prune deletes the calls counted at or before cutoff, for every key, and
// reports how many it deleted. Take prunes each key it sees; Prune is for
// keys no longer taken, from a periodic sweeper, with a cutoff of now minus
// the longest Rate.Per in use.
func (rl *RateLimiter) Prune(ctx context.Context, cutoff time.Time) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	cut, err := nanos("prune rate", cutoff)
	if err != nil {
		return 0, err
	}
	n, err := rl.db.count(ctx, `DELETE FROM parley_quota_rate_calls WHERE at_ns <= $1`, cut)
	if err != nil {
		return 0, fail(ctx, "prune rate", err)
	}
	return n, nil
}
