package assistant_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/tools"
)

// echoModel answers "re: <last user text>".
func echoModel() *fake.Provider {
	p := fake.New()
	p.SetDefault(fake.Turn{fake.Func(func(_ context.Context, req *providers.Request) fake.Turn {
		return fake.Turn{fake.Text("re: " + req.Messages[len(req.Messages)-1].Content)}
	})})
	return p
}

// userTexts lists the user messages of a model request.
func userTexts(req providers.Request) []string {
	var out []string
	for _, m := range req.Messages {
		if m.Role == providers.User {
			out = append(out, m.Content)
		}
	}
	return out
}

func threadOf(t *testing.T, h *harness, texts ...string) (string, []assistant.Reply) {
	t.Helper()
	var id string
	var replies []assistant.Reply
	for _, text := range texts {
		r, _, err := h.collect(t, alice, assistant.Request{ThreadID: id, Message: text})
		if err != nil {
			t.Fatal(err)
		}
		id = r.ThreadID
		replies = append(replies, r)
	}
	return id, replies
}

func TestEditReplacesAMessageAndEverythingAfterIt(t *testing.T) {
	p := echoModel()
	h := newHarness(t, p)
	ctx := context.Background()
	id, replies := threadOf(t, h, "one", "two", "three")

	r, _, err := h.collect(t, alice, assistant.Request{ThreadID: id, Replaces: replies[1].UserMessageID, Message: "TWO"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Text != "re: TWO" {
		t.Errorf("answer %q", r.Text)
	}
	reqs := p.Requests()
	if got := userTexts(reqs[len(reqs)-1]); strings.Join(got, ",") != "one,TWO" {
		t.Errorf("the model saw %v; want the branch before the edit, then the new text", got)
	}
	// The current conversation hides what was replaced; the audit view keeps it.
	_, msgs, err := h.eng.Thread(ctx, alice, id, assistant.ThreadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range msgs {
		if m.Role == store.RoleUser {
			texts = append(texts, m.Content)
		}
	}
	if strings.Join(texts, ",") != "one,TWO" {
		t.Errorf("thread shows %v", texts)
	}
	_, all, err := h.eng.Thread(ctx, alice, id, assistant.ThreadOptions{Superseded: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 8 {
		t.Fatalf("%d messages with superseded ones, want 8", len(all))
	}
	for _, m := range all {
		superseded := m.Seq >= 3 && m.Seq <= 6
		if (m.SupersededAt != nil) != superseded {
			t.Errorf("message %d (%s %q): superseded %v, want %v", m.Seq, m.Role, m.Content, m.SupersededAt != nil, superseded)
		}
	}
	if last := all[6]; last.Replaces != replies[1].UserMessageID {
		t.Errorf("the new message replaces %q, want %q", last.Replaces, replies[1].UserMessageID)
	}
	// The next turn continues the new branch.
	if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: id, Message: "four"}); err != nil {
		t.Fatal(err)
	}
	reqs = p.Requests()
	if got := userTexts(reqs[len(reqs)-1]); strings.Join(got, ",") != "one,TWO,four" {
		t.Errorf("after the edit the model saw %v", got)
	}
}

func TestRegenerateAnswersTheLastMessageAgain(t *testing.T) {
	p := echoModel()
	h := newHarness(t, p)
	id, replies := threadOf(t, h, "one", "two")
	r, _, err := h.collect(t, alice, assistant.Request{ThreadID: id, Regenerate: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Text != "re: two" {
		t.Errorf("regenerated answer %q", r.Text)
	}
	reqs := p.Requests()
	if got, want := userTexts(reqs[len(reqs)-1]), userTexts(reqs[1]); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("regeneration sent %v, the original turn %v", got, want)
	}
	msgs := h.messages(t, id)
	if msgs[2].SupersededAt == nil || msgs[3].SupersededAt == nil || msgs[0].SupersededAt != nil {
		t.Errorf("regeneration superseded the wrong messages")
	}
	if msgs[4].Replaces != replies[1].UserMessageID || msgs[4].Content != "two" {
		t.Errorf("new user message: %+v", msgs[4])
	}
}

func TestEditAndRegenerateRefusals(t *testing.T) {
	h := newHarness(t, echoModel())
	id, replies := threadOf(t, h, "one", "two")
	other, otherReplies := threadOf(t, h, "elsewhere")
	_ = other
	if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: id, Replaces: replies[0].UserMessageID, Message: "ONE"}); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		req  assistant.Request
		want error
	}{
		"replace a superseded message":       {assistant.Request{ThreadID: id, Replaces: replies[1].UserMessageID, Message: "x"}, assistant.ErrConflict},
		"replace an assistant message":       {assistant.Request{ThreadID: id, Replaces: replies[0].MessageID, Message: "x"}, assistant.ErrNotFound},
		"replace another thread's message":   {assistant.Request{ThreadID: id, Replaces: otherReplies[0].UserMessageID, Message: "x"}, assistant.ErrNotFound},
		"replace an unknown id":              {assistant.Request{ThreadID: id, Replaces: "nope", Message: "x"}, assistant.ErrNotFound},
		"replace with no text":               {assistant.Request{ThreadID: id, Replaces: replies[0].UserMessageID}, assistant.ErrInvalidRequest},
		"regenerate with a message":          {assistant.Request{ThreadID: id, Regenerate: true, Message: "x"}, assistant.ErrInvalidRequest},
		"regenerate without a thread":        {assistant.Request{Regenerate: true}, assistant.ErrInvalidRequest},
		"replace and regenerate":             {assistant.Request{ThreadID: id, Regenerate: true, Replaces: replies[0].UserMessageID}, assistant.ErrInvalidRequest},
		"regenerate another user's thread":   {assistant.Request{ThreadID: id, Regenerate: true}, assistant.ErrNotFound},
		"replace with a decision at once":    {assistant.Request{ThreadID: id, Replaces: replies[0].UserMessageID, Decision: &assistant.Decision{Token: "t"}}, assistant.ErrInvalidRequest},
		"replace holding a NUL in the id":    {assistant.Request{ThreadID: id, Replaces: "a\x00b", Message: "x"}, assistant.ErrInvalidRequest},
		"regenerate a thread with no text":   {assistant.Request{ThreadID: id + "x", Regenerate: true}, assistant.ErrNotFound},
		"replace an empty-id looking string": {assistant.Request{ThreadID: id, Replaces: " ", Message: "x"}, assistant.ErrNotFound},
	} {
		u := alice
		if strings.Contains(name, "another user's") {
			u = bob
		}
		before := len(h.messages(t, id))
		_, _, err := h.collect(t, u, tc.req)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
		if n := len(h.messages(t, id)); n != before {
			t.Errorf("%s: wrote %d messages", name, n-before)
		}
	}
}

func TestConcurrentEditsOfOneMessageOneWins(t *testing.T) {
	// Eight edits at once by one user: the per-user turn cap is not what
	// this test is about, and on a slow machine the edits overlap enough
	// to reach it.
	h := newHarness(t, echoModel(), func(c *assistant.Config) { c.MaxTurnsPerUser = 16 })
	id, replies := threadOf(t, h, "one", "two")
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins, conflicts := 0, 0
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := h.collect(t, alice, assistant.Request{ThreadID: id, Replaces: replies[1].UserMessageID, Message: "edit " + string(rune('a'+i))})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil, errors.Is(err, assistant.ErrCancelled):
				wins++ // a winner may be superseded by nothing else: it completes
			case errors.Is(err, assistant.ErrConflict):
				conflicts++
			default:
				t.Errorf("edit: %v", err)
			}
		}()
	}
	wg.Wait()
	if wins != 1 || conflicts != 7 {
		t.Fatalf("%d edits won, %d conflicted; want 1 and 7", wins, conflicts)
	}
	current := 0
	for _, m := range h.messages(t, id) {
		if m.SupersededAt == nil && m.Role == store.RoleUser {
			current++
		}
	}
	if current != 2 {
		t.Errorf("%d current user messages, want 2", current)
	}
}

