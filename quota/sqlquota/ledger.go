package sqlquota

import (
	"cmp"
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/parleyhq/parley/internal/sqltx"
	"github.com/parleyhq/parley/quota"
)

var (
	_ quota.Ledger  = (*Ledger)(nil)
	_ quota.Renewer = (*Ledger)(nil)
)

// Ledger is a quota.Ledger over a host's *sql.DB. Create it with New and
// bring the schema up to date with Migrate before use. It is safe for
// concurrent use, and any number of Ledgers, in any number of processes,
// may share one database, as long as they share one Policy.
type Ledger struct {
	db       *db
	policy   quota.Policy
	loc      *time.Location
	ttl      time.Duration
	defaults [3]int64 // resolved: a limit or quota.Unlimited
	windows  quota.WindowCache
	spend    *SpendLedger
	rate     *RateLimiter
}

// periods in the order every statement touches their rows: one fixed order
// of row locks is what keeps concurrent writers from deadlocking.
var periods = quota.PeriodOrder

// New returns a Ledger over db, which the host opened and keeps owning
// (the Ledger never closes it), configured with p. New does not touch the
// database: call Migrate. It returns an error wrapping quota.ErrInvalid if
// the policy is invalid.
func New(sdb *sql.DB, p quota.Policy, opts Options) (*Ledger, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("sqlquota: %w", err)
	}
	b, err := openDB(sdb, opts)
	if err != nil {
		return nil, err
	}
	l := &Ledger{
		db:     b,
		policy: quota.Policy{Defaults: p.Defaults.Clone(), Location: p.Loc(), HoldTTL: p.TTL()},
		loc:    p.Loc(),
		ttl:    p.TTL(),
	}
	for i, per := range periods {
		l.defaults[i] = l.policy.Limit(per, quota.Limits{})
	}
	l.spend = &SpendLedger{db: b, keep: make(map[quota.SpendKey]time.Duration)}
	l.rate = &RateLimiter{db: b}
	return l, nil
}

// Policy returns the ledger's policy with its defaults filled in.
func (l *Ledger) Policy() quota.Policy {
	p := l.policy
	p.Defaults = p.Defaults.Clone()
	return p
}

// Dialect reports the dialect the ledger speaks.
func (l *Ledger) Dialect() Dialect { return l.db.dialect }

// SpendLedger returns the quota.SpendLedger kept in the ledger's database.
func (l *Ledger) SpendLedger() *SpendLedger { return l.spend }

// RateLimiter returns the quota.RateLimiter kept in the ledger's database.
func (l *Ledger) RateLimiter() *RateLimiter { return l.rate }

func (l *Ledger) windowsAt(now time.Time) *quota.Windows { return l.windows.At(now, l.loc) }

// starts returns the period starts of w as stored.
func windowStarts(w *quota.Windows, op string) ([3]int64, error) {
	var s [3]int64
	for i := range w {
		n, err := nanos(op, w[i].Start)
		if err != nil {
			return s, err
		}
		s[i] = n
	}
	return s, nil
}

func checkUser(op, userID string) error {
	if userID == "" {
		return fmt.Errorf("sqlquota: %s: empty user id: %w", op, quota.ErrInvalid)
	}
	return nil
}

// lockUsageSQL makes sure the user's three usage rows exist and returns
// them, in the fixed period order. Its no-op update writes, so on SQLite it
// takes the write lock before it reads, and what it returns stays true until
// the transaction ends.
const lockUsageSQL = `INSERT INTO parley_quota_usage AS u (user_id, period, period_start_ns, used, held)
VALUES ($1, 'daily', $2, 0, 0), ($1, 'weekly', $3, 0, 0), ($1, 'monthly', $4, 0, 0)
ON CONFLICT (user_id, period, period_start_ns) DO UPDATE SET held = u.held
RETURNING period, used, held`

// currentRowsWhere selects a user's ($1) rows of the current day, week and
// month, whose starts are $2, $3 and $4.
const currentRowsWhere = `user_id = $1 AND ((period = 'daily' AND period_start_ns = $2)
  OR (period = 'weekly' AND period_start_ns = $3) OR (period = 'monthly' AND period_start_ns = $4))`

