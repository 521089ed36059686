package sqlquota

import (
	"context"
	"embed"
	"fmt"
	"path"

	"github.com/parleyhq/parley/internal/sqlmigrate"
	"github.com/parleyhq/parley/internal/sqltx"
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

// migrations returns the dialect's migrations in version order.
func migrations(d Dialect) ([]sqlmigrate.Migration, error) {
	ms, err := sqlmigrate.Load(migrationFiles, path.Join("migrations", string(d)))
	if err != nil {
		return nil, fmt.Errorf("sqlquota: %w", err)
	}
	return ms, nil
}

// Migrate brings the ledger's tables (those of its SpendLedger and
// RateLimiter included) to the latest version this package knows, applying
// the missing migrations in one transaction. It is idempotent, and safe to
// call from many processes at once: on PostgreSQL callers queue on a
// transaction-scoped advisory lock (one per schema, the same one
// store/sqlstore takes), on SQLite on the database's write lock (BEGIN
// IMMEDIATE); the first applies the migrations, the others then find
// nothing to do.
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
	// A database shared with an older sqlstore may also race on creating
	// the version table.
	err = sqltx.SettleFresh(ctx, createRace, func() error {
		return l.db.writeImmediate(ctx, func(q querier) error {
			return sqlmigrate.Apply(ctx, q, l.db.dialect == Postgres, component, ms, ErrSchemaTooNew)
		})
	})
	return fail(ctx, "migrate", err)
}

// SchemaVersion reports the ledger's schema version in the database (0 if
// it was never migrated) and the latest version this package knows.
func (l *Ledger) SchemaVersion(ctx context.Context) (current, latest int, err error) {
	ms, err := migrations(l.db.dialect)
	if err != nil {
		return 0, 0, err
	}
	current, err = sqlmigrate.Current(ctx, l.db.sql, component)
	if err != nil {
		if notMigrated(err) {
			return 0, len(ms), nil
		}
		return 0, 0, fail(ctx, "schema version", err)
	}
	return current, len(ms), nil
}
