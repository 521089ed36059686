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

	"github.com/parleyhq/parley/quota"
)

var _ quota.Ledger = (*Ledger)(nil)

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

// errNoRoom rolls back a reservation that did not fit some period.
var errNoRoom = errors.New("sqlquota: no room")

// The conditional hold: one upsert over the three usage rows, in the fixed
// period order. A missing row is inserted holding the estimate (New checked
// that the estimate fits an empty period); an existing one is updated only
// if the estimate fits on top of what it uses and holds. PostgreSQL
// evaluates that condition on the latest committed row, under the row lock
// the upsert takes, so there is no window between check and update. Rows
// that do not fit are not returned: fewer than three rows means refuse.
const reserveSQL = `INSERT INTO parley_quota_usage AS u (user_id, period, period_start_ns, used, held)
VALUES ($1, 'daily', $2, 0, $5), ($1, 'weekly', $3, 0, $5), ($1, 'monthly', $4, 0, $5)
ON CONFLICT (user_id, period, period_start_ns) DO UPDATE SET held = u.held + excluded.held
WHERE ` + limitSQL + ` < 0 OR ` + limitSQL + ` - u.used - u.held >= excluded.held
RETURNING period`

// limitSQL is the resolved limit of the row's period, passed as $6-$8.
const limitSQL = `(CASE u.period WHEN 'daily' THEN CAST($6 AS BIGINT) WHEN 'weekly' THEN CAST($7 AS BIGINT) ELSE CAST($8 AS BIGINT) END)`

const insertHoldSQL = `INSERT INTO parley_quota_holds
(id, user_id, estimate, daily_start_ns, weekly_start_ns, monthly_start_ns, expires_at_ns)
VALUES ($1, $2, $3, $4, $5, $6, $7)`

// reservePostgresSQL is the whole reservation as one statement, so the
// usage rows stay locked only while the server runs it and commits, never
// across a round trip to the client. The upsert runs first (a data-modifying
// WITH runs to completion); if it held fewer than three rows, the hold's id
// comes out NULL, the NOT NULL constraint aborts the statement, and with it
// the rows it did hold. That error (23502) is how "no room" comes back.
const reservePostgresSQL = `WITH room AS (` + reserveSQL + `)
INSERT INTO parley_quota_holds (id, user_id, estimate, daily_start_ns, weekly_start_ns, monthly_start_ns, expires_at_ns)
SELECT CASE WHEN COUNT(*) = 3 THEN CAST($9 AS TEXT) END, $1, $5, $2, $3, $4, $10 FROM room`

// hold records hold id and holds estimate in the three periods, or returns
// errNoRoom, holding nothing, if a period has no room for it.
func (l *Ledger) hold(ctx context.Context, id, userID string, estimate int64, starts [3]int64, expNs int64, lim [3]int64) error {
	if l.db.dialect == Postgres {
		return l.db.retry(ctx, func() error {
			_, err := l.db.q().ExecContext(ctx, reservePostgresSQL,
				userID, starts[0], starts[1], starts[2], estimate, lim[0], lim[1], lim[2], id, expNs)
			if sqlState(err) == "23502" { // not_null_violation: see reservePostgresSQL
				return errNoRoom
			}
			return err
		})
	}
	return l.db.write(ctx, func(q querier) error {
		if _, err := q.ExecContext(ctx, insertHoldSQL, id, userID, estimate, starts[0], starts[1], starts[2], expNs); err != nil {
			return err
		}
		rows, err := q.QueryContext(ctx, reserveSQL, userID, starts[0], starts[1], starts[2], estimate, lim[0], lim[1], lim[2])
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
		if n < len(periods) {
			return errNoRoom
		}
		return nil
	})
}

// reserveAttempts bounds how often Reserve tries again when a refusal
// turned out, on reading the usage, to fit after all (other turns settled
// in between).
const reserveAttempts = 8

// Reserve implements quota.Ledger. The check and the hold are one
// conditional upsert in one transaction with the hold's row; see the
// package documentation.
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
	for range reserveAttempts {
		lim, err := l.limits(ctx, userID)
		if err != nil {
			return quota.Hold{}, fail(ctx, "reserve", err)
		}
		fitsEmpty := true
		for _, n := range lim {
			fitsEmpty = fitsEmpty && (n < 0 || estimate <= n)
		}
		id := "h_" + rand.Text()
		if fitsEmpty {
			err = l.hold(ctx, id, userID, estimate, starts, expNs, lim)
			if err == nil {
				return quota.Hold{ID: id, UserID: userID, Estimate: estimate, ExpiresAt: expires}, nil
			}
			if !errors.Is(err, errNoRoom) {
				return quota.Hold{}, fail(ctx, "reserve", err)
			}
		}
		// Refused. The rows as they are now name the period to report;
		// Usage.Check picks it, as every implementation does.
		u, err := l.usage(ctx, userID, w, lim)
		if err != nil {
			return quota.Hold{}, fail(ctx, "reserve", err)
		}
		if err := u.Check(estimate); err != nil {
			return quota.Hold{}, err
		}
		// Holds closed between the refusal and the read: try again.
	}
	return quota.Hold{}, fmt.Errorf("sqlquota: reserve for %q: refused %d times while usage kept changing; try again", userID, reserveAttempts)
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

// usage reads userID's rows of the periods in w, with the given limits.
func (l *Ledger) usage(ctx context.Context, userID string, w *quota.Windows, lim [3]int64) (quota.Usage, error) {
	starts, err := windowStarts(w, "usage")
	if err != nil {
		return quota.Usage{}, err
	}
	u := quota.Usage{UserID: userID}
	pus := [3]*quota.PeriodUsage{&u.Daily, &u.Weekly, &u.Monthly}
	for i, pu := range pus {
		*pu = quota.PeriodUsage{Period: periods[i], Start: w[i].Start, ResetsAt: w[i].End, Limit: lim[i]}
	}
	// One statement, so the three rows come from one snapshot.
	rows, err := l.db.q().QueryContext(ctx, `SELECT period, used, held FROM parley_quota_usage
WHERE user_id = $1 AND ((period = 'daily' AND period_start_ns = $2)
  OR (period = 'weekly' AND period_start_ns = $3) OR (period = 'monthly' AND period_start_ns = $4))`,
		userID, starts[0], starts[1], starts[2])
	if err != nil {
		return quota.Usage{}, err
	}
	defer rows.Close()
	for rows.Next() {
		var per string
		var used, held int64
		if err := rows.Scan(&per, &used, &held); err != nil {
			return quota.Usage{}, err
		}
		if i := slices.Index(periods[:], quota.Period(per)); i >= 0 {
			pus[i].Used, pus[i].Held = used, held
		}
	}
	return u, rows.Err()
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
		_, err = l.db.exec(ctx, `DELETE FROM parley_quota_limits WHERE user_id = $1`, userID)
	} else {
		arg := func(v *int64) any {
			if v == nil {
				return nil
			}
			return *v
		}
		_, err = l.db.exec(ctx, `INSERT INTO parley_quota_limits (user_id, daily, weekly, monthly) VALUES ($1, $2, $3, $4)
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
		res, err := l.db.exec(ctx, `DELETE FROM parley_quota_usage WHERE period = $1 AND period_start_ns < $2 AND held = 0`,
			string(per), first)
		if err != nil {
			return n, fail(ctx, "prune usage", err)
		}
		k, _ := res.RowsAffected()
		n += k
	}
	return n, nil
}
