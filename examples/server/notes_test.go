package main

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/internal/sqltest"
)

// notesDB is one SQL database the notes can live in, and how to open it
// again, as a restarted process would.
type notesDB struct {
	postgres bool
	open     func(t *testing.T) *sql.DB // a new pool on the same database
}

// sqlNotesDBs are the SQL databases the example supports: a SQLite file,
// and PostgreSQL when PARLEY_TEST_POSTGRES_DSN is set.
var sqlNotesDBs = map[string]func(t *testing.T) notesDB{
	"sqlite": func(t *testing.T) notesDB {
		path := filepath.Join(t.TempDir(), "parley.db")
		return notesDB{open: func(t *testing.T) *sql.DB {
			db, err := sql.Open("sqlite", sqltest.SQLiteDSN(path))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		}}
	},
	"postgres": func(t *testing.T) notesDB {
		dsn := sqltest.PostgresDSN(t) // skips without PARLEY_TEST_POSTGRES_DSN
		return notesDB{postgres: true, open: func(t *testing.T) *sql.DB { return sqltest.OpenPostgres(t, dsn) }}
	},
}

func (d notesDB) notes(t *testing.T) *notes {
	t.Helper()
	n, err := openNotes(context.Background(), d.open(t), d.postgres)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// forEachNotes runs f on fresh seeded notes in memory, in a SQLite file,
// and in PostgreSQL when PARLEY_TEST_POSTGRES_DSN is set.
func forEachNotes(t *testing.T, f func(t *testing.T, n *notes)) {
	t.Run("memory", func(t *testing.T) { f(t, newMemoryNotes()) })
	for name, newDB := range sqlNotesDBs {
		t.Run(name, func(t *testing.T) { f(t, newDB(t).notes(t)) })
	}
}

// forEachNotesDB runs f on each fresh SQL database.
func forEachNotesDB(t *testing.T, f func(t *testing.T, d notesDB)) {
	for name, newDB := range sqlNotesDBs {
		t.Run(name, func(t *testing.T) { f(t, newDB(t)) })
	}
}

func mustList(t *testing.T, n *notes, user string) []note {
	t.Helper()
	ns, err := n.list(context.Background(), user)
	if err != nil {
		t.Fatalf("list %s: %v", user, err)
	}
	return ns
}

func ids(ns []note) []string {
	var out []string
	for _, nt := range ns {
		out = append(out, nt.ID)
	}
	return out
}

func TestNotesStartSeededAndEachUsersOwn(t *testing.T) {
	forEachNotes(t, func(t *testing.T, n *notes) {
		ctx := context.Background()
		for user, want := range map[string][]string{"alice": {"1", "2"}, "sam": {"3"}, "bob": {"4"}, "mallory": nil} {
			if got := ids(mustList(t, n, user)); !slices.Equal(got, want) {
				t.Errorf("%s's notes %v, want %v", user, got, want)
			}
		}
		if ns := mustList(t, n, "alice"); ns[0].Text != "Buy oat milk" || ns[0].Created.IsZero() || !ns[0].Created.Before(ns[1].Created) {
			t.Errorf("alice's notes %+v", ns)
		}
		if users, total, err := n.stats(ctx); users != 3 || total != 4 || err != nil {
			t.Errorf("stats: %d users, %d notes, %v; want 3 and 4", users, total, err)
		}
		if nt, ok, err := n.find(ctx, "sam", "3"); !ok || err != nil || nt.Text != "Quarterly review on Friday" || nt.Tag != "work" {
			t.Errorf("sam's note 3: %+v %v %v", nt, ok, err)
		}
		for _, id := range []string{"3", "99", "0", "-1", "01", "1.0", "x", "", "99999999999999999999"} {
			if _, ok, err := n.find(ctx, "alice", id); ok || err != nil {
				t.Errorf("alice finds note %q: %v %v, want nothing", id, ok, err)
			}
			if _, ok, err := n.remove(ctx, "alice", id); ok || err != nil {
				t.Errorf("alice removes note %q: %v %v, want nothing", id, ok, err)
			}
		}
		if _, ok, _ := n.find(ctx, "sam", "3"); !ok {
			t.Error("sam's note went when alice tried to remove it")
		}
	})
}

func TestNotesAddListRemove(t *testing.T) {
	forEachNotes(t, func(t *testing.T, n *notes) {
		ctx := context.Background()
		at := time.Date(2030, 1, 2, 3, 4, 5, 123456789, time.FixedZone("X", 3600))
		added, err := n.add(ctx, "alice", "Water the plants", "home", at)
		if err != nil {
			t.Fatal(err)
		}
		want := note{ID: "5", Text: "Water the plants", Tag: "home", Created: at.UTC().Truncate(time.Microsecond)}
		if added != want {
			t.Errorf("added %+v, want %+v", added, want)
		}
		if ns := mustList(t, n, "alice"); len(ns) != 3 || ns[2] != want {
			t.Errorf("alice's notes %+v, want the new one last as %+v", ns, want)
		}
		if nt, ok, err := n.find(ctx, "alice", "5"); !ok || err != nil || nt != want {
			t.Errorf("find 5: %+v %v %v", nt, ok, err)
		}
		if nt, ok, err := n.remove(ctx, "alice", "5"); !ok || err != nil || nt != want {
			t.Errorf("remove 5: %+v %v %v", nt, ok, err)
		}
		if _, ok, err := n.remove(ctx, "alice", "5"); ok || err != nil {
			t.Errorf("remove 5 again: %v %v, want nothing", ok, err)
		}
		if got := ids(mustList(t, n, "alice")); !slices.Equal(got, []string{"1", "2"}) {
			t.Errorf("alice's notes after the remove: %v", got)
		}
	})
}

// A removed note's id, the highest one included, never names another note.
func TestNotesNeverReuseAnID(t *testing.T) {
	forEachNotes(t, func(t *testing.T, n *notes) {
		ctx := context.Background()
		for _, id := range []string{"4", "3", "2", "1"} { // every note, the last first
			user := map[string]string{"1": "alice", "2": "alice", "3": "sam", "4": "bob"}[id]
			if _, ok, err := n.remove(ctx, user, id); !ok || err != nil {
				t.Fatalf("remove %s: %v %v", id, ok, err)
			}
		}
		nt, err := n.add(ctx, "alice", "After the purge", "", time.Now())
		if err != nil || nt.ID != "5" {
			t.Errorf("the next note is %+v (%v), want id 5", nt, err)
		}
	})
}

func TestNotesTakeConcurrentAdds(t *testing.T) {
	forEachNotes(t, func(t *testing.T, n *notes) {
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Go(func() {
				if _, err := n.add(context.Background(), "alice", fmt.Sprint("note ", i), "", time.Now()); err != nil {
					t.Errorf("add %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		ns := mustList(t, n, "alice")
		got := ids(ns)
		slices.Sort(got)
		if len(ns) != 22 || len(slices.Compact(got)) != 22 {
			t.Errorf("alice has %d notes with ids %v, want 22 distinct", len(ns), ids(ns))
		}
	})
}

// The notes are in the database: a restart finds them, and seeds only a
// user left with none, under new ids.
func TestNotesSurviveARestartAndReseedOnlyAnEmptyUser(t *testing.T) {
	forEachNotesDB(t, func(t *testing.T, d notesDB) {
		ctx := context.Background()
		n := d.notes(t)
		added, err := n.add(ctx, "alice", "Survive the restart", "", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"3"} {
			if _, ok, err := n.remove(ctx, "sam", id); !ok || err != nil {
				t.Fatalf("remove sam's %s: %v %v", id, ok, err)
			}
		}

		n = d.notes(t) // a new process on the same database
		if got := ids(mustList(t, n, "alice")); !slices.Equal(got, []string{"1", "2", added.ID}) {
			t.Errorf("alice's notes after the restart: %v, want 1, 2 and %s", got, added.ID)
		}
		if nt, ok, err := n.find(ctx, "alice", added.ID); !ok || err != nil || nt != added {
			t.Errorf("alice's note after the restart: %+v %v %v, want %+v", nt, ok, err, added)
		}
		if got := ids(mustList(t, n, "bob")); !slices.Equal(got, []string{"4"}) {
			t.Errorf("bob's notes after the restart: %v, want his seed note 4 only", got)
		}
		sam := mustList(t, n, "sam")
		if len(sam) != 1 || sam[0].Text != "Quarterly review on Friday" || sam[0].ID == "3" {
			t.Errorf("sam, who had none left, after the restart: %+v, want his seed note under a new id", sam)
		}
	})
}

// Processes starting together on one new database create the table once
// and seed each user once.
func TestNotesOpenTogetherSeedOnce(t *testing.T) {
	forEachNotesDB(t, func(t *testing.T, d notesDB) {
		dbs := make([]*sql.DB, 4)
		for i := range dbs {
			dbs[i] = d.open(t)
		}
		var wg sync.WaitGroup
		for _, db := range dbs {
			wg.Go(func() {
				if _, err := openNotes(context.Background(), db, d.postgres); err != nil {
					t.Errorf("openNotes: %v", err)
				}
			})
		}
		wg.Wait()
		n := d.notes(t)
		if got := ids(mustList(t, n, "alice")); !slices.Equal(got, []string{"1", "2"}) {
			t.Errorf("alice's notes after four starts: %v, want 1 and 2", got)
		}
		if users, total, err := n.stats(context.Background()); users != 3 || total != 4 || err != nil {
			t.Errorf("stats: %d users, %d notes, %v; want 3 and 4", users, total, err)
		}
	})
}
