package sqlstore_test

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/parleyhq/parley/internal/sqltest"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/sqlstore"
)

// clocked returns a migrated Store over db whose clock reads *now.
func clocked(t *testing.T, db *sql.DB, now *time.Time) *sqlstore.Store {
	t.Helper()
	s, err := sqlstore.New(db, sqlstore.Options{Now: func() time.Time { return *now }})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return s
}

// threadWithTurn creates a thread owned by "u" with one turn and returns
// the thread and the turn's assistant message. The turn sets the thread's
// UpdatedAt to the store's clock.
func threadWithTurn(t *testing.T, s *sqlstore.Store) (store.Thread, *store.Message) {
	t.Helper()
	th := store.Thread{OwnerID: "u"}
	if err := s.CreateThread(t.Context(), &th); err != nil {
		t.Fatal(err)
	}
	u, a := turn(th.ID)
	if err := s.AppendTurn(t.Context(), u, a); err != nil {
		t.Fatal(err)
	}
	return th, a
}

// rated creates a thread with one turn, whose assistant message two users
// rate, and returns the thread. The turn sets the thread's UpdatedAt to
// the store's clock, which is what the retention sweep reads.
func rated(t *testing.T, s *sqlstore.Store) store.Thread {
	t.Helper()
	th, a := threadWithTurn(t, s)
	for _, user := range []string{"u", "staff"} {
		if err := s.SetFeedback(t.Context(), &store.Feedback{MessageID: a.ID, UserID: user, Rating: store.RatingDown}); err != nil {
			t.Fatal(err)
		}
	}
	return th
}

// A host may open SQLite without foreign keys (they are off unless a
// connection asks): feedback still needs an existing assistant message,
// and deleting or sweeping the thread still takes its feedback, leaving no
// orphan rows.
func TestFeedbackFollowsItsThreadWithoutSQLiteForeignKeys(t *testing.T) {
	db := openSQLite(t, "file:"+filepath.Join(t.TempDir(), "nofk.db")+"?_pragma=busy_timeout(10000)")
	var fk int
	if err := db.QueryRowContext(t.Context(), `PRAGMA foreign_keys`).Scan(&fk); err != nil || fk != 0 {
		t.Fatalf("PRAGMA foreign_keys = %d, %v; want 0 for this test to mean anything", fk, err)
	}
	testFeedbackFollowsItsThread(t, db)
}

// DeleteThread and the retention sweep take the feedback of the threads
// they delete (by the cascade on PostgreSQL, explicitly on SQLite) and
// keep the others.
func TestFeedbackFollowsItsThread(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { testFeedbackFollowsItsThread(t, b.open(t)) })
	}
}

func testFeedbackFollowsItsThread(t *testing.T, db *sql.DB) {
	now := at(0)
	s := clocked(t, db, &now)
	ctx := t.Context()
	err := s.SetFeedback(ctx, &store.Feedback{MessageID: uuid.NewString(), UserID: "u", Rating: store.RatingUp})
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SetFeedback on an unknown message: err = %v, want ErrNotFound", err)
	}
	deleted := rated(t, s)
	swept := rated(t, s)
	now = at(500)
	kept := rated(t, s)
	if err := s.DeleteThread(ctx, deleted.ID); err != nil {
		t.Fatal(err)
	}
	if n, err := s.DeleteThreadsOlderThan(ctx, at(100)); err != nil || n != 1 {
		t.Fatalf("DeleteThreadsOlderThan = %d, %v; want 1 (%s)", n, err, swept.ID)
	}
	if n := countRows(t, db, "parley_feedback"); n != 2 {
		t.Errorf("%d feedback rows left, want the 2 of the kept thread", n)
	}
	if fbs, err := s.ListFeedback(ctx, kept.ID); err != nil || len(fbs) != 2 {
		t.Errorf("ListFeedback of the kept thread = %d, %v; want 2", len(fbs), err)
	}
}

