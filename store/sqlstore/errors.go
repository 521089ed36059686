package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/parleyhq/parley/internal/sqltx"
	"github.com/parleyhq/parley/store"
)

// fail wraps a database error for op: with the store sentinel it stands for,
// if any, and with the context's error when the context ended, so callers
// can test both with errors.Is. The driver's error stays in the chain.
func fail(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("sqlstore: %s: %w: %w", op, cerr, err)
	}
	if kind := classify(err); kind != nil && !errors.Is(err, kind) {
		return fmt.Errorf("sqlstore: %s: %w: %w", op, kind, err)
	}
	return fmt.Errorf("sqlstore: %s: %w", op, err)
}

// coder is how modernc.org/sqlite's Error exposes its code, found with
// errors.As so that this package imports no driver (sqltx.SQLState reads
// PostgreSQL's).
type coder interface {
	error
	Code() int
}

// classify returns the sentinel a database error stands for, or nil.
func classify(err error) error {
	if code := sqltx.SQLState(err); code != "" {
		switch {
		case code == "23505", // unique_violation
			code == "40001": // serialization_failure
			return store.ErrConflict
		case code == "23503": // foreign_key_violation: the parent row is gone
			return store.ErrNotFound
		case code == "42P01": // undefined_table
			return ErrNotMigrated
		case strings.HasPrefix(code, "22"), // data exception: NUL in text, bad JSON, ...
			strings.HasPrefix(code, "23"): // other integrity violations: NOT NULL, CHECK
			return store.ErrInvalid
		}
		return nil
	}
	if ce, ok := errors.AsType[coder](err); ok {
		switch code := ce.Code(); {
		case code == 1555 || code == 2067: // SQLITE_CONSTRAINT_PRIMARYKEY, _UNIQUE
			return store.ErrConflict
		case code == 787: // SQLITE_CONSTRAINT_FOREIGNKEY
			return store.ErrNotFound
		case code&0xff == 19: // SQLITE_CONSTRAINT: NOT NULL, CHECK, ...
			return store.ErrInvalid
		}
	}
	// SQLite reports a missing table as a plain SQLITE_ERROR.
	msg := err.Error()
	switch {
	case strings.Contains(msg, "no such table: parley_"):
		return ErrNotMigrated
	case strings.Contains(msg, "UNIQUE constraint failed"):
		return store.ErrConflict
	}
	return nil
}

func notFound(op, what, id string) error {
	return fmt.Errorf("sqlstore: %s: %s %q: %w", op, what, id, store.ErrNotFound)
}

func invalid(op, format string, args ...any) error {
	return fmt.Errorf("sqlstore: %s: %s: %w", op, fmt.Sprintf(format, args...), store.ErrInvalid)
}