const holdSQL = `UPDATE parley_quota_usage SET held = held + $5
WHERE ` + currentRowsWhere

const insertHoldSQL = `INSERT INTO parley_quota_holds
(id, user_id, estimate, daily_start_ns, weekly_start_ns, monthly_start_ns, expires_at_ns)
VALUES ($1, $2, $3, $4, $5, $6, $7)`

// reserveSQLite reserves in one write transaction: lock and read the rows,
// let quota.Usage.Admit cap the hold (or refuse it, from the very rows it
// read), then hold it and record the hold.
func (l *Ledger) reserveSQLite(ctx context.Context, id, userID string, estimate int64, w *quota.Windows, starts [3]int64, expNs int64, lim [3]int64) (int64, error) {
	var held int64
	err := l.db.write(ctx, func(q querier) error {
		u := emptyUsage(userID, w, lim)
		rows, err := q.QueryContext(ctx, lockUsageSQL, userID, starts[0], starts[1], starts[2])
		if err != nil {
			return err
		}
		if err := scanUsage(rows, &u); err != nil {
			return err
		}
		if held, err = u.Admit(estimate); err != nil {
			return err // rolls back the rows lockUsageSQL made
		}
		if held > 0 {
			if _, err := q.ExecContext(ctx, holdSQL, userID, starts[0], starts[1], starts[2], held); err != nil {
				return err
			}
		}
		_, err = q.ExecContext(ctx, insertHoldSQL, id, userID, held, starts[0], starts[1], starts[2], expNs)
		return err
	})
	return held, err
}

// reservePostgresSQL is the whole reservation as one statement, so the
// usage rows stay locked only while the server runs it and commits, never
// across a round trip to the client:
//
//   - cur locks the user's existing rows in the fixed period order (FOR
//     UPDATE waits for a writer and then returns the row as it committed);
//   - amount applies quota.Usage.Admit's rule to them, a missing row being
//     empty: NULL if refused, else the estimate capped at the smallest room;
//   - upd adds it to the existing rows, ins inserts the missing ones holding
//     it, and hold records the hold;
//   - the statement returns the rows as cur read them and the amount.
//
// A row another transaction created after the statement's snapshot is
// neither locked nor inserted (ON CONFLICT DO NOTHING); then fewer than three
// rows hold the amount, the hold's id comes out NULL, and the NOT NULL
// constraint aborts the whole statement (23502): Reserve runs it again and
// sees the row. A refusal changes nothing and returns the rows that refused.
const reservePostgresSQL = `WITH cur AS (
  SELECT period, used, held FROM parley_quota_usage
  WHERE ` + currentRowsWhere + `
  ORDER BY CASE period WHEN 'daily' THEN 1 WHEN 'weekly' THEN 2 ELSE 3 END
  FOR UPDATE
), p AS (
  SELECT v.rank, v.period, v.start, v.lim, c.period IS NOT NULL AS present,
    COALESCE(c.used, 0) AS used, COALESCE(c.held, 0) AS held
  FROM (VALUES (1, 'daily', CAST($2 AS BIGINT), CAST($6 AS BIGINT)),
               (2, 'weekly', CAST($3 AS BIGINT), CAST($7 AS BIGINT)),
               (3, 'monthly', CAST($4 AS BIGINT), CAST($8 AS BIGINT))) AS v (rank, period, start, lim)
  LEFT JOIN cur AS c ON c.period = v.period
), amount AS (
  SELECT CASE
    WHEN CAST($5 AS BIGINT) = 0 THEN CAST(0 AS BIGINT)
    WHEN bool_and(lim < 0 OR lim - used - held > 0)
      THEN LEAST(CAST($5 AS BIGINT), COALESCE(MIN(lim - used - held) FILTER (WHERE lim >= 0), CAST($5 AS BIGINT)))
  END AS n FROM p
), upd AS (
  UPDATE parley_quota_usage AS u SET held = u.held + a.n
  FROM amount AS a, p
  WHERE a.n IS NOT NULL AND p.present
    AND u.user_id = $1 AND u.period = p.period AND u.period_start_ns = p.start
  RETURNING u.period
), ins AS (
  INSERT INTO parley_quota_usage (user_id, period, period_start_ns, used, held)
  SELECT $1, p.period, p.start, 0, a.n FROM p, amount AS a
  WHERE a.n IS NOT NULL AND NOT p.present
  ORDER BY p.rank
  ON CONFLICT (user_id, period, period_start_ns) DO NOTHING
  RETURNING period
), hold AS (
  INSERT INTO parley_quota_holds (id, user_id, estimate, daily_start_ns, weekly_start_ns, monthly_start_ns, expires_at_ns)
  SELECT CASE WHEN (SELECT COUNT(*) FROM upd) + (SELECT COUNT(*) FROM ins) = 3 THEN CAST($9 AS TEXT) END,
    $1, a.n, $2, $3, $4, $10
  FROM amount AS a WHERE a.n IS NOT NULL
)
SELECT p.period, p.used, p.held, a.n FROM p, amount AS a ORDER BY p.rank`

