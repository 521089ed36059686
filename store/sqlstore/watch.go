package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parleyhq/parley/store"
)

var (
	_ store.ThreadBatch   = (*Store)(nil)
	_ store.ThreadWatcher = (*Store)(nil)
)

// threadsChannel is the PostgreSQL notification channel the triggers of
// migration 0011 notify with a thread's id when its cancel time or last_seq
// changes or it is deleted.
const threadsChannel = "parley_threads"

// batchIDs bounds the ids of one GetThreads query.
const batchIDs = 500

// GetThreads implements store.ThreadBatch with one query per 500 ids.
func (s *Store) GetThreads(ctx context.Context, ids []string) (map[string]store.Thread, error) {
	const op = "get threads"
	if err := ctx.Err(); err != nil {
		return nil, fail(ctx, op, err)
	}
	out := make(map[string]store.Thread, len(ids))
	for len(ids) > 0 {
		n := min(len(ids), batchIDs)
		chunk := ids[:n]
		ids = ids[n:]
		a := make([]any, len(chunk))
		for i, id := range chunk {
			a[i] = id
		}
		q := `SELECT ` + threadSelect + ` FROM parley_threads WHERE id IN (?` + strings.Repeat(`, ?`, len(chunk)-1) + `)`
		ths, err := queryAll(ctx, s.db, s.rebind(q), a, s.scanThread)
		if err != nil {
			return nil, fail(ctx, op, err)
		}
		for _, t := range ths {
			out[t.ID] = t
		}
	}
	return out, nil
}

// WatchThreads implements store.ThreadWatcher on PostgreSQL with LISTEN on
// one connection of its own, taken from the pool for as long as it
// watches (so the pool must allow one more connection than the host's
// other work needs) and closed, never returned to the pool, when the watch
// ends or the connection fails. It reconnects after a failure, backing off
// from 100 ms to 5 s. On SQLite, and on a pool of fewer than 4
// connections (see minListenPool), it returns errors.ErrUnsupported.
func (s *Store) WatchThreads(ctx context.Context, changed func(threadID string)) error {
	if err := s.listenable("watch threads"); err != nil {
		return err
	}
	wait := 100 * time.Millisecond
	for {
		// What changed while nobody listened is not notified: changed("").
		listened, err := s.listen(ctx, threadsChannel, func() { changed("") }, changed)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, errors.ErrUnsupported) {
			return err
		}
		if listened {
			wait = 100 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// listen holds one LISTEN session on channel until ctx ends or the
// connection fails, and reports whether LISTEN succeeded. It calls
// listening once LISTEN succeeded, then notified with each payload, from
// its own goroutine.
func (s *Store) listen(ctx context.Context, channel string, listening func(), notified func(payload string)) (listened bool, err error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		pc, ok := dc.(interface{ Conn() *pgx.Conn })
		if !ok {
			return fmt.Errorf("sqlstore: listen: driver connection %T is not pgx's: %w", dc, errors.ErrUnsupported)
		}
		c := pc.Conn()
		if _, err := c.Exec(ctx, "LISTEN "+channel); err != nil {
			return driver.ErrBadConn
		}
		listened = true
		listening()
		for {
			n, err := c.WaitForNotification(ctx)
			if err != nil {
				// The session is LISTENing (or broken): never hand it back
				// to the pool, where notifications would pile up.
				return driver.ErrBadConn
			}
			notified(n.Payload)
		}
	})
	if errors.Is(err, driver.ErrBadConn) {
		err = sql.ErrConnDone
	}
	return listened, err
}

// minListenPool is the smallest pool (sql.DB's MaxOpenConns) on which the
// Store LISTENs: the thread watcher and the relay each hold a connection
// of the pool while they listen, and the turns they follow need
// connections to end. A smaller pool would let the two listeners starve
// the turns (a pool of two: no connection left).
const minListenPool = 4

// listenable returns an error wrapping errors.ErrUnsupported, with op,
// when the Store cannot LISTEN: on SQLite, and on a pool smaller than
// minListenPool (the Engine then polls, and a stream resumes on its own
// instance only).
func (s *Store) listenable(op string) error {
	if s.dialect != Postgres {
		return fmt.Errorf("sqlstore: %s on %s: %w", op, s.dialect, errors.ErrUnsupported)
	}
	if n := s.db.Stats().MaxOpenConnections; n > 0 && n < minListenPool {
		return fmt.Errorf("sqlstore: %s: a pool of %d connections is too small to LISTEN (at least %d): %w", op, n, minListenPool, errors.ErrUnsupported)
	}
	return nil
}
