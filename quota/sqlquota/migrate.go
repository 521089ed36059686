package sqlquota

import (
	"context"
	"embed"

	"github.com/parleyhq/parley/internal/sqlmigrate"
)

// The migrations, one file per version per dialect:
// migrations/<dialect>/<NNNN>_<name>.sql, numbered from 1 without gaps.
// Statements end with a semicolon at the end of a line; lines starting with
// -- are comments.
//
//go:embed migrations
var migrationFiles embed.FS

// schema is the ledger's migrations, under the key "quota" in
// parley_schema_migrations, the version table it shares with
// store/sqlstore (component "store").
var schema = sqlmigrate.Component{Name: "quota", Files: migrationFiles, TooNew: ErrSchemaTooNew}

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
	return fail(ctx, "migrate", schema.Migrate(ctx, l.db.sql, string(l.db.dialect), l.db.writes))
}

// SchemaVersion reports the ledger's schema version in the database (0 if
// it was never migrated) and the latest version this package knows.
func (l *Ledger) SchemaVersion(ctx context.Context) (current, latest int, err error) {
	current, latest, err = schema.Version(ctx, l.db.sql, string(l.db.dialect))
	return current, latest, fail(ctx, "schema version", err)
}
