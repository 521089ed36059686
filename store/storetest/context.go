package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/parleyhq/parley/store"
)

var contextCases = []testCase{
	{"CanceledContextFailsEveryMethodAndWritesNothing", testCanceledContext},
}

// namedCall is one store method invoked with a canceled context, named for
// the failure message.
type namedCall struct {
	name string
	call func() error
}

// wantCanceled runs each call, which must use an already-canceled context,
// and reports any that succeeds. An error that does not wrap
// context.Canceled is only logged.
func wantCanceled(t *testing.T, calls []namedCall) {
	t.Helper()
	for _, c := range calls {
		err := c.call()
		switch {
		case err == nil:
			t.Errorf("%s with a canceled context succeeded, want an error", c.name)
		case !errors.Is(err, context.Canceled):
			// Allowed (a driver may report cancellation its own way), but
			// wrapping ctx.Err() is better for callers.
			t.Logf("%s with a canceled context: %v (does not wrap context.Canceled)", c.name, err)
		}
	}
}

func testCanceledContext(t *testing.T, s store.Store) {
	th := newThread(t, s, "user-1", at(1))
	u, a := appendTurn(t, s, th.ID, "q")
	thBefore := getThread(t, s, th.ID)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()

	newID := uuid.NewString()
	nu, na := newTurn(th.ID, "after cancel")
	eu, ea := newTurn(th.ID, "edit after cancel")
	eu.Replaces = u.ID
	upd := cloneMessage(a)
	upd.Status, upd.Blocks, upd.UpdatedAt = store.StatusComplete, sampleBlocks(), at(9)

	calls := []namedCall{
		{"CreateThread", func() error {
			return s.CreateThread(ctx, &store.Thread{ID: newID, OwnerID: "user-1"})
		}},
		{"GetThread", func() error { _, err := s.GetThread(ctx, th.ID); return err }},
		{"ListThreads", func() error { _, err := s.ListThreads(ctx, "user-1", store.ListOptions{}); return err }},
		{"RenameThread", func() error { return s.RenameThread(ctx, th.ID, "renamed") }},
		{"ArchiveThread", func() error { return s.ArchiveThread(ctx, th.ID, at(2)) }},
		{"RequestCancel", func() error { return s.RequestCancel(ctx, th.ID, at(2)) }},
		{"ClearCancel", func() error { return s.ClearCancel(ctx, th.ID) }},
		{"SetSummary", func() error { return s.SetSummary(ctx, th.ID, "summary", 2, 0) }},
		{"DeleteThread", func() error { return s.DeleteThread(ctx, th.ID) }},
		{"AppendTurn", func() error { return s.AppendTurn(ctx, nu, na) }},
		{"AppendTurn replacing", func() error { return s.AppendTurn(ctx, eu, ea) }},
		{"UpdateMessage", func() error { return s.UpdateMessage(ctx, &upd) }},
		{"GetMessage", func() error { _, err := s.GetMessage(ctx, a.ID); return err }},
		{"ListMessages", func() error { _, err := s.ListMessages(ctx, th.ID); return err }},
	}
	wantCanceled(t, calls)

	// Nothing the canceled calls attempted happened.
	_, err := s.GetThread(t.Context(), newID)
	wantErr(t, err, store.ErrNotFound, "GetThread of the thread created with a canceled context")
	if d := diffThread(getThread(t, s, th.ID), thBefore); d != "" {
		t.Errorf("calls with a canceled context changed the thread: %s", d)
	}
	ms := listMessages(t, s, th.ID)
	if len(ms) != 2 {
		t.Fatalf("calls with a canceled context left %d messages, want 2", len(ms))
	}
	if d := diffMessage(ms[0], u); d != "" {
		t.Errorf("user message changed: %s", d)
	}
	if d := diffMessage(ms[1], a); d != "" {
		t.Errorf("assistant message changed: %s", d)
	}
}
