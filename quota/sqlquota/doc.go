// Package sqlquota is the quota package's durable implementation: a
// quota.Ledger (token budgets with holds), a quota.SpendLedger (rolling
// spend caps) and a quota.RateLimiter (tool-call rates) over database/sql,
// for SQLite and PostgreSQL. It takes the host's *sql.DB, which the host
// opens, tunes and closes, and passes the quota/quotatest conformance
// suites on both dialects.
//
//	db, err := sql.Open("pgx", os.Getenv("PARLEY_DATABASE_URL"))
//	...
//	ledger, err := sqlquota.New(db, quota.Policy{Defaults: quota.Limits{Daily: quota.Limit(200_000)}}, sqlquota.Options{})
//	...
//	if err := ledger.Migrate(ctx); err != nil { ... } // once, at start
//	spend, tools := ledger.SpendLedger(), ledger.RateLimiter()
//
// Every process sharing the database shares the budgets, caps and rates:
// that is how Parley runs on several app instances. All of them must use
// the same Policy.
//
// # Dialects
//
// New detects the dialect from the driver: modernc.org/sqlite (driver name
// "sqlite") is SQLite, github.com/jackc/pgx/v5/stdlib ("pgx") is
// PostgreSQL; another driver needs Options.Dialect. The package imports no
// driver. It needs PostgreSQL 11 or later and SQLite 3.35 or later (UPSERT
// and RETURNING), which modernc.org/sqlite bundles. On SQLite, open the
// database with a busy timeout and WAL, as for store/sqlstore; WAL with
// synchronous=NORMAL is the usual production setting.
//
// Instants (period starts, hold expiry, spend and call times) are stored as
// BIGINT Unix nanoseconds, so windows such as (now - Per, now] compare
// exactly as the quota package specifies, on both dialects; times outside
// the years 1700 to 2200 are quota.ErrInvalid.
//
// # Tables and migrations
//
// parley_quota_usage holds one row per (user, period, period start) with
// used and held tokens: a new period is a new row starting at zero, with no
// reset job. parley_quota_holds holds one row per open hold (estimate, the
// three period starts, expiry), parley_quota_limits the per-user overrides
// (NULL: unset). parley_quota_spend, parley_quota_spend_windows,
// parley_quota_rate_keys and parley_quota_rate_calls back the SpendLedger
// and the RateLimiter.
//
// The schema is embedded and applied only by an explicit Migrate:
// idempotent, and safe when several instances start at once (PostgreSQL: a
// transaction-scoped advisory lock per schema; SQLite: BEGIN IMMEDIATE).
// Versions are recorded in parley_schema_migrations, the table store/sqlstore
// uses, under the component "quota". A database migrated by a newer Parley
// is refused with ErrSchemaTooNew; methods on a database never migrated
// return errors wrapping ErrNotMigrated.
//
// # Admission
//
// Reserve resolves the user's limits (override, else default, else
// unlimited), then runs one conditional upsert over the user's three usage
// rows, daily, weekly, monthly in that order:
//
//	INSERT INTO parley_quota_usage AS u (user_id, period, period_start_ns, used, held)
//	VALUES ($1, 'daily', $2, 0, $5), ($1, 'weekly', $3, 0, $5), ($1, 'monthly', $4, 0, $5)
//	ON CONFLICT (user_id, period, period_start_ns) DO UPDATE SET held = u.held + excluded.held
//	WHERE limit < 0 OR limit - u.used - u.held >= excluded.held
//	RETURNING period
//
// The condition is evaluated by the database on the row it has locked, in
// its latest committed version, so there is no window between check and
// update and no lost update, across any number of processes. Fewer than
// three rows returned means some period had no room: the whole reservation
// is undone and Reserve returns the *quota.ExceededError that Usage.Check
// builds from the rows as they then are. On PostgreSQL the upsert and the
// hold's row are one statement (a data-modifying WITH; a NOT NULL
// violation on the hold's id undoes it when there is no room), so the rows
// stay locked only while the server runs it, never across a round trip to
// the client; on SQLite they are one write transaction.
//
// Settle and Release delete the hold's row with DELETE ... RETURNING and,
// in the same statement (PostgreSQL) or transaction (SQLite), move its
// estimate out of held and charge the actual tokens: a hold is closed at
// most once, whoever races to close it; a hold not found is
// quota.ErrHoldNotFound. Sweep does the same for expired holds, in batches
// (PostgreSQL: FOR UPDATE SKIP LOCKED, so concurrent sweepers split the
// work). PruneUsage deletes the rows of periods long over.
//
// # Concurrency
//
// Everything is safe for concurrent use by many goroutines and processes.
// Every statement locks usage rows in one global order (user, then daily,
// weekly, monthly, then period start), so writers never deadlock one
// another; should PostgreSQL abort a transaction anyway (deadlock_detected,
// or serialization_failure under a stricter default isolation), it is run
// again, a few times, with jitter. On SQLite one connection writes at a
// time: a Ledger queues its writers in process (honouring their contexts)
// and each transaction takes the write lock with its first statement; other
// processes' writers wait through the busy timeout.
//
// Admissions for one user serialize on that user's rows: with
// PostgreSQL's default synchronous_commit, one user's turns are admitted at
// the rate the server flushes its log. Different users do not contend.
//
// # Spend caps and rate limits
//
// The SpendLedger stores one row per recorded model call and sums the
// window in SQL; records older than the longest window Allow has named for
// a key (an hour before any) are pruned as Record goes and by Prune. The
// RateLimiter keeps a log of counted calls per key: Take locks the key (its
// row on PostgreSQL, the write lock on SQLite), prunes, counts and logs in
// one transaction, so concurrent Takes never count past the rate.
//
// # Errors
//
// Methods return the quota package's errors for the conditions it
// documents (quota.ErrExceeded as *quota.ExceededError, ErrHoldNotFound,
// ErrInvalid, *SpendCapError, *RateLimitError). When the context ends, the
// error wraps ctx.Err(). Anything else is an infrastructure error with the
// driver's error in its chain; a failed method changes nothing.
package sqlquota
