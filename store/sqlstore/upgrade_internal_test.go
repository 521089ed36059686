package sqlstore

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/parleyhq/parley/internal/sqlmigrate"
	"github.com/parleyhq/parley/internal/sqltest"
	"github.com/parleyhq/parley/store"
)

// A database at schema version 2, with threads in it, is brought to the
// latest version by Migrate without losing them, and its threads take
// proposals afterwards.
func TestMigrateFromVersion2KeepsThreads(t *testing.T) {
	for _, c := range []struct {
		name string
		open func(testing.TB) *sql.DB
	}{
		{"SQLiteFile", sqltest.SQLiteFile},
		{"Postgres", sqltest.Postgres},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(c.open(t), Options{})
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			ms, err := schema.Migrations(string(s.dialect))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.write(ctx, func(q querier) error {
				return sqlmigrate.Apply(ctx, q, s.dialect == Postgres, schema.Name, ms[:2], ErrSchemaTooNew)
			}); err != nil {
				t.Fatalf("migrating to version 2: %v", err)
			}
			th := store.Thread{OwnerID: "u"}
			if err := s.CreateThread(ctx, &th); err != nil {
				t.Fatal(err)
			}
			if err := s.Migrate(ctx); err != nil {
				t.Fatalf("Migrate from version 2: %v", err)
			}
			if cur, latest, err := s.SchemaVersion(ctx); err != nil || cur != latest || cur < 3 {
				t.Errorf("SchemaVersion = %d, %d, %v; want the latest (at least 3) twice", cur, latest, err)
			}
			if _, err := s.GetThread(ctx, th.ID); err != nil {
				t.Errorf("the thread written at version 2: %v", err)
			}
			p := store.Proposal{Token: "tok", UserID: "u", ThreadID: th.ID, Tool: "t", ExpiresAt: time.Now().Add(time.Hour)}
			if err := s.CreateProposal(ctx, &p); err != nil {
				t.Errorf("CreateProposal after the upgrade: %v", err)
			}
		})
	}
}

// Rows written at schema version 3, before free text was escaped on
// PostgreSQL and while its JSON columns were jsonb and json, read back the
// same after Migrate to the latest version: the migration escapes the
// U+0001 they hold instead of letting it read as an escape, and converts the
// JSON columns without losing a value (jsonb's canonical form is kept, the
// json Args byte for byte).
func TestMigrateFromVersion3KeepsText(t *testing.T) {
	for _, c := range []struct {
		name string
		open func(testing.TB) *sql.DB
	}{
		{"SQLiteFile", sqltest.SQLiteFile},
		{"Postgres", sqltest.Postgres},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(c.open(t), Options{})
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			ms, err := schema.Migrations(string(s.dialect))
			if err != nil {
				t.Fatal(err)
			}
			when := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
			const (
				title   = "old \x01 title ✓ \x010"
				content = "old \x01 content"
				summary = "sum \x01 mary"
				callID  = "call\x01x41"
				rawArgs = "{ \"vm\" : \"x\\u0001\",  \"n\": 1.50 }"
				mm      = `{"b": 1, "a": "\u0001 \ud83d\ude00"}`
				data    = `{"k": "\u0001"}`
			)
			// The statements of version 3's code: every value as it is.
			inserts := []struct {
				q string
				a *args
			}{
				{`INSERT INTO parley_threads (id, owner_id, title, created_at, updated_at, last_seq) VALUES (?, ?, ?, ?, ?, 1)`,
					s.args(5).add("th", "u", title).time(when).time(when)},
				{`INSERT INTO parley_messages (id, thread_id, seq, role, status, content, blocks, model_messages,
					input_tokens, output_tokens, guard_action, guard_severity, guard_categories, guard_exclude,
					created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
					s.args(16).add("m1", "th", 1, "user", "complete", content,
						`[{"kind":"markdown","content":"a\u0001b ü"}]`, mm, 0, 0, "", "", `["iban"]`, false).time(when).time(when)},
				{`INSERT INTO parley_proposals (` + proposalInsert + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
					s.args(12).add("tok", "u", "th", "m1", callID, "reboot_vm", rawArgs, "hash", summary, "pending").
						time(when).time(when.Add(time.Hour))},
				{`INSERT INTO parley_audit (id, kind, actor_id, thread_id, data, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
					s.args(6).add("e1", "tool.call", "u", "th", data).time(when)},
			}
			if err := s.write(ctx, func(q querier) error {
				if err := sqlmigrate.Apply(ctx, q, s.dialect == Postgres, schema.Name, ms[:3], ErrSchemaTooNew); err != nil {
					return err
				}
				for _, in := range inserts {
					if _, err := q.ExecContext(ctx, s.rebind(in.q), in.a.a...); err != nil {
						return fmt.Errorf("%s: %w", in.q, err)
					}
				}
				return nil
			}); err != nil {
				t.Fatalf("writing at version 3: %v", err)
			}
			if err := s.Migrate(ctx); err != nil {
				t.Fatalf("Migrate from version 3: %v", err)
			}

			th, err := s.GetThread(ctx, "th")
			if err != nil || th.Title != title {
				t.Errorf("GetThread = %q, %v; want title %q", th.Title, err, title)
			}
			m, err := s.GetMessage(ctx, "m1")
			if err != nil {
				t.Fatal(err)
			}
			if m.Content != content {
				t.Errorf("Content = %q, want %q", m.Content, content)
			}
			if len(m.Blocks) != 1 || m.Blocks[0].Content != "a\x01b ü" {
				t.Errorf("Blocks = %+v, want one markdown block of %q", m.Blocks, "a\x01b ü")
			}
			if !sameJSON(t, m.ModelMessages, mm) {
				t.Errorf("ModelMessages = %s, want the value of %s", m.ModelMessages, mm)
			}
			if len(m.Guard.Categories) != 1 || m.Guard.Categories[0] != "iban" {
				t.Errorf("Guard.Categories = %q, want [iban]", m.Guard.Categories)
			}
			p, err := s.GetProposal(ctx, "tok")
			if err != nil {
				t.Fatal(err)
			}
			if string(p.Args) != rawArgs || p.Summary != summary || p.CallID != callID {
				t.Errorf("proposal Args, Summary, CallID = %q, %q, %q; want %q, %q, %q",
					p.Args, p.Summary, p.CallID, rawArgs, summary, callID)
			}
			es, err := s.ListAudit(ctx, store.AuditFilter{})
			if err != nil || len(es) != 1 || !sameJSON(t, es[0].Data, data) {
				t.Errorf("ListAudit = %+v, %v; want one event with data %s", es, err, data)
			}

			// And the upgraded database takes what version 3 could not.
			nul := store.Thread{OwnerID: "u", Title: "nul\x00"}
			if err := s.CreateThread(ctx, &nul); err != nil {
				t.Errorf("CreateThread with a NUL after the upgrade: %v", err)
			} else if got, err := s.GetThread(ctx, nul.ID); err != nil || got.Title != nul.Title {
				t.Errorf("GetThread = %q, %v; want %q", got.Title, err, nul.Title)
			}
		})
	}
}