// reserveWholeSQL is Reserve's fast path on PostgreSQL, for the common case
// far from any limit: one conditional upsert over the three usage rows, in
// the fixed period order, holding the whole estimate. A missing row is
// inserted holding it (the caller checked that the estimate fits an empty
// period); an existing one is updated only if the whole estimate fits on
// top of what it uses and holds, a condition PostgreSQL evaluates on the
// latest committed row under the lock the upsert takes. If all three rows
// take it, every period had room for the whole estimate, so the capped hold
// quota.Usage.Admit would give is the estimate itself. Rows that do not fit
// are not returned; with fewer than three, the hold's id comes out NULL and
// the NOT NULL constraint aborts the statement (23502), holding nothing, and
// Reserve runs reservePostgresSQL, which caps or refuses.
const reserveWholeSQL = `WITH whole AS (
  INSERT INTO parley_quota_usage AS u (user_id, period, period_start_ns, used, held)
  VALUES ($1, 'daily', $2, 0, $5), ($1, 'weekly', $3, 0, $5), ($1, 'monthly', $4, 0, $5)
  ON CONFLICT (user_id, period, period_start_ns) DO UPDATE SET held = u.held + excluded.held
  WHERE ` + limitSQL + ` < 0 OR ` + limitSQL + ` - u.used - u.held >= excluded.held
  RETURNING period)
INSERT INTO parley_quota_holds (id, user_id, estimate, daily_start_ns, weekly_start_ns, monthly_start_ns, expires_at_ns)
SELECT CASE WHEN COUNT(*) = 3 THEN CAST($9 AS TEXT) END, $1, $5, $2, $3, $4, $10 FROM whole`

// limitSQL is the resolved limit of the row's period, passed as $6-$8.
const limitSQL = `(CASE u.period WHEN 'daily' THEN CAST($6 AS BIGINT) WHEN 'weekly' THEN CAST($7 AS BIGINT) ELSE CAST($8 AS BIGINT) END)`

// reserveAttempts bounds how often Reserve runs reservePostgresSQL again
// after it lost the race to create a usage row of a new period. The next
// attempt sees the row, so one more is nearly always enough.
const reserveAttempts = 8

func (l *Ledger) reservePostgres(ctx context.Context, id, userID string, estimate int64, w *quota.Windows, starts [3]int64, expNs int64, lim [3]int64) (int64, error) {
	fitsEmpty := true
	for _, n := range lim {
		fitsEmpty = fitsEmpty && (n < 0 || estimate <= n)
	}
	if fitsEmpty {
		err := l.db.retry(ctx, func() error {
			_, err := l.db.q().ExecContext(ctx, reserveWholeSQL,
				userID, starts[0], starts[1], starts[2], estimate, lim[0], lim[1], lim[2], id, expNs)
			return err
		})
		if err == nil {
			return estimate, nil
		}
		if sqltx.SQLState(err) != "23502" { // not_null_violation: see reserveWholeSQL
			return 0, err
		}
	}
	for range reserveAttempts {
		var u quota.Usage
		var held sql.NullInt64
		err := l.db.retry(ctx, func() error {
			u, held = emptyUsage(userID, w, lim), sql.NullInt64{}
			rows, err := l.db.q().QueryContext(ctx, reservePostgresSQL,
				userID, starts[0], starts[1], starts[2], estimate, lim[0], lim[1], lim[2], id, expNs)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var per string
				var used, h int64
				if err := rows.Scan(&per, &used, &h, &held); err != nil {
					return err
				}
				setRow(&u, per, used, h)
			}
			return rows.Err()
		})
		if sqltx.SQLState(err) == "23502" { // not_null_violation: see reservePostgresSQL
			continue
		}
		if err != nil {
			return 0, err
		}
		if held.Valid {
			return held.Int64, nil
		}
		// Refused: the rows as the statement locked them say why, and
		// Admit builds the same error every implementation returns.
		if _, err := u.Admit(estimate); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("sqlquota: reserve for %q: refused by the database but admitted by quota.Usage.Admit", userID)
	}
	return 0, fmt.Errorf("sqlquota: reserve for %q: lost the race to create usage rows %d times; try again", userID, reserveAttempts)
}

