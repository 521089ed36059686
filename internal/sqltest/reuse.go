package sqltest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// migrationsTable is where internal/sqlmigrate records each schema's
// version; emptying a schema keeps its rows, so the next Migrate is a
// version check.
const migrationsTable = "parley_schema_migrations"

// The schemas PostgresReused made in this test binary, and those a
// finished test left empty for the next.
var (
	reuseMu   sync.Mutex
	reuseFree []string
	reuseAll  []string
)

// PostgresReused is Postgres for tests that each need an empty, migrated
// database, such as a conformance suite opening one per subtest; see
// ReusedPostgresDSN.
func PostgresReused(t testing.TB) *sql.DB {
	t.Helper()
	return OpenPostgres(t, ReusedPostgresDSN(t))
}

// ReusedPostgresDSN is PostgresDSN for tests that each need an empty,
// migrated database: the schema is one a finished test of this binary
// left, its tables emptied and its sequences restarted but still
// migrated, so migrating it again costs a version check instead of the
// whole DDL. Every caller in a test binary must run the same migrations.
// The schema is emptied and freed when the test ends, after the cleanups
// registered later (such as closing the pools opened on it); call
// DropReused from TestMain after m.Run. Without PARLEY_TEST_POSTGRES_DSN
// the test is skipped.
func ReusedPostgresDSN(t testing.TB) string {
	t.Helper()
	base, admin := adminFromEnv(t)
	schema, err := takeSchema(admin)
	if err != nil {
		t.Fatalf("sqltest: %v", err)
	}
	t.Cleanup(func() {
		if err := emptySchema(admin, schema); err != nil {
			t.Errorf("sqltest: empty schema %s: %v", schema, err)
			return // not reused; DropReused drops it
		}
		reuseMu.Lock()
		reuseFree = append(reuseFree, schema)
		reuseMu.Unlock()
	})
	dsn, err := withSearchPath(base, schema)
	if err != nil {
		t.Fatalf("sqltest: %v", err)
	}
	return dsn
}

// takeSchema returns a free schema, or creates one.
func takeSchema(admin *sql.DB) (string, error) {
	reuseMu.Lock()
	defer reuseMu.Unlock()
	if n := len(reuseFree); n > 0 {
		schema := reuseFree[n-1]
		reuseFree = reuseFree[:n-1]
		return schema, nil
	}
	schema := "parley_test_" + randomHex(8)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		return "", fmt.Errorf("create schema %s: %w", schema, err)
	}
	reuseAll = append(reuseAll, schema)
	return schema, nil
}

// emptySchema empties every table of schema but the migrations table, and
// restarts their sequences: what a test sees is a freshly migrated schema.
//
// It deletes the rows, in one statement so that a foreign key is checked
// once at its end whatever the order, and sets each sequence back with
// setval. TRUNCATE ... RESTART IDENTITY did the same in 110-120 ms for the
// store's and the ledger's 15 tables, as it gives every table, index and
// sequence a new file; this takes 5-7 ms, and a suite empties a schema
// after each of its subtests (the store's conformance suite, 150 of them).
// The dead rows it leaves are autovacuum's.
//
// Unlike TRUNCATE, DELETE fires the tables' delete triggers: the store's
// notifies the channel of deleted threads, which other packages' tests
// listen on in the same database, and a trigger could write rows of its
// own. So the statement runs with session_replication_role = replica,
// which fires no trigger, where the admin role may set it (a superuser,
// as the local test server's postgres is); elsewhere the triggers fire.
func emptySchema(admin *sql.DB, schema string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var tables, seqs []string
	rows, err := admin.QueryContext(ctx, `SELECT 't', tablename, 0 FROM pg_tables WHERE schemaname = $1 AND tablename <> $2
		UNION ALL SELECT 's', sequencename, start_value FROM pg_sequences WHERE schemaname = $1`, schema, migrationsTable)
	if err != nil {
		return err
	}
	for rows.Next() {
		var kind, name string
		var start int64
		if err := rows.Scan(&kind, &name, &start); err != nil {
			rows.Close()
			return err
		}
		q := pgx.Identifier{schema, name}.Sanitize()
		if kind == "t" {
			tables = append(tables, fmt.Sprintf("d%d AS (DELETE FROM %s)", len(tables), q))
		} else {
			seqs = append(seqs, fmt.Sprintf("setval('%s', %d, false)", strings.ReplaceAll(q, "'", "''"), start))
		}
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(tables) == 0 && len(seqs) == 0 {
		return nil
	}
	stmt := "SELECT 1"
	if len(seqs) > 0 {
		stmt = "SELECT " + strings.Join(seqs, ", ")
	}
	if len(tables) > 0 {
		stmt = "WITH " + strings.Join(tables, ", ") + " " + stmt
	}
	tx, err := admin.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if mayReplicate(ctx, admin) {
		if _, err := tx.ExecContext(ctx, "SET LOCAL session_replication_role = replica"); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, stmt); err != nil {
		return err
	}
	return tx.Commit()
}

// replicaRole caches, per admin pool, whether its role may set
// session_replication_role.
var replicaRole sync.Map // *sql.DB -> bool

// mayReplicate reports whether admin's role may set
// session_replication_role: whether it is a superuser.
func mayReplicate(ctx context.Context, admin *sql.DB) bool {
	if v, ok := replicaRole.Load(admin); ok {
		return v.(bool)
	}
	var super string
	ok := admin.QueryRowContext(ctx, "SELECT current_setting('is_superuser')").Scan(&super) == nil && super == "on"
	replicaRole.Store(admin, ok)
	return ok
}

// Main is the TestMain of a test binary that uses PostgresReused: it runs
// the tests, then DropReused, and exits.
//
//	func TestMain(m *testing.M) { sqltest.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	if err := DropReused(); err != nil {
		fmt.Fprintln(os.Stderr, "sqltest:", err)
		code = 1
	}
	os.Exit(code)
}

// DropReused drops the schemas PostgresReused made in this test binary.
// Call it from TestMain after m.Run (Main does).
func DropReused() error {
	reuseMu.Lock()
	defer reuseMu.Unlock()
	base := os.Getenv(PostgresEnv)
	if base == "" || len(reuseAll) == 0 {
		return nil
	}
	admin, err := adminDB(base)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, schema := range reuseAll {
		if _, err := admin.ExecContext(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE"); err != nil {
			return fmt.Errorf("drop schema %s: %w", schema, err)
		}
	}
	reuseAll, reuseFree = nil, nil
	return nil
}
