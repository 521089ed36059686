package main

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// notes is the demo host application: each user's notes. With a SQL store
// they live in a table of the example's own, demo_notes, in the database
// that holds the threads, so a transcript that says "added note #7" stays
// true after a restart; with the memory store they live in memory and go
// with the threads. Note ids are never reused (an AUTOINCREMENT key on
// SQLite, an identity column on PostgreSQL, a counter in memory), so a
// confirm card written for a note that has since gone finds nothing, never
// a newer note under the same id.
//
// Every method is safe for concurrent use. Another user's note is as absent
// as one that never existed.
type notes struct {
	db       *sql.DB // nil: the notes are in memory
	postgres bool

	mu     sync.Mutex // guards the memory notes
	byUser map[string][]note
	lastID int64
}

type note struct {
	ID      string    `json:"id"`
	Text    string    `json:"text"`
	Tag     string    `json:"tag,omitempty"`
	Created time.Time `json:"created"`
}

// demoSeed is the notes a demo user starts with, in this order, so a new
// database gives alice notes 1 and 2, sam 3 and bob 4.
var demoSeed = []struct {
	user, text, tag string
	age             time.Duration
}{
	{"alice", "Buy oat milk", "", 2 * time.Hour},
	{"alice", "Call the plumber about the kitchen tap", "", time.Hour},
	{"sam", "Quarterly review on Friday", "work", 30 * time.Minute},
	{"bob", "Pick up the bike from the repair shop", "", 45 * time.Minute},
}

// newMemoryNotes returns the demo users' seeded notes, kept in memory.
func newMemoryNotes() *notes {
	n := &notes{byUser: map[string][]note{}}
	count := func(_ context.Context, user string) (int, error) {
		n.mu.Lock()
		defer n.mu.Unlock()
		return len(n.byUser[user]), nil
	}
	if err := seed(context.Background(), count, n.add); err != nil {
		panic(err) // memory notes cannot fail
	}
	return n
}

