package sqlquota

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/parleyhq/parley/internal/sqltx"
)

// Errors of the SQL ledger itself; the quota package's sentinels are
// returned for the conditions quota documents.
var (
	// ErrSchemaTooNew: the database was migrated by a newer version of
	// Parley than this one. Migrate refuses to touch it.
	ErrSchemaTooNew = errors.New("sqlquota: schema too new")
	// ErrNotMigrated: the ledger's tables do not exist; call Migrate first.
	ErrNotMigrated = errors.New("sqlquota: database schema not migrated (call (*Ledger).Migrate)")
)

// fail wraps a database error for op, with the context's error when the
// context ended and with ErrNotMigrated when the tables are missing, so
// callers can test both with errors.Is. The driver's error stays in the
// chain. Errors that already carry a quota sentinel pass through wrapped.
func fail(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("sqlquota: %s: %w: %w", op, cerr, err)
	}
	if notMigrated(err) {
		return fmt.Errorf("sqlquota: %s: %w: %w", op, ErrNotMigrated, err)
	}
	return fmt.Errorf("sqlquota: %s: %w", op, err)
}

// retryable reports whether PostgreSQL aborted a transaction that may
// simply be run again: a deadlock victim or a serialization failure.
func retryable(err error) bool {
	switch sqltx.SQLState(err) {
	case "40001", // serialization_failure
		"40P01": // deadlock_detected
		return true
	}
	return false
}

func notMigrated(err error) bool {
	if sqltx.SQLState(err) == "42P01" { // undefined_table
		return true
	}
	// SQLite reports a missing table as a plain SQLITE_ERROR.
	return strings.Contains(err.Error(), "no such table: parley_")
}
