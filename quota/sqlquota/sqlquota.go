package sqlquota

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/parleyhq/parley/internal/sqltx"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parleyhq/parley/quota"
)

// Dialect names the SQL dialect of a database.
type Dialect string

// The supported dialects; the same names as store/sqlstore's.
const (
	SQLite   Dialect = "sqlite"   // modernc.org/sqlite, driver name "sqlite"
	Postgres Dialect = "postgres" // github.com/jackc/pgx/v5/stdlib, driver name "pgx"
)

// Options configures a Ledger. The zero value detects the dialect from the
// driver.
type Options struct {
	// Dialect of the database. Empty: detected from db's driver
	// (modernc.org/sqlite: SQLite; github.com/jackc/pgx/v5/stdlib:
	// Postgres). Other drivers must name it.
	Dialect Dialect
}

// db is what a Ledger, its SpendLedger and its RateLimiter share: the
// host's pool, its dialect and, on SQLite, the in-process write queue.
type db struct {
	sql     *sql.DB
	dialect Dialect
	// writes serializes write transactions on SQLite (capacity 1): SQLite
	// has one writer at a time, and waiting here, with the caller's
	// context, beats spinning on SQLITE_BUSY. Nil on PostgreSQL.
	writes sqltx.WriteLock
	// stmts caches prepared statements by query text on SQLite, where
	// parsing a statement costs more than running it; database/sql keeps
	// one prepared instance per connection. PostgreSQL's driver (pgx)
	// caches its own.
	stmts sync.Map // string -> *sql.Stmt
	// retries counts transactions PostgreSQL aborted (deadlock,
	// serialization failure) and that were run again; for tests and
	// benchmarks.
	retries atomic.Int64
}

func openDB(sdb *sql.DB, opts Options) (*db, error) {
	if sdb == nil {
		return nil, errors.New("sqlquota: New: nil *sql.DB")
	}
	d := opts.Dialect
	if d == "" {
		d = Dialect(sqltx.DriverDialect(sdb.Driver()))
		if d == "" {
			return nil, fmt.Errorf("sqlquota: New: cannot tell the dialect of driver %T; set Options.Dialect", sdb.Driver())
		}
	}
	b := &db{sql: sdb, dialect: d}
	switch d {
	case SQLite:
		b.writes = make(sqltx.WriteLock, 1)
	case Postgres:
	default:
		return nil, fmt.Errorf("sqlquota: New: unknown dialect %q", d)
	}
	return b, nil
}

// querier is what *sql.DB, *sql.Tx and *sql.Conn have in common.
type querier = sqltx.Querier

// Queries are written with PostgreSQL's numbered placeholders ($1, $2, ...),
// which modernc.org/sqlite also binds by number, so one text serves both
// dialects and a parameter may be used twice.

// count runs one writing statement outside a transaction, like exec, and
// returns the rows it affected, read before the connection goes back to
// the pool (sqltx.Exec): a connection another component holds in
// (*sql.Conn).Raw, as the store's LISTEN sessions do on a shared pool,
// would make a sql.Result's count wait as long.
func (b *db) count(ctx context.Context, q string, args ...any) (int64, error) {
	if b.writes != nil {
		if err := b.writes.Lock(ctx); err != nil {
			return 0, err
		}
		defer b.writes.Unlock()
	}
	return sqltx.Exec(ctx, b.sql, q, args...)
}

// exec runs one writing statement outside a transaction; on SQLite it
// waits its turn among this ledger's writers. It returns no sql.Result, so
// that no caller reads a count from one (count says why).
func (b *db) exec(ctx context.Context, q string, args ...any) error {
	if b.writes != nil {
		if err := b.writes.Lock(ctx); err != nil {
			return err
		}
		defer b.writes.Unlock()
	}
	_, err := b.q().ExecContext(ctx, q, args...)
	return err
}

// maxAttempts bounds how often a transaction PostgreSQL aborted as a
// deadlock victim or serialization failure is run again.
const maxAttempts = 8

