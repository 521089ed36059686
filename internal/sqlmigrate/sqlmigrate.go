package sqlmigrate

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parleyhq/parley/internal/sqltx"
)

// Migration is one version's statements.
type Migration struct {
	Version int
	Name    string
	Stmts   []string
}

// Load reads dir's NNNN_name.sql files from fsys, in version order. The
// versions must run 1, 2, 3, ... with no gap.
func Load(fsys fs.FS, dir string) ([]Migration, error) {
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
	cur, err := Current(ctx, q, component)
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

// Current returns component's schema version, 0 when it has none. It fails
// when the version table does not exist yet.
func Current(ctx context.Context, q sqltx.Querier, component string) (int, error) {
	var v int
	err := q.QueryRowContext(ctx,
		`SELECT COALESCE(MAX(version), 0) FROM parley_schema_migrations WHERE component = $1`, component).Scan(&v)
	return v, err
}
