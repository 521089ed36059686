package sqlmigrate

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parleyhq/parley/internal/sqltx"
)

// Component is one SQL component's schema: its key in the version table it
// shares with the others, and its migrations.
type Component struct {
	// Name is the component's key in parley_schema_migrations ("store",
	// "quota").
	Name string
	// Files holds the migrations, one file per version per dialect:
	// migrations/<dialect>/NNNN_name.sql, numbered from 1 without gaps.
	Files fs.FS
	// TooNew is the component's sentinel for a database a newer Parley
	// migrated; Migrate's error wraps it.
	TooNew error
}

// Migrations returns the dialect's migrations ("sqlite", "postgres") in
// version order.
func (c Component) Migrations(dialect string) ([]Migration, error) {
	return load(c.Files, path.Join("migrations", dialect))
}

// Migrate brings c's schema in db to the latest version c knows, applying
// the missing migrations in one transaction (see Apply); on SQLite it
// waits its turn in writes, the component's queue of writers (nil on
// PostgreSQL). It is idempotent, and safe to call from many processes at
// once. A try that loses a race with another process setting up the same
// database is run again (see settling).
func (c Component) Migrate(ctx context.Context, db *sql.DB, dialect string, writes sqltx.WriteLock) error {
	ms, err := c.Migrations(dialect)
	if err != nil {
		return err
	}
	postgres := dialect == "postgres"
	return settleFresh(ctx, func() error {
		return sqltx.Write(ctx, db, postgres, writes, func(q sqltx.Querier) error {
			return Apply(ctx, q, postgres, c.Name, ms, c.TooNew)
		})
	})
}

// Version reports c's schema version in db (0 if it was never migrated)
// and the latest version c knows.
func (c Component) Version(ctx context.Context, db *sql.DB, dialect string) (current, latest int, err error) {
	ms, err := c.Migrations(dialect)
	if err != nil {
		return 0, 0, err
	}
	current, err = currentVersion(ctx, db, c.Name)
	if err != nil {
		if noVersionTable(err) {
			return 0, len(ms), nil
		}
		return 0, 0, err
	}
	return current, len(ms), nil
}

// Migration is one version's statements.
type Migration struct {
	Version int
	Name    string
	Stmts   []string
}

// load reads dir's NNNN_name.sql files from fsys, in version order. The
// versions must run 1, 2, 3, ... with no gap.
func load(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("migrations in %s: %w", dir, err)
	}
	var ms []Migration
	for _, e := range entries {
		num, name, ok := strings.Cut(strings.TrimSuffix(e.Name(), ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, fmt.Errorf("migration file %s/%s is not NNNN_name.sql", dir, e.Name())
		}
		text, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		ms = append(ms, Migration{Version: v, Name: name, Stmts: Split(string(text))})
	}
	slices.SortFunc(ms, func(a, b Migration) int { return a.Version - b.Version })
	for i, m := range ms {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migrations in %s: version %d where %d belongs", dir, m.Version, i+1)
		}
	}
	return ms, nil
}

// Split cuts a migration file into statements: each ends with a semicolon
// at the end of a line. Comment lines are dropped.
func Split(text string) []string {
	var stmts []string
	var cur strings.Builder
	for line := range strings.Lines(text) {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "--") {
			continue
		}
		cur.WriteString(line)
		if strings.HasSuffix(trimmed, ";") {
			stmts = append(stmts, strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(cur.String()), ";")))
			cur.Reset()
		}
	}
	if rest := strings.TrimSpace(cur.String()); rest != "" {
		stmts = append(stmts, rest)
	}
	return stmts
}

// versionTable creates the shared version table.
func versionTable(postgres bool) string {
	timeType := "TEXT" // SQLite: the fixed-width form below
	if postgres {
		timeType = "TIMESTAMPTZ"
	}
	return `CREATE TABLE IF NOT EXISTS parley_schema_migrations (
		component  TEXT    NOT NULL,
		version    INTEGER NOT NULL,
		name       TEXT    NOT NULL,
		applied_at ` + timeType + ` NOT NULL,
		PRIMARY KEY (component, version))`
}

// Apply brings component to the latest of ms inside the caller's
// transaction q. On PostgreSQL it first takes the advisory lock every Parley
// component takes for the schema, so concurrent callers queue; on SQLite the
// caller's write transaction (BEGIN IMMEDIATE) serializes them. A database
// at a newer version than ms knows is left untouched and the error wraps
// tooNew.
func Apply(ctx context.Context, q sqltx.Querier, postgres bool, component string, ms []Migration, tooNew error) error {
	if postgres {
		if _, err := q.ExecContext(ctx,
			`SELECT pg_advisory_xact_lock(hashtextextended('parley_schema_migrations:' || COALESCE(current_schema(), ''), 0))`); err != nil {
			return err
		}
	}
	if _, err := q.ExecContext(ctx, versionTable(postgres)); err != nil {
		return err
	}
	cur, err := currentVersion(ctx, q, component)
	if err != nil {
		return err
	}
	if cur > len(ms) {
		return fmt.Errorf("the database is at %s schema version %d, this version of Parley knows versions up to %d: %w; upgrade Parley, or point it at another database",
			component, cur, len(ms), tooNew)
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	var applied any = now
	if !postgres {
		applied = now.Format("2006-01-02T15:04:05.000000Z")
	}
	for _, m := range ms[cur:] {
		for _, stmt := range m.Stmts {
			if _, err := q.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("migration %d (%s): %w", m.Version, m.Name, err)
			}
		}
		if _, err := q.ExecContext(ctx,
			`INSERT INTO parley_schema_migrations (component, version, name, applied_at) VALUES ($1, $2, $3, $4)`,
			component, m.Version, m.Name, applied); err != nil {
			return fmt.Errorf("migration %d (%s): record version: %w", m.Version, m.Name, err)
		}
	}
	return nil
}

// currentVersion returns component's schema version, 0 when it has none.
// It fails when the version table does not exist yet.
func currentVersion(ctx context.Context, q sqltx.Querier, component string) (int, error) {
	var v int
	err := q.QueryRowContext(ctx,
		`SELECT COALESCE(MAX(version), 0) FROM parley_schema_migrations WHERE component = $1`, component).Scan(&v)
	return v, err
}

// noVersionTable reports the error of a query on a database that has no
// version table yet.
func noVersionTable(err error) bool {
	if sqltx.SQLState(err) == "42P01" { // undefined_table
		return true
	}
	// SQLite reports a missing table as a plain SQLITE_ERROR.
	return strings.Contains(err.Error(), "no such table: parley_schema_migrations")
}
