package sqlstore_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/parleyhq/parley/internal/racesplit"
	"github.com/parleyhq/parley/internal/sqltest"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/sqlstore"
	"github.com/parleyhq/parley/store/storetest"
)

// backends are the databases every store test runs against. Each open
// returns a new, empty database: a file, a private memory database, or a
// PostgreSQL schema of its own (skipped without PARLEY_TEST_POSTGRES_DSN).
var backends = []struct {
	name string
	open func(testing.TB) *sql.DB
}{
	{"SQLiteFile", sqltest.SQLiteFile},
	{"SQLiteMemory", sqltest.SQLiteMemory},
	{"Postgres", sqltest.Postgres},
}

// sharedBackends are the databases the multi-instance tests run against.
// Each open returns an opener of new pools on one database of its own, so
// Stores over those pools stand for app instances sharing it. Postgres is
// skipped without PARLEY_TEST_POSTGRES_DSN.
var sharedBackends = []struct {
	name string
	open func(t *testing.T) func() *sql.DB
}{
	{"SQLiteFile", func(t *testing.T) func() *sql.DB {
		path := filepath.Join(t.TempDir(), "shared.db")
		return func() *sql.DB { return openSQLite(t, sqltest.SQLiteDSN(path)) }
	}},
	{"Postgres", func(t *testing.T) func() *sql.DB {
		dsn := sqltest.PostgresDSN(t)
		return func() *sql.DB { return sqltest.OpenPostgres(t, dsn) }
	}},
}

// migrated returns a migrated Store over db.
func migrated(t testing.TB, db *sql.DB) *sqlstore.Store {
	t.Helper()
	s, err := sqlstore.New(db, sqlstore.Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return s
}

func TestConformance(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			// The backends share nothing: SQLite waits on its own file and
			// CPU, PostgreSQL on the server.
			t.Parallel()
			open := b.open
			if b.name != "Postgres" {
				racesplit.Skip(t) // the SQLite driver is C translated to Go: ten times slower under -race
			} else {
				sqltest.PostgresDSN(t) // skip the whole group without a server
				// Each subtest gets an empty, migrated schema; migrating a
				// new one for each of the suite's 150 would take minutes.
				open = sqltest.PostgresReused
			}
			storetest.Run(t, func(t *testing.T) store.Store { return migrated(t, open(t)) })
		})
	}
}

func TestMain(m *testing.M) { sqltest.Main(m) }
