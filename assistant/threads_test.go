package assistant_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
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
	ctx := context.Background()
	r, _, err := h.collect(t, alice, assistant.Request{ThreadID: "chat-abc", CreateThread: true, Message: "one"})
	if err != nil || r.ThreadID == "" {
		t.Fatalf("first message: thread %q, %v", r.ThreadID, err)
	}
	if th, _, err := h.eng.Thread(ctx, alice, "chat-abc", assistant.ThreadOptions{}); err != nil || th.ID != r.ThreadID {
		t.Errorf("the chat reads as thread %q, %v; the first meta block said %q", th.ID, err, r.ThreadID)
	}
	if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: "chat-abc", CreateThread: true, Message: "two"}); err != nil {
		t.Fatal(err)
	}
	// The stored id names the chat too: a client that reloads it from the
	// thread list continues it.
	if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: r.ThreadID, CreateThread: true, Message: "three"}); err != nil {
		t.Fatal(err)
	}
	reqs := p.Requests()
	if got := userTexts(reqs[len(reqs)-1]); strings.Join(got, ",") != "one,two,three" {
		t.Errorf("the later messages did not continue the thread: %v", got)
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

// A chat name is the user's own: bob naming his chat as alice named hers,
// or by her chat's stored id, gets what a name never used gets (a new
// thread of his own), never her thread, a conflict or any other sign that
// it exists. Where a thread id is taken, his own chat name names his
// chat, and hers is not found for him, as a name never used is.
func TestChatNamesAreScopedPerUser(t *testing.T) {
	h := newHarness(t, echoModel())
	ctx := context.Background()
	mine, _, err := h.collect(t, alice, assistant.Request{ThreadID: "shared-name", CreateThread: true, Message: "alice's"})
	if err != nil {
		t.Fatal(err)
	}
	storedID := func(u parley.User, name string) (string, error) {
		th, _, err := h.eng.Thread(ctx, u, name, assistant.ThreadOptions{})
		return th.ID, err
	}
	for _, name := range []string{"shared-name", mine.ThreadID, "never-used"} {
		if _, err := storedID(bob, name); !errors.Is(err, assistant.ErrNotFound) {
			t.Errorf("bob reading %q: %v, want not found", name, err)
		}
		if err := h.eng.Cancel(ctx, bob, name); !errors.Is(err, assistant.ErrNotFound) {
			t.Errorf("bob cancelling %q: %v, want not found", name, err)
		}
	}
	shape := func(name string) (string, []blocks.Block) {
		t.Helper()
		r, bs, err := h.collect(t, bob, assistant.Request{ThreadID: name, CreateThread: true, Message: "bob's"})
		if err != nil {
			t.Fatalf("bob on %q: %v", name, err)
		}
		if r.ThreadID == mine.ThreadID {
			t.Fatalf("bob on %q wrote to alice's thread", name)
		}
		if n := len(h.messages(t, r.ThreadID)); n != 2 {
			t.Errorf("bob's chat %q holds %d messages, want his 2", name, n)
		}
		return r.ThreadID, bs
	}
	_, fresh := shape("never-used")
	for _, name := range []string{"shared-name", mine.ThreadID} {
		id, bs := shape(name)
		if !slices.Equal(kinds(bs), kinds(fresh)) {
			t.Errorf("bob on alice's %q streamed %v; on a name never used, %v", name, kinds(bs), kinds(fresh))
		}
		if got, err := storedID(bob, name); err != nil || got != id {
			t.Errorf("bob's chat %q reads as %q, %v, want %q", name, got, err, id)
		}
		// Bob's writes by the name reach his chat only.
		if _, err := h.eng.RenameThread(ctx, bob, name, "bob's title"); err != nil {
			t.Errorf("bob renaming his chat %q: %v", name, err)
		}
		if err := h.eng.ArchiveThread(ctx, bob, name); err != nil {
			t.Errorf("bob archiving his chat %q: %v", name, err)
		}
	}
	th, msgs, err := h.eng.Thread(ctx, alice, "shared-name", assistant.ThreadOptions{})
	if err != nil || th.ID != mine.ThreadID || th.ArchivedAt != nil || th.Title == "bob's title" || len(msgs) != 2 || msgs[0].Content != "alice's" {
		t.Errorf("alice's chat after bob's: %+v, %d messages, %v", th, len(msgs), err)
	}
}

// A chat name is what generated ids are made of, and what the AI SDK's
// resume URL can carry as is: anything else is refused, naming the rule.
func TestChatNamesWithOtherCharactersAreRefused(t *testing.T) {
	h := newHarness(t, echoModel())
	for _, name := range []string{"a/b", "a b", "../x", "chat?x", "é", "a%2F", strings.Repeat("x", assistant.MaxChatIDBytes+1)} {
		_, _, err := h.collect(t, alice, assistant.Request{ThreadID: name, CreateThread: true, Message: "hi"})
		var ae *assistant.Error
		if !errors.As(err, &ae) || !errors.Is(err, assistant.ErrInvalidRequest) || !strings.Contains(ae.UserMessage(), "ASCII letter, a digit, '-' or '_'") {
			t.Errorf("chat %q: %v", name, err)
		}
	}
	for _, name := range []string{"x", "Chat_1-a", "0b2f3c1e-9a4d-4c4e-8f1a-2b3c4d5e6f70", strings.Repeat("x", assistant.MaxChatIDBytes)} {
		if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: name, CreateThread: true, Message: "hi"}); err != nil {
			t.Errorf("chat %q: %v", name, err)
		}
	}
}