// Reserve implements quota.Ledger. The check, the cap and the hold are one
// atomic step: one statement on PostgreSQL, one write transaction on
// SQLite; see the package documentation.
func (l *Ledger) Reserve(ctx context.Context, userID string, estimate int64, now time.Time) (quota.Hold, error) {
	if err := ctx.Err(); err != nil {
		return quota.Hold{}, err
	}
	if err := checkUser("reserve", userID); err != nil {
		return quota.Hold{}, err
	}
	if estimate < 0 {
		return quota.Hold{}, fmt.Errorf("sqlquota: reserve: negative estimate %d: %w", estimate, quota.ErrInvalid)
	}
	w := l.windowsAt(now)
	starts, err := windowStarts(w, "reserve")
	if err != nil {
		return quota.Hold{}, err
	}
	expires := now.Add(l.ttl)
	expNs, err := nanos("reserve", expires)
	if err != nil {
		return quota.Hold{}, err
	}
	lim, err := l.limits(ctx, userID)
	if err != nil {
		return quota.Hold{}, fail(ctx, "reserve", err)
	}
	id := "h_" + rand.Text()
	var held int64
	if l.db.dialect == Postgres {
		held, err = l.reservePostgres(ctx, id, userID, estimate, w, starts, expNs, lim)
	} else {
		held, err = l.reserveSQLite(ctx, id, userID, estimate, w, starts, expNs, lim)
	}
	if errors.Is(err, quota.ErrExceeded) {
		return quota.Hold{}, err
	}
	if err != nil {
		return quota.Hold{}, fail(ctx, "reserve", err)
	}
	return quota.Hold{ID: id, UserID: userID, Estimate: held, ExpiresAt: expires}, nil
}

// limits returns userID's effective limits, shortest period first.
func (l *Ledger) limits(ctx context.Context, userID string) ([3]int64, error) {
	o, err := l.override(ctx, userID)
	if err != nil {
		return [3]int64{}, err
	}
	var lim [3]int64
	for i, per := range periods {
		lim[i] = l.policy.Limit(per, o)
	}
	return lim, nil
}

func (l *Ledger) override(ctx context.Context, userID string) (quota.Limits, error) {
	var d, w, m sql.NullInt64
	err := l.db.q().QueryRowContext(ctx,
		`SELECT daily, weekly, monthly FROM parley_quota_limits WHERE user_id = $1`, userID).Scan(&d, &w, &m)
	if errors.Is(err, sql.ErrNoRows) {
		return quota.Limits{}, nil
	}
	if err != nil {
		return quota.Limits{}, err
	}
	var o quota.Limits
	for _, f := range []struct {
		v   sql.NullInt64
		dst **int64
	}{{d, &o.Daily}, {w, &o.Weekly}, {m, &o.Monthly}} {
		if f.v.Valid {
			*f.dst = quota.Limit(f.v.Int64)
		}
	}
	return o, nil
}

// emptyUsage is userID's usage in w, with the given limits, before any row
// is read.
func emptyUsage(userID string, w *quota.Windows, lim [3]int64) quota.Usage {
	u := quota.Usage{UserID: userID}
	for i, pu := range [3]*quota.PeriodUsage{&u.Daily, &u.Weekly, &u.Monthly} {
		*pu = quota.PeriodUsage{Period: periods[i], Start: w[i].Start, ResetsAt: w[i].End, Limit: lim[i]}
	}
	return u
}

