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
// left, its tables emptied (TRUNCATE … RESTART IDENTITY) but still
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
func emptySchema(admin *sql.DB, schema string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := admin.QueryContext(ctx, "SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tablename <> $2", schema, migrationsTable)
	if err != nil {
		return err
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return err
		}
		tables = append(tables, schema+`."`+name+`"`)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if err := rows.Err(); err != nil || len(tables) == 0 {
		return err
	}
	_, err = admin.ExecContext(ctx, "TRUNCATE "+strings.Join(tables, ", ")+" RESTART IDENTITY CASCADE")
	return err
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
