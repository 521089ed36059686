package storetest

import (
	"encoding/json"
	"testing"

	"github.com/google/uuid"

	"github.com/parleyhq/parley/store"
)

var auditCases = []testCase{
	{"AppendThenListRoundTripsAllFields", testAuditRoundTrip},
	{"AppendFillsIDAndTime", testAuditFills},
	{"AppendWithoutKindOrActorIsInvalid", testAuditInvalid},
	{"AppendWithTakenIDConflicts", testAuditConflict},
	{"ListFiltersNewestFirstWithLimit", testAuditList},
	{"EventsOutliveTheirThread", testAuditOutlivesThread},
}

func testAuditRoundTrip(t *testing.T, s store.Store) {
	e := store.AuditEvent{ID: uuid.NewString(), Kind: "guard.input", ActorID: "user-1", ThreadID: "thread-9",
		Data: json.RawMessage(`{"categories":["iban"],"severity":"high"}`), CreatedAt: at(5)}
	in := e
	must(t, s.AppendAudit(t.Context(), &in), "AppendAudit")
	got, err := s.ListAudit(t.Context(), store.AuditFilter{})
	must(t, err, "ListAudit")
	if len(got) != 1 {
		t.Fatalf("ListAudit returned %d events, want 1", len(got))
	}
	g := got[0]
	if g.ID != e.ID || g.Kind != e.Kind || g.ActorID != e.ActorID || g.ThreadID != e.ThreadID ||
		!g.CreatedAt.Equal(e.CreatedAt) || !jsonEqual(g.Data, e.Data) {
		t.Errorf("ListAudit = %+v, want %+v", g, e)
	}
}

func testAuditFills(t *testing.T, s store.Store) {
	e := store.AuditEvent{Kind: "tool.call", ActorID: "user-1"}
	must(t, s.AppendAudit(t.Context(), &e), "AppendAudit")
	if !isUUID(e.ID) {
		t.Errorf("AppendAudit filled ID %q, want a UUID", e.ID)
	}
	wantNow(t, "CreatedAt", e.CreatedAt)
	got, err := s.ListAudit(t.Context(), store.AuditFilter{})
	must(t, err, "ListAudit")
	if len(got) != 1 || got[0].ID != e.ID || !got[0].CreatedAt.Equal(e.CreatedAt) {
		t.Errorf("ListAudit = %+v, want the filled event %+v", got, e)
	}
}

func testAuditInvalid(t *testing.T, s store.Store) {
	wantErr(t, s.AppendAudit(t.Context(), &store.AuditEvent{ActorID: "user-1"}), store.ErrInvalid, "AppendAudit without kind")
	wantErr(t, s.AppendAudit(t.Context(), &store.AuditEvent{Kind: "tool.call"}), store.ErrInvalid, "AppendAudit without actor")
	if got, _ := s.ListAudit(t.Context(), store.AuditFilter{}); len(got) != 0 {
		t.Errorf("invalid events were stored: %+v", got)
	}
}

func testAuditConflict(t *testing.T, s store.Store) {
	id := uuid.NewString()
	must(t, s.AppendAudit(t.Context(), &store.AuditEvent{ID: id, Kind: "a", ActorID: "u"}), "AppendAudit")
	wantErr(t, s.AppendAudit(t.Context(), &store.AuditEvent{ID: id, Kind: "b", ActorID: "u"}), store.ErrConflict, "AppendAudit with a taken id")
}

func testAuditList(t *testing.T, s store.Store) {
	add := func(kind, actor, thread string, minute int) string {
		e := store.AuditEvent{Kind: kind, ActorID: actor, ThreadID: thread, CreatedAt: at(minute)}
		must(t, s.AppendAudit(t.Context(), &e), "AppendAudit")
		return e.ID
	}
	// Inserted out of time order: listing is by CreatedAt, newest first.
	a := add("tool.call", "alice", "t1", 3)
	b := add("guard.input", "alice", "t2", 1)
	c := add("tool.call", "bob", "t1", 2)
	d := add("tool.call", "alice", "t1", 4)
	for _, tc := range []struct {
		name string
		f    store.AuditFilter
		want []string
	}{
		{"all", store.AuditFilter{}, []string{d, a, c, b}},
		{"kind", store.AuditFilter{Kind: "tool.call"}, []string{d, a, c}},
		{"actor", store.AuditFilter{ActorID: "alice"}, []string{d, a, b}},
		{"thread", store.AuditFilter{ThreadID: "t1", ActorID: "alice"}, []string{d, a}},
		{"limit keeps newest", store.AuditFilter{Limit: 2}, []string{d, a}},
		{"no match", store.AuditFilter{Kind: "nope"}, nil},
	} {
		got, err := s.ListAudit(t.Context(), tc.f)
		must(t, err, "ListAudit")
		var ids []string
		for _, e := range got {
			ids = append(ids, e.ID)
		}
		if len(ids) != len(tc.want) {
			t.Errorf("%s: got %d events, want %d", tc.name, len(ids), len(tc.want))
			continue
		}
		for i := range ids {
			if ids[i] != tc.want[i] {
				t.Errorf("%s: event %d = %s, want %s (newest first)", tc.name, i, ids[i], tc.want[i])
			}
		}
	}
}

func testAuditOutlivesThread(t *testing.T, s store.Store) {
	th := newThread(t, s, "user-1", at(0))
	must(t, s.AppendAudit(t.Context(), &store.AuditEvent{Kind: "tool.call", ActorID: "user-1", ThreadID: th.ID}), "AppendAudit")
	must(t, s.DeleteThread(t.Context(), th.ID), "DeleteThread")
	got, err := s.ListAudit(t.Context(), store.AuditFilter{ThreadID: th.ID})
	must(t, err, "ListAudit")
	if len(got) != 1 {
		t.Errorf("deleting the thread removed its audit events: %d left, want 1", len(got))
	}
}