// openNotes keeps the notes in db: it creates the demo_notes table if it is
// missing and seeds each demo user who has no notes, a new database or one
// whose user deleted them all. Processes starting together on one database
// queue for this, so the table is created once and a user seeded once.
func openNotes(ctx context.Context, db *sql.DB, postgres bool) (*notes, error) {
	n := &notes{db: db, postgres: postgres}
	schema := []string{`CREATE TABLE IF NOT EXISTS demo_notes (
		id         INTEGER PRIMARY KEY AUTOINCREMENT, -- AUTOINCREMENT: not even the last id is reused after a delete
		user_id    TEXT NOT NULL,
		text       TEXT NOT NULL,
		tag        TEXT NOT NULL,
		created_at TEXT NOT NULL -- sqliteTime, so text order is time order
	)`}
	if postgres {
		schema = []string{`CREATE TABLE IF NOT EXISTS demo_notes (
			id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
			user_id    TEXT NOT NULL,
			text       TEXT NOT NULL,
			tag        TEXT NOT NULL,
			created_at TIMESTAMPTZ NOT NULL
		)`}
	}
	schema = append(schema, `CREATE INDEX IF NOT EXISTS demo_notes_user ON demo_notes (user_id, id)`)
	err := n.setUpTx(ctx, func(q querier) error {
		for _, stmt := range schema {
			if _, err := q.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		count := func(ctx context.Context, user string) (int, error) {
			var c int
			err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM demo_notes WHERE user_id = $1`, user).Scan(&c)
			return c, err
		}
		return seed(ctx, count, func(ctx context.Context, user, text, tag string, at time.Time) (note, error) {
			return n.insert(ctx, q, user, text, tag, at)
		})
	})
	if err != nil {
		return nil, fmt.Errorf("demo notes: %w", err)
	}
	return n, nil
}

// seed adds demoSeed's notes, with add, for each user who has none by
// count.
func seed(ctx context.Context, count func(ctx context.Context, user string) (int, error),
	add func(ctx context.Context, user, text, tag string, at time.Time) (note, error)) error {
	now := time.Now()
	empty := map[string]bool{}
	for _, s := range demoSeed {
		if _, checked := empty[s.user]; !checked {
			c, err := count(ctx, s.user)
			if err != nil {
				return err
			}
			empty[s.user] = c == 0
		}
		if empty[s.user] {
			if _, err := add(ctx, s.user, s.text, s.tag, now.Add(-s.age)); err != nil {
				return err
			}
		}
	}
	return nil
}

// querier is what *sql.DB, *sql.Tx and *sql.Conn have in common, as far
// as the notes use it.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// setUpTx runs f in a transaction that other processes setting up the same
// database wait for. PostgreSQL takes an advisory lock for the schema first,
// as CREATE TABLE IF NOT EXISTS alone can fail when two run at once; on
// SQLite, BEGIN IMMEDIATE takes the database's write lock before f reads
// anything, so what f reads stays true until it commits.
func (n *notes) setUpTx(ctx context.Context, f func(querier) error) error {
	if n.postgres {
		tx, err := n.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('demo_notes:' || COALESCE(current_schema(), ''), 0))`); err != nil {
			return err
		}
		if err := f(tx); err != nil {
			return err
		}
		return tx.Commit()
	}
	// Processes starting together on a new file race to switch it to WAL
	// mode, and the losers' first connection fails with SQLITE_BUSY at once,
	// without the busy timeout; a moment later the file has settled.
	for attempt := 1; ; attempt++ {
		err := n.sqliteImmediate(ctx, f)
		if err == nil || attempt == 5 || !sqliteBusy(err) {
			return err
		}
		select {
		case <-time.After(time.Duration(attempt) * 20 * time.Millisecond):
		case <-ctx.Done():
			return err
		}
	}
}

// sqliteImmediate runs f after BEGIN IMMEDIATE on a connection of its own,
// which database/sql's BeginTx cannot ask for. A connection it cannot roll
// back is discarded, so none goes back to the pool inside the transaction.
func (n *notes) sqliteImmediate(ctx context.Context, f func(querier) error) error {
	conn, err := n.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return err
	}
	if err = f(conn); err == nil {
		if _, err = conn.ExecContext(ctx, "COMMIT"); err == nil {
			return nil
		}
	}
	if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	return err
}

// sqliteBusy reports SQLITE_BUSY, under any extended code.
func sqliteBusy(err error) bool {
	se, ok := errors.AsType[*sqlite.Error](err)
	return ok && se.Code()&0xff == sqlite3.SQLITE_BUSY
}

// sqliteTime is how SQLite holds a note's time: fixed-width UTC text.
const sqliteTime = "2006-01-02T15:04:05.000000Z"

// add stores a new note for user and returns it with its id. Times keep
// microseconds, as PostgreSQL does.
func (n *notes) add(ctx context.Context, user, text, tag string, at time.Time) (note, error) {
	if n.db != nil {
		return n.insert(ctx, n.db, user, text, tag, at)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.lastID++
	nt := newNote(text, tag, at)
	nt.ID = strconv.FormatInt(n.lastID, 10)
	n.byUser[user] = append(n.byUser[user], nt)
	return nt, nil
}

// newNote is a note without its id, its time in UTC to the microsecond.
func newNote(text, tag string, at time.Time) note {
	return note{Text: text, Tag: tag, Created: at.UTC().Truncate(time.Microsecond)}
}

func (n *notes) insert(ctx context.Context, q querier, user, text, tag string, at time.Time) (note, error) {
	nt := newNote(text, tag, at)
	var id int64
	err := q.QueryRowContext(ctx, `INSERT INTO demo_notes (user_id, text, tag, created_at) VALUES ($1, $2, $3, $4) RETURNING id`,
		user, text, tag, n.timeArg(nt.Created)).Scan(&id)
	nt.ID = strconv.FormatInt(id, 10)
	return nt, err
}

// find returns the user's note with that id; ok is false when the user
// has none.
func (n *notes) find(ctx context.Context, user, id string) (nt note, ok bool, err error) {
	key, valid := parseNoteID(id)
	if !valid {
		return note{}, false, nil
	}
	if n.db == nil {
		n.mu.Lock()
		defer n.mu.Unlock()
		i := n.indexLocked(user, id)
		if i < 0 {
			return note{}, false, nil
		}
		return n.byUser[user][i], true, nil
	}
	return foundNote(n.scanOne(n.db.QueryRowContext(ctx,
		`SELECT id, text, tag, created_at FROM demo_notes WHERE id = $1 AND user_id = $2`, key, user)))
}

// indexLocked returns the index of the user's note with that id in the
// memory notes, or -1. n.mu must be held.
func (n *notes) indexLocked(user, id string) int {
	return slices.IndexFunc(n.byUser[user], func(x note) bool { return x.ID == id })
}

// foundNote turns a query for one note into find's and remove's answer:
// no row is no note (ok false), not an error.
func foundNote(nt note, err error) (note, bool, error) {
	if errors.Is(err, sql.ErrNoRows) {
		return note{}, false, nil
	}
	return nt, err == nil, err
}

// list returns the user's notes, oldest first.
func (n *notes) list(ctx context.Context, user string) ([]note, error) {
	if n.db == nil {
		n.mu.Lock()
		defer n.mu.Unlock()
		return slices.Clone(n.byUser[user]), nil
	}
	rows, err := n.db.QueryContext(ctx, `SELECT id, text, tag, created_at FROM demo_notes WHERE user_id = $1 ORDER BY id`, user)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []note
	for rows.Next() {
		nt, err := n.scanOne(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, nt)
	}
	return out, rows.Err()
}

// remove deletes the user's note with that id and returns it; ok is false
// when the user has none.
func (n *notes) remove(ctx context.Context, user, id string) (nt note, ok bool, err error) {
	key, valid := parseNoteID(id)
	if !valid {
		return note{}, false, nil
	}
	if n.db == nil {
		n.mu.Lock()
		defer n.mu.Unlock()
		i := n.indexLocked(user, id)
		if i < 0 {
			return note{}, false, nil
		}
		nt = n.byUser[user][i]
		n.byUser[user] = slices.Delete(n.byUser[user], i, i+1)
		return nt, true, nil
	}
	return foundNote(n.scanOne(n.db.QueryRowContext(ctx,
		`DELETE FROM demo_notes WHERE id = $1 AND user_id = $2 RETURNING id, text, tag, created_at`, key, user)))
}

// stats counts the users with notes and their notes.
func (n *notes) stats(ctx context.Context) (users, total int, err error) {
	if n.db == nil {
		n.mu.Lock()
		defer n.mu.Unlock()
		for _, ns := range n.byUser {
			if len(ns) > 0 {
				users++
				total += len(ns)
			}
		}
		return users, total, nil
	}
	err = n.db.QueryRowContext(ctx, `SELECT COUNT(DISTINCT user_id), COUNT(*) FROM demo_notes`).Scan(&users, &total)
	return users, total, err
}

// parseNoteID reads a note id as the model or the user wrote it: only the
// decimal form the notes hand out names a note ("07" does not).
func parseNoteID(id string) (int64, bool) {
	n, err := strconv.ParseInt(id, 10, 64)
	return n, err == nil && n > 0 && strconv.FormatInt(n, 10) == id
}

func (n *notes) timeArg(t time.Time) any {
	if n.postgres {
		return t
	}
	return t.Format(sqliteTime)
}

func (n *notes) scanOne(row interface{ Scan(...any) error }) (note, error) {
	var nt note
	var id int64
	var created any
	if err := row.Scan(&id, &nt.Text, &nt.Tag, &created); err != nil {
		return note{}, err
	}
	nt.ID = strconv.FormatInt(id, 10)
	switch c := created.(type) {
	case time.Time: // PostgreSQL
		nt.Created = c.UTC()
	case string: // SQLite
		t, err := time.Parse(sqliteTime, c)
		if err != nil {
			return note{}, fmt.Errorf("note %d: created_at %q: %w", id, c, err)
		}
		nt.Created = t
	default:
		return note{}, fmt.Errorf("note %d: created_at is a %T", id, created)
	}
	return nt, nil
}
