package assistant_test

import (
	"context"
	"testing"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store"
)

// Streaming is true for the owner's thread while its answer streams, by
// the thread's id or its chat's name, and false for another user (staff
// included, and nothing audited), an unknown id and after the answer ends.
func TestStreamingIsTheOwnersRunningAnswerOnly(t *testing.T) {
	h := newHarness(t, fake.New(slowTurn()))
	sam := parley.User{ID: "sam", Roles: []string{"user", "staff"}}
	meta, rest := startTurn(t, h.eng, assistant.Request{ThreadID: "my-chat", CreateThread: true, Message: "x"})
	for _, c := range []struct {
		u    parley.User
		id   string
		want bool
	}{
		{alice, meta.ThreadID, true}, {alice, "my-chat", true},
		{bob, meta.ThreadID, false}, {sam, meta.ThreadID, false}, {alice, "no-such-thread", false},
	} {
		if got, err := h.eng.Streaming(context.Background(), c.u, c.id); err != nil || got != c.want {
			t.Errorf("Streaming(%s, %s) = %v, %v; want %v", c.u.ID, c.id, got, err, c.want)
		}
	}
	<-rest
	if err := h.eng.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, err := h.eng.Streaming(context.Background(), alice, meta.ThreadID); err != nil || got {
		t.Errorf("Streaming after the answer ended = %v, %v; want false", got, err)
	}
	evs, err := h.store.ListAudit(context.Background(), store.AuditFilter{ThreadID: meta.ThreadID})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Kind == assistant.AuditThreadRead {
			t.Errorf("Streaming audited a read: %+v", ev)
		}
	}
}
