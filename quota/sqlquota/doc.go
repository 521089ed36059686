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
// unlimited), then, in one atomic step, locks the user's three usage rows,
// daily, weekly, monthly in that order, and applies quota.Usage.Admit's rule
// to them: a positive estimate is admitted while every limited period has
// used + held < limit, and holds the estimate capped at the smallest room
// left (a zero estimate is always admitted). The cap depends on all three
// rows, so they are locked together before it is computed; no other writer
// can change them in between, across any number of processes, so concurrent
// Reserves never hold more than a limit between them.
//
// On PostgreSQL, Reserve first tries the whole estimate, the fast path far
// from any limit: one conditional upsert that adds it to each row only if it
// fits whole (used + held + estimate <= limit, evaluated by the database on
// the row it has locked, in its latest committed version). If all three rows
// take it, the estimate fit everywhere, so it is the capped hold too. If
// not, a NOT NULL violation on the hold's id undoes the upsert within the
// same statement, and Reserve runs the capping step.
//
// The capping step is one statement as well: a CTE locks the existing rows
// (SELECT ... FOR UPDATE, which in READ COMMITTED returns each row as its
// last writer committed it), computes the hold in SQL, updates the rows,
// inserts missing ones holding it, and records the hold. The rows stay
// locked only while the server runs it, never across a round trip to the
// client. A refusal changes nothing and returns the rows it read, from which
// Reserve builds the *quota.ExceededError. A row another transaction created
// meanwhile aborts the statement (the same NOT NULL violation) and Reserve
// runs it again.
//
// On SQLite the step is one write transaction: an upsert that creates or
// touches the rows takes the write lock and returns them, quota.Usage.Admit
// computes the hold (or the refusal, from those very rows), and the rows and
// the hold are written.
//
// The hold's row keeps the held amount (its estimate column holds the
// capped value), which is what Settle, Release and Sweep take out of held.
//
// Settle and Release delete the hold's row with DELETE ... RETURNING and,
// in the same statement (PostgreSQL) or transaction (SQLite), move its
// estimate out of held and charge the actual tokens: a hold is closed at
// most once, whoever races to close it; a hold not found is
// quota.ErrHoldNotFound. Sweep does the same for expired holds, in batches
// (PostgreSQL: FOR UPDATE SKIP LOCKED, so concurrent sweepers split the
// work). Renew (quota.Renewer) updates the expiry of the hold's row, which
// exists exactly while the hold is open, so it cannot revive a closed one.
// PruneUsage deletes the rows of periods long over.
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
