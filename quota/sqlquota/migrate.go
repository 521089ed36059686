package sqlquota

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The migrations, one file per version per dialect:
// migrations/<dialect>/<NNNN>_<name>.sql, numbered from 1 without gaps.
// Statements end with a semicolon at the end of a line; lines starting with
// -- are comments.
//
//go:embed migrations
var migrationFiles embed.FS

// component is the ledger's key in parley_schema_migrations, the version
// table it shares with store/sqlstore (component "store").
const component = "quota"

type migration struct {
	version int
	name    string
	stmts   []string
}

// migrations returns the dialect's migrations in version order.
func migrations(d Dialect) ([]migration, error) {
	dir := path.Join("migrations", string(d))
	entries, err := fs.ReadDir(migrationFiles, dir)
	if err != nil {
		return nil, fmt.Errorf("sqlquota: migrations for %s: %w", d, err)
	}
	var ms []migration
	for _, e := range entries {
		num, name, ok := strings.Cut(strings.TrimSuffix(e.Name(), ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, fmt.Errorf("sqlquota: migration file %s/%s is not NNNN_name.sql", dir, e.Name())
		}
		text, err := fs.ReadFile(migrationFiles, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: name, stmts: splitStatements(string(text))})
	}
	slices.SortFunc(ms, func(a, b migration) int { return a.version - b.version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("sqlquota: migrations for %s: version %d where %d belongs", d, m.version, i+1)
		}
	}
	return ms, nil
}

// splitStatements cuts a migration file into statements: each ends with a
// semicolon at the end of a line. Comment lines are dropped.
func splitStatements(text string) []string {
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

// versionTable creates the version table shared by Parley's SQL components.
// It must stay identical to store/sqlstore's: whichever migrates first
// creates it.
func (b *db) versionTable() string {
	timeType := "TIMESTAMPTZ"
	if b.dialect == SQLite {
		timeType = "TEXT"
	}
	return `CREATE TABLE IF NOT EXISTS parley_schema_migrations (
		component  TEXT    NOT NULL,
		version    INTEGER NOT NULL,
		name       TEXT    NOT NULL,
		applied_at ` + timeType + ` NOT NULL,
		PRIMARY KEY (component, version))`
}

// Migrate brings the ledger's tables (those of its SpendLedger and
// RateLimiter included) to the latest version this package knows, applying
// the missing migrations in one transaction. It is idempotent, and safe to
// call from many processes at once: on PostgreSQL callers queue on a
// transaction-scoped advisory lock (one per schema), on SQLite on the
// database's write lock (BEGIN IMMEDIATE); the first applies the
// migrations, the others then find nothing to do.
//
// Versions are recorded in parley_schema_migrations under the component
// "quota", beside store/sqlstore's "store". A database migrated by a newer
// Parley is left untouched and Migrate returns an error wrapping
// ErrSchemaTooNew.
func (l *Ledger) Migrate(ctx context.Context) error {
	ms, err := migrations(l.db.dialect)
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		err = l.db.writeImmediate(ctx, func(q querier) error { return l.db.migrate(ctx, q, ms) })
		// Both components take the same advisory lock, but a database shared
		// with an older sqlstore may still race on creating the version table.
		if err == nil || attempt == 5 || !createRace(err) {
			break
		}
		time.Sleep(time.Duration(attempt) * 20 * time.Millisecond)
	}
	return fail(ctx, "migrate", err)
}

func (b *db) migrate(ctx context.Context, q querier, ms []migration) error {
	if b.dialect == Postgres {
		if _, err := q.ExecContext(ctx,
			`SELECT pg_advisory_xact_lock(hashtextextended('parley_schema_migrations:' || COALESCE(current_schema(), ''), 0))`); err != nil {
			return err
		}
	}
	if _, err := q.ExecContext(ctx, b.versionTable()); err != nil {
		return err
	}
	cur, err := currentVersion(ctx, q)
	if err != nil {
		return err
	}
	if cur > len(ms) {
		return fmt.Errorf("the database is at quota schema version %d, this version of Parley knows versions up to %d: %w; upgrade Parley, or point it at another database",
			cur, len(ms), ErrSchemaTooNew)
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	var applied any = now
	if b.dialect == SQLite {
		applied = now.Format("2006-01-02T15:04:05.000000Z")
	}
	for _, m := range ms[cur:] {
		for _, stmt := range m.stmts {
			if _, err := q.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("migration %d (%s): %w", m.version, m.name, err)
			}
		}
		if _, err := q.ExecContext(ctx,
			`INSERT INTO parley_schema_migrations (component, version, name, applied_at) VALUES ($1, $2, $3, $4)`,
			component, m.version, m.name, applied); err != nil {
			return fmt.Errorf("migration %d (%s): record version: %w", m.version, m.name, err)
		}
	}
	return nil
}

func currentVersion(ctx context.Context, q querier) (int, error) {
	var v int
	err := q.QueryRowContext(ctx,
		`SELECT COALESCE(MAX(version), 0) FROM parley_schema_migrations WHERE component = $1`, component).Scan(&v)
	return v, err
}

// SchemaVersion reports the ledger's schema version in the database (0 if
// it was never migrated) and the latest version this package knows.
func (l *Ledger) SchemaVersion(ctx context.Context) (current, latest int, err error) {
	ms, err := migrations(l.db.dialect)
	if err != nil {
		return 0, 0, err
	}
	current, err = currentVersion(ctx, l.db.sql)
	if err != nil {
		if notMigrated(err) {
			return 0, len(ms), nil
		}
		return 0, 0, fail(ctx, "schema version", err)
	}
	return current, len(ms), nil
}
