package memstore_test

import (
	"encoding/json"
	"testing"

	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/memstore"
	"github.com/parleyhq/parley/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(*testing.T) store.Store { return memstore.New() })
}

// The suite compares raw JSON as values, since SQL stores may re-encode it.
// The memory store keeps the bytes themselves.
func TestRawJSONKeptByteForByte(t *testing.T) {
	s := memstore.New()
	ctx := t.Context()
	th := store.Thread{OwnerID: "u"}
	if err := s.CreateThread(ctx, &th); err != nil {
		t.Fatal(err)
	}
	raw := json.RawMessage("{ \"b\" : 1,\n \"a\" : [ ] }")
	u := &store.Message{ThreadID: th.ID, Role: store.RoleUser}
	a := &store.Message{ThreadID: th.ID, Role: store.RoleAssistant, ModelMessages: raw}
	if err := s.AppendTurn(ctx, u, a); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetMessage(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.ModelMessages) != string(raw) {
		t.Errorf("ModelMessages = %q, want %q", got.ModelMessages, raw)
	}
}

func TestAppendTurnFillsEmptyAssistantThreadID(t *testing.T) {
	s := memstore.New()
	ctx := t.Context()
	th := store.Thread{OwnerID: "u"}
	if err := s.CreateThread(ctx, &th); err != nil {
		t.Fatal(err)
	}
	u := &store.Message{ThreadID: th.ID, Role: store.RoleUser}
	a := &store.Message{Role: store.RoleAssistant}
	if err := s.AppendTurn(ctx, u, a); err != nil {
		t.Fatal(err)
	}
	if a.ThreadID != th.ID {
		t.Errorf("assistant ThreadID = %q, want %q", a.ThreadID, th.ID)
	}
}

func TestAppendTurnLeavesMessagesUnfilledOnError(t *testing.T) {
	s := memstore.New()
	u := &store.Message{ThreadID: "missing", Role: store.RoleUser}
	a := &store.Message{Role: store.RoleAssistant}
	if err := s.AppendTurn(t.Context(), u, a); err == nil {
		t.Fatal("AppendTurn to a missing thread succeeded")
	}
	if u.ID != "" || a.ID != "" || u.Seq != 0 || !u.CreatedAt.IsZero() || a.ThreadID != "" {
		t.Errorf("failed AppendTurn filled the messages: %+v, %+v", u, a)
	}
}
