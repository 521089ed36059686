package sqlstore

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

// component is this store's key in the version table it shares with
// Parley's other SQL components (quota/sqlquota is "quota").
const component = "store"

// migrations returns the dialect's migrations in version order.
func migrations(d Dialect) ([]sqlmigrate.Migration, error) {
	ms, err := sqlmigrate.Load(migrationFiles, path.Join("migrations", string(d)))
	if err != nil {
		return nil, fmt.Errorf("sqlstore: %w", err)
	}
	return ms, nil
}

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
	ms, err := migrations(s.dialect)
	if err != nil {
		return err
	}
	err = sqltx.SettleFresh(ctx, sqltx.Busy, func() error {
		return s.write(ctx, func(q querier) error {
			return sqlmigrate.Apply(ctx, q, s.dialect == Postgres, component, ms, ErrSchemaTooNew)
		})
	})
	if err != nil {
		return fail(ctx, "migrate", err)
	}
	return nil
}

// SchemaVersion reports the store's schema version in the database (0 if
// it was never migrated) and the latest version this package knows.
func (s *Store) SchemaVersion(ctx context.Context) (current, latest int, err error) {
	ms, err := migrations(s.dialect)
	if err != nil {
		return 0, 0, err
	}
	current, err = sqlmigrate.Current(ctx, s.db, component)
	if err != nil {
		if classify(err) == ErrNotMigrated {
			return 0, len(ms), nil
		}
		return 0, 0, fail(ctx, "schema version", err)
	}
	return current, len(ms), nil
}
