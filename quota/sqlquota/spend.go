package sqlquota

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parleyhq/parley/quota"
)

var _ quota.SpendLedger = (*SpendLedger)(nil)

// SpendLedger is a quota.SpendLedger in a Ledger's database: one row per
// recorded model call, summed over the window by Allow, so every process
// sharing the database sees the same spend. Get it from
// (*Ledger).SpendLedger; Migrate creates its tables.
type SpendLedger struct {
	db *db
	mu sync.Mutex
	// keep caches the longest window this process has stored per key, so
	// Allow writes parley_quota_spend_windows only when a window grows.
	keep    map[quota.SpendKey]time.Duration
	records atomic.Uint64
}

// defaultKeep is how long records of a key are kept before any Allow has
// named a window for it, as memquota does.
const defaultKeep = time.Hour

// pruneEvery: Record deletes its key's expired rows on one call in this
// many, so the table follows the windows without a DELETE per call.
const pruneEvery = 32

// Allow implements quota.SpendLedger.
func (s *SpendLedger) Allow(ctx context.Context, key quota.SpendKey, c quota.SpendCap, now time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !c.Enabled() {
		return nil
	}
	nowNs, err := nanos("allow", now)
	if err != nil {
		return err
	}
	if err := s.noteWindow(ctx, key, c.Window); err != nil {
		return fail(ctx, "allow", err)
	}
	var spent int64
	err = s.db.q().QueryRowContext(ctx, `SELECT COALESCE(SUM(tokens), 0) FROM parley_quota_spend
WHERE connection = $1 AND principal = $2 AND at_ns > $3 AND at_ns <= $4`,
		key.Connection, key.Principal, nowNs-int64(c.Window), nowNs).Scan(&spent)
	if err != nil {
		return fail(ctx, "allow", err)
	}
	if spent < c.Budget {
		return nil
	}
	retry, err := s.retryAt(ctx, key, c, nowNs, spent)
	if err != nil {
		return fail(ctx, "allow", err)
	}
	return &quota.SpendCapError{Key: key, Cap: c, Spent: spent, RetryAt: retry}
}

// retryAt walks the window oldest first until enough spend has left it.
func (s *SpendLedger) retryAt(ctx context.Context, key quota.SpendKey, c quota.SpendCap, nowNs, spent int64) (time.Time, error) {
	rows, err := s.db.q().QueryContext(ctx, `SELECT at_ns, tokens FROM parley_quota_spend
WHERE connection = $1 AND principal = $2 AND at_ns > $3 AND at_ns <= $4 ORDER BY at_ns`,
		key.Connection, key.Principal, nowNs-int64(c.Window), nowNs)
	if err != nil {
		return time.Time{}, err
	}
	defer rows.Close()
	left, retry := spent, fromNanos(nowNs)
	for left >= c.Budget && rows.Next() {
		var at, tokens int64
		if err := rows.Scan(&at, &tokens); err != nil {
			return time.Time{}, err
		}
		left -= tokens
		retry = fromNanos(at + int64(c.Window))
	}
	return retry, rows.Err()
}

// noteWindow stores window as key's longest, if it is longer than what is
// stored: records are kept that long.
func (s *SpendLedger) noteWindow(ctx context.Context, key quota.SpendKey, window time.Duration) error {
	s.mu.Lock()
	known := s.keep[key]
	s.mu.Unlock()
	if window <= known {
		return nil
	}
	if err := s.db.exec(ctx, `INSERT INTO parley_quota_spend_windows AS w (connection, principal, window_ns) VALUES ($1, $2, $3)
ON CONFLICT (connection, principal) DO UPDATE SET window_ns = excluded.window_ns WHERE w.window_ns < excluded.window_ns`,
		key.Connection, key.Principal, int64(window)); err != nil {
		return err
	}
	s.mu.Lock()
	if len(s.keep) >= 10_000 {
		clear(s.keep) // a cache: forgetting costs one write per key
	}
	s.keep[key] = max(s.keep[key], window)
	s.mu.Unlock()
	return nil
}

// Record implements quota.SpendLedger. Every so often it also deletes the
// key's records older than the longest window Allow has named for it (an
// hour before any); Prune does that for every key.
func (s *SpendLedger) Record(ctx context.Context, key quota.SpendKey, tokens int64, now time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if tokens < 0 {
		return fmt.Errorf("sqlquota: record spend: negative tokens %d: %w", tokens, quota.ErrInvalid)
	}
	if tokens == 0 {
		return nil
	}
	nowNs, err := nanos("record spend", now)
	if err != nil {
		return err
	}
	if err := s.db.exec(ctx, `INSERT INTO parley_quota_spend (connection, principal, at_ns, tokens) VALUES ($1, $2, $3, $4)`,
		key.Connection, key.Principal, nowNs, tokens); err != nil {
		return fail(ctx, "record spend", err)
	}
	if s.records.Add(1)%pruneEvery == 0 {
		if err := s.db.exec(ctx, `DELETE FROM parley_quota_spend WHERE connection = $1 AND principal = $2
AND at_ns <= $3 - COALESCE((SELECT window_ns FROM parley_quota_spend_windows w
  WHERE w.connection = $1 AND w.principal = $2), $4)`,
			key.Connection, key.Principal, nowNs, int64(defaultKeep)); err != nil {
			// The record is in; pruning is for another call to finish.
			return nil
		}
	}
	return nil
}

// Prune deletes, for every key, the records older than the longest window
// Allow has named for it (an hour if none) as of now, and reports how many
// it deleted. Record prunes as it goes; Prune is for keys no longer
// recorded, from a periodic sweeper.
func (s *SpendLedger) Prune(ctx context.Context, now time.Time) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	nowNs, err := nanos("prune spend", now)
	if err != nil {
		return 0, err
	}
	n, err := s.db.count(ctx, `DELETE FROM parley_quota_spend
WHERE at_ns <= $1 - COALESCE((SELECT window_ns FROM parley_quota_spend_windows w
  WHERE w.connection = parley_quota_spend.connection AND w.principal = parley_quota_spend.principal), $2)`,
		nowNs, int64(defaultKeep))
	if err != nil {
		return 0, fail(ctx, "prune spend", err)
	}
	return n, nil
}