func TestEditWithdrawsTheCardsOfReplacedTurns(t *testing.T) {
	p := fake.New()
	h := newHarness(t, p)
	p.Append(fake.Turn{fake.Text("I will add it."), fake.CallTool("c1", "add_note", `{}`)})
	r, streamed, err := h.collect(t, alice, assistant.Request{Message: "add a note"})
	if err != nil {
		t.Fatal(err)
	}
	cards := find(streamed, blocks.Confirm)
	if len(cards) != 1 {
		t.Fatalf("no card: %v", kinds(streamed))
	}
	p.Append(fake.Turn{fake.Text("ok")})
	if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: r.ThreadID, Replaces: r.UserMessageID, Message: "never mind"}); err != nil {
		t.Fatal(err)
	}
	prop, err := h.store.GetProposal(context.Background(), cards[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if prop.Status != store.ProposalDeclined {
		t.Errorf("the card of a replaced turn is %s, want declined", prop.Status)
	}
	_, _, err = h.collect(t, alice, assistant.Request{ThreadID: r.ThreadID, Decision: &assistant.Decision{Token: cards[0].ID, Apply: true}})
	if !errors.Is(err, assistant.ErrConflict) {
		t.Errorf("deciding a withdrawn card: %v, want conflict", err)
	}
	if n := h.runs["add_note"].Load(); n != 0 {
		t.Errorf("add_note ran %d times", n)
	}
}

func TestEditOfSummarizedMessageDropsTheSummary(t *testing.T) {
	p := echoModel()
	h := newHarness(t, p)
	ctx := context.Background()
	id, replies := threadOf(t, h, "one", "two", "three")
	if err := h.store.SetSummary(ctx, id, "the user said one and two", 4, 0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: id, Message: "four"}); err != nil {
		t.Fatal(err)
	}
	reqs := p.Requests()
	if last := reqs[len(reqs)-1]; !strings.Contains(last.System, "the user said one and two") || strings.Join(userTexts(last), ",") != "three,four" {
		t.Fatalf("the summary is not used: %v\n%s", userTexts(last), last.System)
	}
	if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: id, Replaces: replies[1].UserMessageID, Message: "TWO"}); err != nil {
		t.Fatal(err)
	}
	reqs = p.Requests()
	last := reqs[len(reqs)-1]
	if strings.Contains(last.System, "the user said") || strings.Join(userTexts(last), ",") != "one,TWO" {
		t.Errorf("an edit inside the summarized part kept the summary: %v\n%s", userTexts(last), last.System)
	}
	th, _ := h.store.GetThread(ctx, id)
	if th.Summary != "" || th.SummaryThrough != 0 {
		t.Errorf("stored summary %q through %d after the edit", th.Summary, th.SummaryThrough)
	}
}

