package sqlstore

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

// schema is the store's migrations, under the key "store" in the version
// table it shares with Parley's other SQL components (quota/sqlquota is
// "quota").
var schema = sqlmigrate.Component{Name: "store", Files: migrationFiles, TooNew: ErrSchemaTooNew}

// Migrate brings the database's schema to the latest version this package
// knows, applying the missing migrations in one transaction. It is
// idempotent, and safe to call from many processes at once: on PostgreSQL
// callers queue on a transaction-scoped advisory lock (one per schema, the
// same one quota/sqlquota takes), on SQLite on the database's write lock
// (BEGIN IMMEDIATE); the first applies the migrations, the others then find
// nothing to do.
//
// A database migrated by a newer Parley is left untouched and Migrate
// returns an error wrapping ErrSchemaTooNew.
func (s *Store) Migrate(ctx context.Context) error {
	return fail(ctx, "migrate", schema.Migrate(ctx, s.db, string(s.dialect), s.writes))
}

// SchemaVersion reports the store's schema version in the database (0 if
// it was never migrated) and the latest version this package knows.
func (s *Store) SchemaVersion(ctx context.Context) (current, latest int, err error) {
	current, latest, err = schema.Version(ctx, s.db, string(s.dialect))
	return current, latest, fail(ctx, "schema version", err)
}
