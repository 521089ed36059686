package sqlmigrate

import (
	"context"
	"errors"
	"time"

	"github.com/parleyhq/parley/internal/sqltx"
)

// settleFresh runs f, and runs it again, up to five times in all, while it
// fails with an error settling accepts, waiting 20, 40, 60 and 80 ms
// between. It stops early when ctx is done.
func settleFresh(ctx context.Context, f func() error) error {
	for attempt := 1; ; attempt++ {
		err := f()
		if err == nil || attempt == 5 || !settling(err) || ctx.Err() != nil {
			return err
		}
		t := time.NewTimer(time.Duration(attempt) * 20 * time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
	}
}

// settling reports a failed migration that another try gets past, on a
// database others are setting up at the same moment:
//   - on SQLite, SQLITE_BUSY (see busy): the connections that open a fresh
//     file at once race to switch it to WAL mode, and the losers fail in
//     the connection's own setup, without the busy handler;
//   - on PostgreSQL, a CREATE ... IF NOT EXISTS that lost a race with
//     another transaction creating the same object (the server checks the
//     catalog before it locks it), as an older component that takes no
//     advisory lock can make it lose; and a deadlock victim or
//     serialization failure.
func settling(err error) bool {
	switch sqltx.SQLState(err) {
	case "23505", // unique_violation in pg_type or pg_class
		"42P07", // duplicate_table
		"40001", // serialization_failure
		"40P01": // deadlock_detected
		return true
	}
	return busy(err)
}

// busy reports SQLite's SQLITE_BUSY (primary code 5, any extended code),
// from a driver whose errors have a Code method, as modernc.org/sqlite's do.
func busy(err error) bool {
	c, ok := errors.AsType[interface {
		error
		Code() int
	}](err)
	return ok && c.Code()&0xff == 5
}
