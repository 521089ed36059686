package assistant_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store"
)

// A user rates an answer of their own thread, changes the rating, and
// withdraws it; one rating per user per message; every change is audited
// without the comment.
func TestFeedbackOnAnAnswer(t *testing.T) {
	p := fake.New()
	p.SetDefault(fake.Turn{fake.Text("Paris is the capital of France.")})
	h := newHarness(t, p)
	reply, _, err := h.collect(t, alice, assistant.Request{Message: "capital of France?"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	f, err := h.eng.SetFeedback(ctx, alice, reply.ThreadID, reply.MessageID,
		assistant.FeedbackInput{Rating: store.RatingDown, Category: "inaccurate\nreally", Comment: "my email is x@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if f.Category != "inaccurate really" || f.ThreadID != reply.ThreadID {
		t.Errorf("stored %+v", f)
	}
	if _, err := h.eng.SetFeedback(ctx, alice, reply.ThreadID, reply.MessageID, assistant.FeedbackInput{Rating: store.RatingUp}); err != nil {
		t.Fatal(err)
	}
	fb, err := h.eng.Feedback(ctx, alice, reply.ThreadID)
	if err != nil || len(fb) != 1 || fb[0].Rating != store.RatingUp {
		t.Fatalf("feedback %+v, %v: want one rating, changed to up", fb, err)
	}
	if err := h.eng.DeleteFeedback(ctx, alice, reply.ThreadID, reply.MessageID); err != nil {
		t.Fatal(err)
	}
	if fb, _ := h.eng.Feedback(ctx, alice, reply.ThreadID); len(fb) != 0 {
		t.Errorf("feedback after withdrawal: %+v", fb)
	}
	ev, _ := h.store.ListAudit(ctx, store.AuditFilter{Kind: assistant.AuditFeedback})
	if len(ev) != 3 {
		t.Errorf("%d feedback audit rows, want 3 (set, change, withdraw)", len(ev))
	}
	for _, e := range ev {
		if strings.Contains(string(e.Data), "example.com") {
			t.Errorf("the comment reached the audit: %s", e.Data)
		}
	}
}

// Only an answer of one's own thread can be rated: another user, a user
// message, a message of another thread and bad ratings are refused.
func TestFeedbackIsRefusedWhereItDoesNotBelong(t *testing.T) {
	p := fake.New()
	p.SetDefault(fake.Turn{fake.Text("ok")})
	h := newHarness(t, p)
	a, _, err := h.collect(t, alice, assistant.Request{Message: "one"})
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := h.collect(t, alice, assistant.Request{Message: "two"})
	if err != nil {
		t.Fatal(err)
	}
	up := assistant.FeedbackInput{Rating: store.RatingUp}
	for _, c := range []struct {
		name           string
		thread, msg    string
		in             assistant.FeedbackInput
		want           error
		asBob, asStaff bool
	}{
		{"another user", a.ThreadID, a.MessageID, up, assistant.ErrNotFound, true, false},
		{"staff", a.ThreadID, a.MessageID, up, assistant.ErrNotFound, false, true},
		{"a user message", a.ThreadID, a.UserMessageID, up, assistant.ErrNotFound, false, false},
		{"another thread's message", a.ThreadID, b.MessageID, up, assistant.ErrNotFound, false, false},
		{"no rating", a.ThreadID, a.MessageID, assistant.FeedbackInput{}, assistant.ErrInvalidRequest, false, false},
		{"bad rating", a.ThreadID, a.MessageID, assistant.FeedbackInput{Rating: "meh"}, assistant.ErrInvalidRequest, false, false},
		{"NUL", a.ThreadID, a.MessageID, assistant.FeedbackInput{Rating: store.RatingUp, Comment: "a\x00"}, assistant.ErrInvalidRequest, false, false},
		{"long comment", a.ThreadID, a.MessageID, assistant.FeedbackInput{Rating: store.RatingUp, Comment: strings.Repeat("x", assistant.MaxFeedbackCommentBytes+1)}, assistant.ErrTooLarge, false, false},
	} {
		u := alice
		if c.asBob {
			u = bob
		} else if c.asStaff {
			u = sam
		}
		if _, err := h.eng.SetFeedback(context.Background(), u, c.thread, c.msg, c.in); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
	}
	if fb, _ := h.eng.Feedback(context.Background(), alice, a.ThreadID); len(fb) != 0 {
		t.Errorf("refused feedback was stored: %+v", fb)
	}
}

func TestFeedbackRefusalsNameWhatIsWrong(t *testing.T) {
	h := newHarness(t, echoModel())
	ctx := context.Background()
	id, replies := threadOf(t, h, "one")
	err := h.eng.DeleteFeedback(ctx, alice, id, replies[0].MessageID)
	var ae *assistant.Error
	if !errors.As(err, &ae) || ae.Code != assistant.CodeNotFound || !strings.Contains(ae.Message, "no rating") {
		t.Errorf("withdrawing a rating that is not there: %v", err)
	}
	if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: id, Regenerate: true}); err != nil {
		t.Fatal(err)
	}
	_, err = h.eng.SetFeedback(ctx, alice, id, replies[0].MessageID, assistant.FeedbackInput{Rating: store.RatingUp})
	if !errors.Is(err, assistant.ErrConflict) {
		t.Errorf("rating a replaced answer: %v", err)
	}
}