// setRow sets the used and held tokens of the period named per.
func setRow(u *quota.Usage, per string, used, held int64) {
	switch quota.Period(per) {
	case quota.Daily:
		u.Daily.Used, u.Daily.Held = used, held
	case quota.Weekly:
		u.Weekly.Used, u.Weekly.Held = used, held
	case quota.Monthly:
		u.Monthly.Used, u.Monthly.Held = used, held
	}
}

// scanUsage reads rows of (period, used, held) into u and closes them.
func scanUsage(rows *sql.Rows, u *quota.Usage) error {
	defer rows.Close()
	for rows.Next() {
		var per string
		var used, held int64
		if err := rows.Scan(&per, &used, &held); err != nil {
			return err
		}
		setRow(u, per, used, held)
	}
	return rows.Err()
}

// usage reads userID's rows of the periods in w, with the given limits.
func (l *Ledger) usage(ctx context.Context, userID string, w *quota.Windows, lim [3]int64) (quota.Usage, error) {
	starts, err := windowStarts(w, "usage")
	if err != nil {
		return quota.Usage{}, err
	}
	u := emptyUsage(userID, w, lim)
	// One statement, so the three rows come from one snapshot.
	rows, err := l.db.q().QueryContext(ctx, `SELECT period, used, held FROM parley_quota_usage
WHERE `+currentRowsWhere,
		userID, starts[0], starts[1], starts[2])
	if err != nil {
		return quota.Usage{}, err
	}
	if err := scanUsage(rows, &u); err != nil {
		return quota.Usage{}, err
	}
	return u, nil
}

// Settle implements quota.Ledger.
func (l *Ledger) Settle(ctx context.Context, h quota.Hold, actual int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if actual < 0 {
		return fmt.Errorf("sqlquota: settle: negative actual %d: %w", actual, quota.ErrInvalid)
	}
	return l.close(ctx, "settle", h, actual)
}

// Release implements quota.Ledger.
func (l *Ledger) Release(ctx context.Context, h quota.Hold) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return l.close(ctx, "release", h, 0)
}

// settleSQL moves a closed hold's estimate ($6) out of held and charges
// actual ($5), locking the rows in the fixed period order. A row is
// missing only if PruneUsage removed it; it is then made again with the
// charge alone.
const settleSQL = `INSERT INTO parley_quota_usage AS u (user_id, period, period_start_ns, used, held)
VALUES ($1, 'daily', $2, $5, 0), ($1, 'weekly', $3, $5, 0), ($1, 'monthly', $4, $5, 0)
ON CONFLICT (user_id, period, period_start_ns) DO UPDATE SET used = u.used + excluded.used, held = u.held - $6`

// close deletes the hold's row and applies it, atomically: the DELETE ...
// RETURNING is what makes at most one Settle, Release or Sweep take effect
// per hold, from any number of processes.
func (l *Ledger) close(ctx context.Context, op string, h quota.Hold, actual int64) error {
	var err error
	if l.db.dialect == Postgres {
		err = l.db.retry(ctx, func() error {
			rows, err := l.db.q().QueryContext(ctx, closePostgresSQL, h.ID, h.UserID, actual)
			if err != nil {
				return err
			}
			n := 0
			for rows.Next() {
				n++
			}
			if err := rows.Close(); err != nil {
				return err
			}
			if n == 0 {
				return fmt.Errorf("sqlquota: %s hold %q: %w", op, h.ID, quota.ErrHoldNotFound)
			}
			return nil
		})
	} else {
		err = l.db.write(ctx, func(q querier) error {
			var est int64
			var s [3]int64
			err := q.QueryRowContext(ctx, `DELETE FROM parley_quota_holds WHERE id = $1 AND user_id = $2
RETURNING estimate, daily_start_ns, weekly_start_ns, monthly_start_ns`, h.ID, h.UserID).Scan(&est, &s[0], &s[1], &s[2])
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("sqlquota: %s hold %q: %w", op, h.ID, quota.ErrHoldNotFound)
			}
			if err != nil {
				return err
			}
			_, err = q.ExecContext(ctx, settleSQL, h.UserID, s[0], s[1], s[2], actual, est)
			return err
		})
	}
	if errors.Is(err, quota.ErrHoldNotFound) {
		return err
	}
	return fail(ctx, op, err)
}

