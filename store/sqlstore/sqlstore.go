package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/parleyhq/parley/internal/sqltx"
	"strconv"
	"strings"
	"time"

	"github.com/parleyhq/parley/store"
)

var _ store.Store = (*Store)(nil)

// Dialect names the SQL dialect of a database.
type Dialect string

// The supported dialects.
const (
	SQLite   Dialect = "sqlite"   // modernc.org/sqlite, driver name "sqlite"
	Postgres Dialect = "postgres" // github.com/jackc/pgx/v5/stdlib, driver name "pgx"
)

// Errors of the SQL store itself; the store package's sentinels are returned
// for the conditions store documents.
var (
	// ErrSchemaTooNew: the database was migrated by a newer version of
	// Parley than this one. Migrate refuses to touch it.
	ErrSchemaTooNew = errors.New("sqlstore: schema too new")
	// ErrNotMigrated: the store's tables do not exist; call Migrate first.
	ErrNotMigrated = errors.New("sqlstore: database schema not migrated (call (*Store).Migrate)")
)

// Options configures a Store. The zero value detects the dialect from the
// driver and uses the system clock.
type Options struct {
	// Dialect of the database. Empty: detected from db's driver
	// (modernc.org/sqlite: SQLite; github.com/jackc/pgx/v5/stdlib:
	// Postgres). Other drivers must name it.
	Dialect Dialect
	// Now is the clock for the times the store fills in. Nil: time.Now.
	Now func() time.Time
}

// Store is a store.Store over a host's *sql.DB. Create it with New and
// bring the schema up to date with Migrate before use. It is safe for
// concurrent use, and many Stores (in many processes) may share a database.
type Store struct {
	db      *sql.DB
	dialect Dialect
	now     func() time.Time
	// writes serializes this Store's SQLite write transactions (capacity
	// 1): SQLite has one writer at a time, and waiting here, with the
	// caller's context, beats spinning on SQLITE_BUSY. Nil on PostgreSQL.
	writes sqltx.WriteLock
	relay  relay // store.Relay's subscriptions (relay.go)
}

// New returns a Store over db, which the host opened and keeps owning
// (Store never closes it). New does not touch the database: call Migrate.
func New(db *sql.DB, opts Options) (*Store, error) {
	if db == nil {
		return nil, errors.New("sqlstore: New: nil *sql.DB")
	}
	d := opts.Dialect
	if d == "" {
		d = Dialect(sqltx.DriverDialect(db.Driver()))
		if d == "" {
			return nil, fmt.Errorf("sqlstore: New: cannot tell the dialect of driver %T; set Options.Dialect", db.Driver())
		}
	}
	s := &Store{db: db, dialect: d, now: opts.Now}
	switch d {
	case SQLite:
		s.writes = make(sqltx.WriteLock, 1)
	case Postgres:
	default:
		return nil, fmt.Errorf("sqlstore: New: unknown dialect %q", d)
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

// Dialect reports the dialect the store speaks.
func (s *Store) Dialect() Dialect { return s.dialect }

// clock returns the store's now at the precision it stores.
func (s *Store) clock() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

// rebind turns the ? placeholders of a query into PostgreSQL's $1, $2, ...
// Queries are written with ? and never hold a literal question mark.
func (s *Store) rebind(q string) string {
	if s.dialect != Postgres || !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

// querier is what *sql.DB, *sql.Tx and *sql.Conn have in common.
type querier = sqltx.Querier

// exec runs one writing statement outside a transaction and returns the
// rows it affected. On SQLite it waits its turn among this Store's
// writers. The count is read before the connection goes back to the pool
// (sqltx.Exec), where the Store's own LISTEN sessions may take it and hold
// it for as long as they listen.
func (s *Store) exec(ctx context.Context, q string, args ...any) (int64, error) {
	if s.writes != nil {
		if err := s.writes.Lock(ctx); err != nil {
			return 0, err
		}
		defer s.writes.Unlock()
	}
	return sqltx.Exec(ctx, s.db, s.rebind(q), args...)
}

// write runs f in a write transaction: on PostgreSQL an ordinary READ
// COMMITTED transaction (f locks what it must); on SQLite BEGIN IMMEDIATE,
// which takes the database's write lock up front so that what f reads stays
// true until it commits, even against other processes. f's error rolls back.
func (s *Store) write(ctx context.Context, f func(q querier) error) error {
	return sqltx.Write(ctx, s.db, s.dialect == Postgres, s.writes, f)
}
