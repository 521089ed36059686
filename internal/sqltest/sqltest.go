package sqltest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"github.com/parleyhq/parley/internal/testnote"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // driver "pgx"
	_ "modernc.org/sqlite"             // driver "sqlite"
)

// PostgresEnv names the variable holding the PostgreSQL test server's DSN,
// e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable.
const PostgresEnv = "PARLEY_TEST_POSTGRES_DSN"

// SQLiteDSN is the modernc.org/sqlite data source name the tests use for a
// file: a busy timeout so concurrent connections wait for each other instead
// of failing with SQLITE_BUSY, WAL so readers never wait for a writer, and
// foreign keys on.
func SQLiteDSN(path string) string {
	return "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)"
}

// SQLiteFile opens a new SQLite database in a file under t.TempDir, closed
// when the test ends.
func SQLiteFile(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", SQLiteDSN(filepath.Join(t.TempDir(), "parley.db")))
	if err != nil {
		t.Fatalf("sqltest: open sqlite file: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// SQLiteMemory opens a new in-memory SQLite database, closed when the test
// ends. Every connection to ":memory:" is a database of its own, so the pool
// is held to one connection that is never recycled: all callers share it,
// one at a time.
func SQLiteMemory(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", ":memory:?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatalf("sqltest: open sqlite memory: %v", err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	t.Cleanup(func() { db.Close() })
	return db
}

// PostgresDSN creates a fresh schema in the database named by
// PARLEY_TEST_POSTGRES_DSN and returns a DSN whose connections use it (its
// search_path is set as a connection parameter, so every connection of a
// pool, and of another process given the DSN, lands in the schema). The
// schema is dropped when the test ends, after the cleanups registered later
// (such as closing the pools opened on it) have run. Without the variable
// the test is skipped.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	base, admin := adminFromEnv(t)
	schema := "parley_test_" + randomHex(8)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("sqltest: create schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE"); err != nil {
			t.Errorf("sqltest: drop schema %s: %v", schema, err)
		}
	})
	dsn, err := withSearchPath(base, schema)
	if err != nil {
		t.Fatalf("sqltest: %v", err)
	}
	return dsn
}

// PoolConns caps every pool OpenPostgres opens. CI runs four test binaries
// at once (go test -p 4), and the PostgreSQL suites among them share the
// server's default max_connections of 100: uncapped, one suite's 32
// concurrent deciders and another's 64 concurrent streams took every
// connection, and a third suite's connections were refused with "too many
// clients already". A test that races more goroutines than this still
// races this many transactions; the rest wait for a connection, as they
// would behind a host's pool.
const PoolConns = 8

// OpenPostgres opens dsn with the pgx driver, at most PoolConns
// connections at once, closed when the test ends. A test may set its own
// cap on the pool it gets.
func OpenPostgres(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatalf("sqltest: open PostgreSQL: %v", err)
	}
	db.SetMaxOpenConns(PoolConns)
	t.Cleanup(func() { db.Close() })
	return db
}

// Postgres returns a pool on a fresh schema of its own (see PostgresDSN), or
// skips the test when PARLEY_TEST_POSTGRES_DSN is not set.
func Postgres(t testing.TB) *sql.DB {
	t.Helper()
	return OpenPostgres(t, PostgresDSN(t))
}

// One administrative pool per base DSN for the whole test binary: creating
// and dropping schemas must not cost a connection setup each.
var (
	adminMu  sync.Mutex
	adminDBs = map[string]*sql.DB{}
)

func adminDB(dsn string) (*sql.DB, error) {
	adminMu.Lock()
	defer adminMu.Unlock()
	if db, ok := adminDBs[dsn]; ok {
		return db, nil
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxIdleConns(2)
	db.SetMaxOpenConns(PoolConns) // parallel tests creating schemas wait for one
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, err
	}
	adminDBs[dsn] = db
	return db, nil
}

// withSearchPath adds search_path to a DSN in URL or keyword/value form. pgx
// sends unknown parameters to the server as run-time parameters.
func withSearchPath(dsn, schema string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", fmt.Errorf("parse %s: %w", PostgresEnv, err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String(), nil
	}
	return dsn + " search_path=" + schema, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// adminFromEnv returns PARLEY_TEST_POSTGRES_DSN and a connection to it,
// skipping the test when the variable is not set.
func adminFromEnv(t testing.TB) (string, *sql.DB) {
	t.Helper()
	base := os.Getenv(PostgresEnv)
	if base == "" {
		testnote.Skip(t, "PostgreSQL suites", PostgresEnv+" is not set (e.g. "+PostgresEnv+"=postgres://postgres@127.0.0.1:5432/test?sslmode=disable)")
	}
	admin, err := adminDB(base)
	if err != nil {
		t.Fatalf("sqltest: connect to PostgreSQL: %v", err)
	}
	return base, admin
}
