package main

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/internal/sqltest"
)

// restart stops the example served by srv and a, once its turns are done,
// and serves it again with s, as a new process on the same database would.
func restart(t *testing.T, srv *httptest.Server, a *app, s settings) (*httptest.Server, *app) {
	t.Helper()
	srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.engine.Wait(ctx); err != nil {
		t.Fatalf("turns still running: %v", err)
	}
	if err := a.close(); err != nil {
		t.Fatal(err)
	}
	return newTestApp(t, s)
}

// forEachSQLStore runs f with settings for each SQL database the example
// supports: a SQLite file, and PostgreSQL when PARLEY_TEST_POSTGRES_DSN is
// set. The settings name the same database every time they are used.
func forEachSQLStore(t *testing.T, f func(t *testing.T, s settings)) {
	for name, s := range map[string]func(t *testing.T) settings{
		"sqlite":   func(t *testing.T) settings { return settings{DatabasePath: testDatabase(t)} },
		"postgres": func(t *testing.T) settings { return settings{DatabaseURL: sqltest.PostgresDSN(t)} },
	} {
		t.Run(name, func(t *testing.T) { f(t, s(t)) })
	}
}

// A transcript that says "I added the note as #5" is still true after a
// restart: the note is there, under that id, and the seed notes were not
// added again.
func TestDemoNotesSurviveARestart(t *testing.T) {
	forEachSQLStore(t, func(t *testing.T, s settings) {
		srv, a := newTestApp(t, s)
		bs := chat(t, srv, "alice", "add a note: buy bread")
		thread := bs[0].Meta.ThreadID
		bs = stream(t, srv, "alice", decision(thread, card(t, bs).ID, true))
		if md := markdown(bs); !strings.Contains(md, "I added the note “buy bread” as #5") {
			t.Fatalf("acknowledgment %q", md)
		}

		srv, a = restart(t, srv, a, s)
		if got := ids(notesOf(t, a, "alice")); !slices.Equal(got, []string{"1", "2", "5"}) {
			t.Errorf("alice's notes after the restart: %v, want 1, 2 and 5", got)
		}
		md := markdown(chat(t, srv, "alice", "show my notes"))
		if !strings.Contains(md, "#5 buy bread") || strings.Count(md, "Buy oat milk") != 1 {
			t.Errorf("alice's notes after the restart, as the model tells them: %q", md)
		}
		resp := doReq(t, srv, "GET", "/api/chat/threads/"+thread, "alice", "")
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("alice reloading her thread after the restart: %d", resp.StatusCode)
		}
	})
}

// A card shown for a note that was deleted, and whose text the seed brought
// back under a new id after a restart, cannot delete the new note: the id
// on the card names nothing any more.
func TestDemoOldCardCannotActOnAReseededNote(t *testing.T) {
	forEachSQLStore(t, func(t *testing.T, s settings) {
		srv, a := newTestApp(t, s)
		bs := chat(t, srv, "alice", "delete note 1")
		thread, c := bs[0].Meta.ThreadID, card(t, bs)
		if c.Content != "Delete note 1 (“Buy oat milk”)" {
			t.Fatalf("card %+v", c)
		}
		for _, id := range []string{"1", "2"} { // alice empties her notes some other way
			if _, ok, err := a.notes.remove(context.Background(), "alice", id); !ok || err != nil {
				t.Fatalf("remove %s: %v %v", id, ok, err)
			}
		}

		srv, a = restart(t, srv, a, s)
		reseeded := notesOf(t, a, "alice")
		if len(reseeded) != 2 || reseeded[0].Text != "Buy oat milk" || reseeded[0].ID == "1" {
			t.Fatalf("alice's notes after the restart: %+v, want the seed notes under new ids", reseeded)
		}
		bs = stream(t, srv, "alice", decision(thread, c.ID, true))
		if res := firstAfterMeta(t, bs); res.Kind != blocks.ToolResult || res.OK || res.ErrorCode != "NOT_FOUND" {
			t.Errorf("applying the old card: %+v, want NOT_FOUND", res)
		}
		if md := markdown(bs); !strings.Contains(md, "I could not do that: no note with id 1") {
			t.Errorf("answer %q", md)
		}
		if after := notesOf(t, a, "alice"); !slices.Equal(after, reseeded) {
			t.Errorf("alice's notes after the old card: %+v, want %+v untouched", after, reseeded)
		}
	})
}