// A change made by a turn that an edit replaced still stands: the model is
// told so on every later turn, and a Read result from before it is not
// reused.
func TestChangesOfReplacedTurnsAreCarriedForward(t *testing.T) {
	p := fake.New()
	h := newHarness(t, p, func(c *assistant.Config) {
		c.AutoApprove = func(context.Context, parley.User, tools.Spec) bool { return true }
	})
	p.Append(callsOnce("c1", "get_weather", `{"city":"Paris"}`)...)
	r1, _, err := h.collect(t, alice, assistant.Request{Message: "weather?"})
	if err != nil {
		t.Fatal(err)
	}
	p.Append(callsOnce("c2", "add_note", `{}`)...)
	r2, _, err := h.collect(t, alice, assistant.Request{ThreadID: r1.ThreadID, Message: "add a note"})
	if err != nil {
		t.Fatal(err)
	}
	if h.runs["add_note"].Load() != 1 {
		t.Fatal("add_note did not run")
	}
	p.Append(callsOnce("c3", "get_weather", `{"city":"Paris"}`)...)
	if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: r1.ThreadID, Replaces: r2.UserMessageID, Message: "weather again?"}); err != nil {
		t.Fatal(err)
	}
	if n := h.runs["get_weather"].Load(); n != 2 {
		t.Errorf("get_weather ran %d times: a result from before an edited-away change was reused", n)
	}
	reqs := p.Requests()
	sys := reqs[len(reqs)-1].System
	if !strings.Contains(sys, "## Changes already made") || !strings.Contains(sys, "- add_note: added") {
		t.Errorf("the model is not told about the change:\n%s", sys)
	}
	p.Append(fake.Turn{fake.Text("ok")})
	if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: r1.ThreadID, Message: "and now?"}); err != nil {
		t.Fatal(err)
	}
	reqs = p.Requests()
	if !strings.Contains(reqs[len(reqs)-1].System, "- add_note: added") {
		t.Error("a later turn forgot the change")
	}
}