// write runs f in a write transaction and commits it; f's error rolls back.
//
// On PostgreSQL it is an ordinary READ COMMITTED transaction: f's
// statements lock the rows they change (always in the same order, so two
// writers cannot deadlock), and a transaction the server aborts anyway
// (deadlock_detected, serialization_failure under a stricter default
// isolation) is run again from the start, f included.
//
// On SQLite, f's first statement must write (every caller's does): a
// transaction whose first statement writes takes the database's write lock
// before it reads anything, waiting through the busy timeout, exactly as
// BEGIN IMMEDIATE would, so what f reads stays true until it commits, even
// against other processes. (A plain BEGIN lets the driver's transaction
// reuse prepared statements, which a BEGIN IMMEDIATE on a *sql.Conn
// cannot.)
func (b *db) write(ctx context.Context, f func(q querier) error) error {
	if b.dialect == SQLite {
		if err := b.writes.Lock(ctx); err != nil {
			return err
		}
		defer b.writes.Unlock()
		var missed []string
		err := sqltx.Tx(ctx, b.sql, func(tx *sql.Tx) error { return f(runner{b: b, tx: tx, missed: &missed}) })
		b.prepareMissed(ctx, missed)
		return err
	}
	return b.retry(ctx, func() error { return sqltx.Tx(ctx, b.sql, func(tx *sql.Tx) error { return f(tx) }) })
}

// q returns the querier for statements outside a transaction.
func (b *db) q() querier {
	if b.dialect == SQLite {
		return runner{b: b}
	}
	return b.sql
}

// runner runs statements on SQLite through the statement cache, in tx if
// it is set. A statement not yet prepared is run as text inside a
// transaction (preparing it on the pool could wait for the very connection
// the transaction holds, the only one of an in-memory database) and
// prepared once the transaction is over.
type runner struct {
	b      *db
	tx     *sql.Tx
	missed *[]string
}

func (r runner) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := r.b.stmts.Load(query); ok {
		if r.tx != nil {
			return r.tx.StmtContext(ctx, st.(*sql.Stmt)), nil
		}
		return st.(*sql.Stmt), nil
	}
	if r.tx != nil {
		*r.missed = append(*r.missed, query)
		return nil, nil
	}
	return r.b.prepare(ctx, query)
}

func (b *db) prepare(ctx context.Context, query string) (*sql.Stmt, error) {
	st, err := b.sql.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if prev, loaded := b.stmts.LoadOrStore(query, st); loaded {
		st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

func (b *db) prepareMissed(ctx context.Context, queries []string) {
	for _, q := range queries {
		if _, ok := b.stmts.Load(q); !ok {
			b.prepare(ctx, q) // a failure leaves the statement unprepared
		}
	}
}

func (r runner) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := r.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return r.tx.ExecContext(ctx, query, args...)
	}
	return st.ExecContext(ctx, args...)
}

func (r runner) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := r.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return r.tx.QueryContext(ctx, query, args...)
	}
	return st.QueryContext(ctx, args...)
}

func (r runner) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := r.stmt(ctx, query)
	if err != nil {
		// *sql.Row carries no error of its own making; a failed prepare
		// runs the text, which fails the same way.
		return r.b.sql.QueryRowContext(ctx, query, args...)
	}
	if st == nil {
		return r.tx.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// retry runs f, a transaction or a single statement on PostgreSQL, again
// while the server aborts it as a deadlock victim or serialization failure.
func (b *db) retry(ctx context.Context, f func() error) error {
	for attempt := 1; ; attempt++ {
		err := f()
		if err == nil || attempt == maxAttempts || !retryable(err) || ctx.Err() != nil {
			return err
		}
		b.retries.Add(1)
		// Jittered backoff so the transactions that collided do not collide
		// again in lock step.
		d := time.Duration(rand.Int64N(int64(attempt) * int64(2*time.Millisecond)))
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Instants are stored as Unix nanoseconds, which int64 holds for the years
// 1678 to 2262; the ledger accepts a margin inside that.
const minYear, maxYear = 1700, 2200

// nanos returns t as stored, or an error wrapping quota.ErrInvalid.
func nanos(op string, t time.Time) (int64, error) {
	if y := t.Year(); y < minYear || y > maxYear {
		return 0, fmt.Errorf("sqlquota: %s: time %s outside the years %d to %d: %w", op, t.Format(time.RFC3339), minYear, maxYear, quota.ErrInvalid)
	}
	return t.UnixNano(), nil
}

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }
