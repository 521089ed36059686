package assistant_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store"
)

// The owner renames a thread; the title is made one clean line and cut;
// nobody else may rename it, staff included, and an empty title is refused.
func TestRenameThread(t *testing.T) {
	h := newHarness(t, fake.New())
	id, _, err := newHarnessThread(t, h)
	if err != nil {
		t.Fatal(err)
	}
	th, err := h.eng.RenameThread(context.Background(), alice, id, "  Trip\tto\n\nLisbon \x07 plans  ")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := h.store.GetThread(context.Background(), id)
	if th.Title != "Trip to Lisbon plans" || got.Title != th.Title {
		t.Errorf("title %q, stored %q, want one clean line", th.Title, got.Title)
	}
	long, _ := h.eng.RenameThread(context.Background(), alice, id, strings.Repeat("é", 300))
	if len(long.Title) > assistant.MaxTitleBytes || long.Title == "" {
		t.Errorf("a %d-byte title was kept", len(long.Title))
	}
	for _, c := range []struct {
		name   string
		by     parley.User
		thread string
		title  string
		want   error
	}{
		{"staff", sam, id, "mine now", assistant.ErrNotFound},
		{"another user", bob, id, "mine now", assistant.ErrNotFound},
		{"empty", alice, id, " \n\t ", assistant.ErrInvalidRequest},
		{"NUL", alice, id, "a\x00b", assistant.ErrInvalidRequest},
		{"missing thread", alice, "no-such-thread", "x", assistant.ErrNotFound},
	} {
		if _, err := h.eng.RenameThread(context.Background(), c.by, c.thread, c.title); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
	}
}

// The owner deletes a thread for good, archived or not; its messages go
// with it, the deletion is audited, and nobody else may delete it.
func TestDeleteThreadForGood(t *testing.T) {
	h := newHarness(t, fake.New())
	id, _, err := newHarnessThread(t, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []parley.User{sam, bob} {
		if err := h.eng.DeleteThread(context.Background(), u, id); !errors.Is(err, assistant.ErrNotFound) {
			t.Errorf("%s deleting alice's thread: %v, want ErrNotFound", u.ID, err)
		}
	}
	if err := h.eng.ArchiveThread(context.Background(), alice, id); err != nil {
		t.Fatal(err)
	}
	if err := h.eng.DeleteThread(context.Background(), alice, id); err != nil {
		t.Fatalf("deleting an archived thread: %v", err)
	}
	if _, err := h.store.GetThread(context.Background(), id); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the thread is still stored: %v", err)
	}
	if msgs, _ := h.store.ListMessages(context.Background(), id); len(msgs) != 0 {
		t.Errorf("%d messages left behind", len(msgs))
	}
	ev, _ := h.store.ListAudit(context.Background(), store.AuditFilter{Kind: assistant.AuditThreadDeleted})
	if len(ev) != 1 || ev[0].ActorID != "alice" || ev[0].ThreadID != id {
		t.Errorf("audit %+v, want alice's deletion", ev)
	}
	if err := h.eng.DeleteThread(context.Background(), alice, id); !errors.Is(err, assistant.ErrNotFound) {
		t.Errorf("deleting twice: %v, want ErrNotFound", err)
	}
}

// Every path that shows staff another user's thread is on the record:
// the transcript and the state of its cards alike.
func TestStaffReadsAreAuditedOnEveryReadPath(t *testing.T) {
	h := newHarness(t, fake.New())
	id, _, err := newHarnessThread(t, h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.eng.Proposals(context.Background(), sam, id); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.eng.Thread(context.Background(), sam, id, assistant.ThreadOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.eng.Proposals(context.Background(), alice, id); err != nil {
		t.Fatal(err)
	}
	ev, _ := h.store.ListAudit(context.Background(), store.AuditFilter{Kind: assistant.AuditThreadRead})
	var reads []string
	for _, e := range ev {
		if e.ActorID != "sam" || e.ThreadID != id {
			t.Errorf("audit row %+v", e)
		}
		reads = append(reads, string(e.Data))
	}
	slices.Sort(reads)
	want := []string{`{"owner":"alice","read":"proposals"}`, `{"owner":"alice"}`}
	if strings.Join(reads, " ") != strings.Join(want, " ") {
		t.Errorf("audited reads %v, want %v (the owner's own read is not audited)", reads, want)
	}
}

func TestCreateThreadNamesANewThreadAndContinuesIt(t *testing.T) {
	p := echoModel()
	h := newHarness(t, p)
	r, _, err := h.collect(t, alice, assistant.Request{ThreadID: "chat-abc", CreateThread: true, Message: "one"})
	if err != nil || r.ThreadID != "chat-abc" {
		t.Fatalf("first message: thread %q, %v", r.ThreadID, err)
	}
	if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: "chat-abc", CreateThread: true, Message: "two"}); err != nil {
		t.Fatal(err)
	}
	reqs := p.Requests()
	if got := userTexts(reqs[len(reqs)-1]); strings.Join(got, ",") != "one,two" {
		t.Errorf("the second message did not continue the thread: %v", got)
	}
	_, _, err = h.collect(t, bob, assistant.Request{ThreadID: "chat-abc", CreateThread: true, Message: "mine?"})
	if !errors.Is(err, assistant.ErrConflict) {
		t.Errorf("another user's thread id: %v, want conflict", err)
	}
	if n := len(h.messages(t, "chat-abc")); n != 4 {
		t.Errorf("bob's attempt wrote to alice's thread: %d messages", n)
	}
	for _, req := range []assistant.Request{
		{CreateThread: true, Message: "x"},
		{ThreadID: strings.Repeat("x", 200), CreateThread: true, Message: "x"},
		{ThreadID: "chat-abc", CreateThread: true, Regenerate: true},
	} {
		if _, _, err := h.collect(t, alice, req); !errors.Is(err, assistant.ErrInvalidRequest) {
			t.Errorf("%+v: %v", req, err)
		}
	}
}