// Two Stores on separate pools stand for two app instances: users'
// concurrent sets of one (message, user) through both leave one row.
func TestSetFeedbackAcrossInstances(t *testing.T) {
	const writers = 32
	for _, c := range sharedBackends {
		t.Run(c.name, func(t *testing.T) {
			open := c.open(t)
			db := open()
			stores := []*sqlstore.Store{migrated(t, db), migrated(t, open())}
			th := store.Thread{OwnerID: "u"}
			if err := stores[0].CreateThread(t.Context(), &th); err != nil {
				t.Fatal(err)
			}
			for round := range 3 {
				u, a := turn(th.ID)
				if err := stores[1].AppendTurn(t.Context(), u, a); err != nil {
					t.Fatal(err)
				}
				errs := make([]error, writers)
				start := make(chan struct{})
				var wg sync.WaitGroup
				for i := range writers {
					wg.Go(func() {
						<-start
						errs[i] = stores[i%2].SetFeedback(t.Context(), &store.Feedback{MessageID: a.ID, UserID: "u",
							Rating: store.RatingUp, Comment: fmt.Sprint("writer ", i)})
					})
				}
				close(start)
				wg.Wait()
				if err := errors.Join(errs...); err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				var n int
				if err := db.QueryRowContext(t.Context(), rebind(stores[0],
					`SELECT COUNT(*) FROM parley_feedback WHERE message_id = ?`), a.ID).Scan(&n); err != nil {
					t.Fatal(err)
				}
				if n != 1 {
					t.Errorf("round %d: %d rows for one (message, user), want 1", round, n)
				}
			}
		})
	}
}

// On PostgreSQL, category and comment go through the text escape like the
// other free text: U+0000 is stored escaped, plain text as it is.
func TestFeedbackTextEscapedOnPostgres(t *testing.T) {
	db := sqltest.Postgres(t)
	s := migrated(t, db)
	ctx := t.Context()
	_, a := threadWithTurn(t, s)
	f := store.Feedback{MessageID: a.ID, UserID: "u", Rating: store.RatingDown, Category: "plain", Comment: "a\x00b"}
	if err := s.SetFeedback(ctx, &f); err != nil {
		t.Fatal(err)
	}
	var category, comment string
	if err := db.QueryRowContext(ctx, `SELECT category, comment FROM parley_feedback WHERE message_id = $1`,
		a.ID).Scan(&category, &comment); err != nil {
		t.Fatal(err)
	}
	if category != "plain" || comment != "a\x010b" {
		t.Errorf("stored category, comment = %q, %q; want %q, %q", category, comment, "plain", "a\x010b")
	}
}

// ListFeedback can be served by its index, in order: no sort of the table.
// (On PostgreSQL sequential and bitmap scans are turned off for the check,
// since on a tiny table either, and a sort, is cheaper.)
func TestListFeedbackUsesItsIndex(t *testing.T) {
	for _, be := range benchBackends {
		t.Run(be.name, func(t *testing.T) {
			db := be.open(t)
			s := migrated(t, db)
			conn, err := db.Conn(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			explain := "EXPLAIN QUERY PLAN "
			if s.Dialect() == sqlstore.Postgres {
				explain = "EXPLAIN "
				for _, set := range []string{"SET enable_seqscan = off", "SET enable_bitmapscan = off"} {
					if _, err := conn.ExecContext(t.Context(), set); err != nil {
						t.Fatal(err)
					}
				}
			}
			plan := explainPlan(t, conn, rebind(s, explain+`SELECT message_id FROM parley_feedback
				WHERE thread_id = ? ORDER BY created_at, message_id, user_id`), "t")
			if !strings.Contains(plan, "parley_feedback_thread") || strings.Contains(plan, "TEMP B-TREE") ||
				strings.Contains(plan, "Sort") {
				t.Errorf("ListFeedback does not use parley_feedback_thread in order:\n%s", plan)
			}
		})
	}
}
