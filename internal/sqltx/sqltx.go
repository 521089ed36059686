package sqltx

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"reflect"
	"time"
)

// WriteLock queues one process's SQLite writers, so they wait for each
// other in Go instead of spinning through SQLite's busy timeout. Make it
// with make(WriteLock, 1).
type WriteLock chan struct{}

// Lock waits for the lock or for ctx to end.
func (l WriteLock) Lock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case l <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Unlock releases the lock.
func (l WriteLock) Unlock() { <-l }

// Immediate runs f in a SQLite BEGIN IMMEDIATE transaction on a connection
// of its own: the database's write lock is taken before f reads anything,
// so what f reads stays true until it commits, even against other
// processes. f's error rolls back. The rollback runs even when ctx is done,
// and a connection it cannot roll back is discarded, so no connection goes
// back to the pool inside a transaction.
func Immediate(ctx context.Context, db *sql.DB, f func(*sql.Conn) error) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return err
	}
	if err = f(conn); err == nil {
		if _, err = conn.ExecContext(ctx, "COMMIT"); err == nil {
			return nil
		}
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, rerr := conn.ExecContext(rctx, "ROLLBACK"); rerr != nil {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	return err
}

// Write runs f in a write transaction on db and commits it; f's error
// rolls back. On PostgreSQL it is an ordinary READ COMMITTED transaction
// (f locks what it must). On SQLite it waits its turn in writes, the
// component's queue of writers, then runs f after BEGIN IMMEDIATE (see
// Immediate), so that what f reads stays true until it commits, even
// against other processes.
func Write(ctx context.Context, db *sql.DB, postgres bool, writes WriteLock, f func(Querier) error) error {
	if postgres {
		return Tx(ctx, db, func(tx *sql.Tx) error { return f(tx) })
	}
	if err := writes.Lock(ctx); err != nil {
		return err
	}
	defer writes.Unlock()
	return Immediate(ctx, db, func(c *sql.Conn) error { return f(c) })
}

// Tx runs f in a transaction with db's default isolation and commits it;
// f's error rolls back.
func Tx(ctx context.Context, db *sql.DB, f func(*sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// Exec runs q on db and returns how many rows it affected, read while it
// still holds the connection q ran on. The sql.Result of db.ExecContext
// reads that count under the connection's lock after the connection is
// back in the pool, and another goroutine may have taken it by then: one
// that holds it in (*sql.Conn).Raw, as a LISTEN session does for as long
// as it listens, makes the count wait as long. When the driver says the
// statement was not sent (driver.ErrBadConn), Exec tries again, twice at
// most, as db.ExecContext does; its tries take any connection of the
// pool, where db.ExecContext's last one opens a new connection, which
// db.Conn cannot ask for.
func Exec(ctx context.Context, db *sql.DB, q string, args ...any) (int64, error) {
	for try := 0; ; try++ {
		n, err := execOn(ctx, db, q, args)
		if errors.Is(err, driver.ErrBadConn) && try < badConnRetries {
			continue
		}
		return n, err
	}
}

// badConnRetries is how often Exec tries again, as database/sql does.
const badConnRetries = 2

// testHookExecuted, when set, runs between a statement of Exec and the
// reading of its count.
var testHookExecuted func()

func execOn(ctx context.Context, db *sql.DB, q string, args []any) (int64, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	res, err := conn.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	if testHookExecuted != nil {
		testHookExecuted()
	}
	return res.RowsAffected()
}

// Querier is what *sql.DB, *sql.Tx and *sql.Conn have in common.
type Querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// DriverDialect names the dialect of a database/sql driver Parley knows:
// "sqlite" for modernc.org/sqlite, "postgres" for pgx's stdlib driver, ""
// for any other.
func DriverDialect(drv driver.Driver) string {
	t := reflect.TypeOf(drv)
	if t == nil {
		return ""
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.PkgPath() {
	case "modernc.org/sqlite":
		return "sqlite"
	case "github.com/jackc/pgx/v5/stdlib":
		return "postgres"
	}
	return ""
}

// SQLState returns the SQLSTATE code of a PostgreSQL error, from a driver
// whose errors have a SQLState method, as pgx's (and lib/pq's) do, so that
// no Parley package imports a driver; "" for any other error.
func SQLState(err error) string {
	if se, ok := errors.AsType[interface {
		error
		SQLState() string
	}](err); ok {
		return se.SQLState()
	}
	return ""
}