// Renew implements quota.Renewer: one UPDATE of the hold's row, which
// exists exactly while the hold is open.
func (l *Ledger) Renew(ctx context.Context, h quota.Hold, expiresAt time.Time) (quota.Hold, error) {
	if err := ctx.Err(); err != nil {
		return quota.Hold{}, err
	}
	expNs, err := nanos("renew", expiresAt)
	if err != nil {
		return quota.Hold{}, err
	}
	var est int64
	err = l.db.retry(ctx, func() error {
		if l.db.writes != nil {
			if err := l.db.writes.Lock(ctx); err != nil {
				return err
			}
			defer l.db.writes.Unlock()
		}
		return l.db.q().QueryRowContext(ctx, `UPDATE parley_quota_holds SET expires_at_ns = $3
WHERE id = $1 AND user_id = $2 RETURNING estimate`, h.ID, h.UserID, expNs).Scan(&est)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return quota.Hold{}, fmt.Errorf("sqlquota: renew hold %q: %w", h.ID, quota.ErrHoldNotFound)
	}
	if err != nil {
		return quota.Hold{}, fail(ctx, "renew", err)
	}
	return quota.Hold{ID: h.ID, UserID: h.UserID, Estimate: est, ExpiresAt: expiresAt}, nil
}

// closePostgresSQL is close as one statement: the hold's row is deleted and
// its usage rows updated (in the fixed period order) together, so the rows
// stay locked only while the server runs it. No row returned means the hold
// was not open.
const closePostgresSQL = `WITH h AS (
  DELETE FROM parley_quota_holds WHERE id = $1 AND user_id = $2
  RETURNING estimate, daily_start_ns, weekly_start_ns, monthly_start_ns)
INSERT INTO parley_quota_usage AS u (user_id, period, period_start_ns, used, held)
SELECT $2, v.period, CASE v.rank WHEN 1 THEN h.daily_start_ns WHEN 2 THEN h.weekly_start_ns ELSE h.monthly_start_ns END, $3, 0
FROM h CROSS JOIN (VALUES (1, 'daily'), (2, 'weekly'), (3, 'monthly')) AS v (rank, period)
ORDER BY v.rank
ON CONFLICT (user_id, period, period_start_ns) DO UPDATE SET used = u.used + excluded.used, held = u.held - (SELECT estimate FROM h)
RETURNING period`

// Usage implements quota.Ledger.
func (l *Ledger) Usage(ctx context.Context, userID string, now time.Time) (quota.Usage, error) {
	if err := ctx.Err(); err != nil {
		return quota.Usage{}, err
	}
	if err := checkUser("usage", userID); err != nil {
		return quota.Usage{}, err
	}
	lim, err := l.limits(ctx, userID)
	if err != nil {
		return quota.Usage{}, fail(ctx, "usage", err)
	}
	u, err := l.usage(ctx, userID, l.windowsAt(now), lim)
	if err != nil {
		return quota.Usage{}, fail(ctx, "usage", err)
	}
	return u, nil
}

// SetLimits implements quota.Ledger.
func (l *Ledger) SetLimits(ctx context.Context, userID string, lim quota.Limits) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkUser("set limits", userID); err != nil {
		return err
	}
	if err := lim.Validate(); err != nil {
		return fmt.Errorf("sqlquota: set limits: %w", err)
	}
	var err error
	if lim == (quota.Limits{}) {
		err = l.db.exec(ctx, `DELETE FROM parley_quota_limits WHERE user_id = $1`, userID)
	} else {
		arg := func(v *int64) any {
			if v == nil {
				return nil
			}
			return *v
		}
		err = l.db.exec(ctx, `INSERT INTO parley_quota_limits (user_id, daily, weekly, monthly) VALUES ($1, $2, $3, $4)
ON CONFLICT (user_id) DO UPDATE SET daily = excluded.daily, weekly = excluded.weekly, monthly = excluded.monthly`,
			userID, arg(lim.Daily), arg(lim.Weekly), arg(lim.Monthly))
	}
	return fail(ctx, "set limits", err)
}

// Limits implements quota.Ledger.
func (l *Ledger) Limits(ctx context.Context, userID string) (quota.Limits, error) {
	if err := ctx.Err(); err != nil {
		return quota.Limits{}, err
	}
	if err := checkUser("limits", userID); err != nil {
		return quota.Limits{}, err
	}
	o, err := l.override(ctx, userID)
	if err != nil {
		return quota.Limits{}, fail(ctx, "limits", err)
	}
	return o, nil
}

// sweepBatch is how many expired holds one Sweep transaction voids.
const sweepBatch = 500

// Sweep implements quota.Ledger. It voids expired holds in batches, each
// its own transaction; on PostgreSQL concurrent sweeps skip the holds
// another is voiding (or a Settle is closing) instead of waiting for them.
func (l *Ledger) Sweep(ctx context.Context, now time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	nowNs, err := nanos("sweep", now)
	if err != nil {
		return 0, err
	}
	total := 0
	for {
		n, err := l.sweepBatch(ctx, nowNs)
		total += n
		if err != nil {
			return total, fail(ctx, "sweep", err)
		}
		if n < sweepBatch {
			return total, nil
		}
	}
}

// delta is what voiding holds takes out of one usage row.
type delta struct {
	user   string
	period int // index into periods
	start  int64
	held   int64
}

func (l *Ledger) sweepBatch(ctx context.Context, nowNs int64) (int, error) {
	lock := ""
	if l.db.dialect == Postgres {
		lock = ` FOR UPDATE SKIP LOCKED`
	}
	// Deleting first both claims the holds (the statement writes, so on
	// SQLite it takes the write lock before reading) and reads them.
	q := `DELETE FROM parley_quota_holds WHERE id IN (
  SELECT id FROM parley_quota_holds WHERE expires_at_ns <= $1 ORDER BY id LIMIT $2` + lock + `)
RETURNING user_id, estimate, daily_start_ns, weekly_start_ns, monthly_start_ns`
	var swept int
	err := l.db.write(ctx, func(tx querier) error {
		swept = 0
		rows, err := tx.QueryContext(ctx, q, nowNs, sweepBatch)
		if err != nil {
			return err
		}
		sums := map[delta]int64{}
		for rows.Next() {
			var user string
			var est int64
			var s [3]int64
			if err := rows.Scan(&user, &est, &s[0], &s[1], &s[2]); err != nil {
				rows.Close()
				return err
			}
			swept++
			for i := range periods {
				sums[delta{user: user, period: i, start: s[i]}] += est
			}
		}
		if err := rows.Close(); err != nil {
			return err
		}
		// Lock the rows in one global order (user, period, start), the
		// order a single Reserve or Settle follows for its own user.
		ds := make([]delta, 0, len(sums))
		for d, held := range sums {
			d.held = held
			ds = append(ds, d)
		}
		slices.SortFunc(ds, func(a, b delta) int {
			return cmp.Or(strings.Compare(a.user, b.user), cmp.Compare(a.period, b.period), cmp.Compare(a.start, b.start))
		})
		for _, d := range ds {
			if _, err := tx.ExecContext(ctx, `UPDATE parley_quota_usage SET held = held - $1
WHERE user_id = $2 AND period = $3 AND period_start_ns = $4`, d.held, d.user, string(periods[d.period]), d.start); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return swept, nil
}

// PruneUsage deletes the usage rows of periods that ended at or before
// cutoff and hold nothing, and reports how many it deleted. Usage rows are
// the ledger's history (a few rows per active user per day); nothing needs
// them once their period is over, so a host may prune, for instance
// monthly, with a cutoff some months back. Settling a hold whose rows were
// pruned charges a fresh row.
func (l *Ledger) PruneUsage(ctx context.Context, cutoff time.Time) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	var n int64
	for _, per := range periods {
		// Every row starting before the period that contains cutoff has
		// ended by cutoff; that period itself has not.
		first, err := nanos("prune usage", per.Start(cutoff, l.loc))
		if err != nil {
			return n, err
		}
		k, err := l.db.count(ctx, `DELETE FROM parley_quota_usage WHERE period = $1 AND period_start_ns < $2 AND held = 0`,
			string(per), first)
		if err != nil {
			return n, fail(ctx, "prune usage", err)
		}
		n += k
	}
	return n, nil
}