// Messages written at schema version 6, before messages had a source,
// read back after Migrate as typed (Source empty) with their Replaces and
// SupersededAt kept, and the upgraded database stores a source.
func TestMigrateFromVersion6ReadsMessagesAsTyped(t *testing.T) {
	for _, c := range []struct {
		name string
		open func(testing.TB) *sql.DB
	}{
		{"SQLiteFile", sqltest.SQLiteFile},
		{"Postgres", sqltest.Postgres},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(c.open(t), Options{})
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			ms, err := schema.Migrations(string(s.dialect))
			if err != nil {
				t.Fatal(err)
			}
			when := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
			// The columns of version 6, named: messageColumns has the latest.
			const insertMessage = `INSERT INTO parley_messages (id, thread_id, seq, role, status, content, blocks,
				model_messages, input_tokens, output_tokens, guard_action, guard_severity, guard_categories,
				guard_exclude, replaces, superseded_at, created_at, updated_at)
				VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, 0, 0, '', '', NULL, ?, ?, ?, ?, ?)`
			inserts := []struct {
				q string
				a *args
			}{
				{`INSERT INTO parley_threads (id, owner_id, title, created_at, updated_at, last_seq) VALUES (?, ?, ?, ?, ?, 3)`,
					s.args(5).add("th", "u", "old").time(when).time(when)},
				{insertMessage, s.args(11).add("m1", "th", 1, "user", "complete", "first", false, "").
					time(when).time(when).time(when)},
				{insertMessage, s.args(11).add("m2", "th", 2, "assistant", "complete", "", false, "").
					time(when).time(when).time(when)},
				{insertMessage, s.args(11).add("m3", "th", 3, "user", "complete", "edited", false, "m1").
					timePtr(nil).time(when).time(when)},
			}
			if err := s.write(ctx, func(q querier) error {
				if err := sqlmigrate.Apply(ctx, q, s.dialect == Postgres, schema.Name, ms[:6], ErrSchemaTooNew); err != nil {
					return err
				}
				for _, in := range inserts {
					if _, err := q.ExecContext(ctx, s.rebind(in.q), in.a.a...); err != nil {
						return fmt.Errorf("%s: %w", in.q, err)
					}
				}
				return nil
			}); err != nil {
				t.Fatalf("writing at version 6: %v", err)
			}
			if err := s.Migrate(ctx); err != nil {
				t.Fatalf("Migrate from version 6: %v", err)
			}

			got, err := s.ListMessages(ctx, "th")
			if err != nil || len(got) != 3 {
				t.Fatalf("ListMessages = %d messages, %v; want 3", len(got), err)
			}
			for i, m := range got {
				if m.Source != store.SourceTyped {
					t.Errorf("message %d Source = %q, want typed (empty)", m.Seq, m.Source)
				}
				if wantGone := i < 2; (m.SupersededAt != nil) != wantGone {
					t.Errorf("message %d SupersededAt = %v, want set %v", m.Seq, m.SupersededAt, wantGone)
				}
			}
			if got[2].Replaces != "m1" {
				t.Errorf("Replaces = %q, want m1", got[2].Replaces)
			}

			u := store.Message{ThreadID: "th", Role: store.RoleUser, Status: store.StatusComplete, Source: store.SourceForm}
			a := store.Message{Role: store.RoleAssistant, Status: store.StatusStreaming}
			if err := s.AppendTurn(ctx, &u, &a); err != nil {
				t.Fatalf("AppendTurn after the upgrade: %v", err)
			}
			if m, err := s.GetMessage(ctx, u.ID); err != nil || m.Source != store.SourceForm {
				t.Errorf("GetMessage = Source %q, %v; want %q", m.Source, err, store.SourceForm)
			}
		})
	}
}

// sameJSON reports whether got and want hold the same JSON value.
func sameJSON(t *testing.T, got []byte, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Errorf("stored JSON %s: %v", got, err)
		return false
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(g, w)
}
