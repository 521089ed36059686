package assistant_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/tools"
)

// Credentials a tool reads never reach the model, the store, the replay,
// a card, a title, a feedback comment or the host's UI (C9). The secrets
// are built here so no scanner of this repository sees a real-looking key.
var (
	leakedKey      = "sk-" + "proj-" + strings.Repeat("Zq8Wx2Lm4Np6", 4)
	leakedPassword = "Sup3r-s3cret-" + "P4ssw0rd!"
)

// noteTools reads and deletes notes that hold a key and a password.
func noteTools(t *testing.T) tools.Registry {
	t.Helper()
	note := map[string]any{"id": 1, "text": "deploy notes: apiKey=" + leakedKey, "password": leakedPassword}
	read := tools.Must(tools.New(tools.Spec{Name: "read_note", Description: "Reads a note.", Category: "weather"},
		func(context.Context, tools.Call, struct{}) (tools.Result, error) {
			return tools.OK("note 1: apiKey="+leakedKey, note), nil
		}))
	del := tools.Must(tools.WithPropose(tools.Must(tools.New(tools.Spec{Name: "delete_note", Description: "Deletes a note.",
		Category: "weather", Effect: tools.Destructive},
		func(context.Context, tools.Call, struct{}) (tools.Result, error) {
			return tools.OK("deleted", nil), nil
		})), func(context.Context, tools.Call, struct{}) (tools.Result, error) {
		return tools.OK("Delete the note holding apiKey="+leakedKey, note), nil
	}))
	set, err := tools.NewSet(read, del)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// checkNoSecret fails if a secret is in any of what.
func checkNoSecret(t *testing.T, where string, what ...any) {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, w := range what {
		if s, ok := w.(string); ok {
			b.WriteString(s)
			continue
		}
		_ = enc.Encode(w)
	}
	for _, secret := range []string{leakedKey, leakedPassword} {
		if strings.Contains(b.String(), secret) {
			t.Errorf("a secret reached %s", where)
		}
	}
}

func TestToolResultsAreScrubbedOfCredentials(t *testing.T) {
	p := fake.New(fake.Turn{fake.CallTool("r1", "read_note", `{}`)}, fake.Turn{fake.Text("It holds a key.")},
		fake.Turn{fake.Text("Still here.")})
	h := newHarness(t, p, func(c *assistant.Config) { c.Tools = noteTools(t) })
	reply, streamed, err := h.collect(t, alice, assistant.Request{Message: "read note 1"})
	if err != nil {
		t.Fatal(err)
	}
	// The replay of a later turn carries the stored form.
	if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: reply.ThreadID, Message: "and?"}); err != nil {
		t.Fatal(err)
	}
	reqs := p.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, req := range reqs {
		checkNoSecret(t, fmt.Sprintf("the model in request %d", i+1), req.Messages)
	}
	checkNoSecret(t, "the user's stream", streamed)
	for _, m := range h.messages(t, reply.ThreadID) {
		var msgs []providers.Message
		_ = json.Unmarshal(m.ModelMessages, &msgs)
		checkNoSecret(t, "the store", m.Blocks, msgs, m.Content)
	}
	if res := find(streamed, blocks.ToolResult); len(res) != 1 || !strings.Contains(res[0].Content, "[CREDENTIAL_REDACTED]") {
		t.Errorf("the result block does not show the scrub: %+v", res)
	}
	if last := reqs[1].Messages; !strings.Contains(last[len(last)-1].Content, `"id":1`) {
		t.Errorf("the scrub took the rest of the result with it: %s", last[len(last)-1].Content)
	}
}

func TestCardsAreScrubbedOfCredentials(t *testing.T) {
	p := fake.New(fake.Turn{fake.CallTool("d1", "delete_note", `{}`)})
	h := newHarness(t, p, func(c *assistant.Config) { c.Tools = noteTools(t) })
	reply, streamed, err := h.collect(t, alice, assistant.Request{Message: "delete note 1"})
	if err != nil {
		t.Fatal(err)
	}
	cards := find(streamed, blocks.Confirm)
	if len(cards) != 1 {
		t.Fatalf("cards %d", len(cards))
	}
	checkNoSecret(t, "the card", cards)
	ps, err := h.store.ListProposals(context.Background(), reply.ThreadID)
	if err != nil || len(ps) != 1 {
		t.Fatalf("proposals %v, %v", ps, err)
	}
	checkNoSecret(t, "the stored proposal", ps[0].Summary)
	if !strings.Contains(ps[0].Summary, "Delete the note holding apiKey=") {
		t.Errorf("summary %q", ps[0].Summary)
	}
}

func TestTitlesFeedbackAndDirectCallsAreScrubbed(t *testing.T) {
	h := newHarness(t, titleModel("Key "+leakedKey, false, nil), func(c *assistant.Config) {
		c.GenerateTitles = true
		c.Tools = noteTools(t)
		c.Authorizer = assistant.RoleAuthorizer{Everyone: []string{"*"}}
	})
	reply, _, err := h.collect(t, alice, assistant.Request{Message: "what is in my notes"})
	if err != nil {
		t.Fatal(err)
	}
	waitTurns(t, h)
	th, err := h.store.GetThread(context.Background(), reply.ThreadID)
	if err != nil {
		t.Fatal(err)
	}
	checkNoSecret(t, "the title", th.Title)
	f, err := h.eng.SetFeedback(context.Background(), alice, reply.ThreadID, reply.MessageID,
		assistant.FeedbackInput{Rating: store.RatingDown, Comment: "it showed my key " + leakedKey})
	if err != nil {
		t.Fatal(err)
	}
	checkNoSecret(t, "the feedback comment", f.Comment)
	r, err := h.eng.ExecuteTool(context.Background(), alice, assistant.ExecuteRequest{Tool: "read_note"})
	if err != nil || !r.OK {
		t.Fatalf("ExecuteTool: %+v, %v", r, err)
	}
	checkNoSecret(t, "a direct call's result", r)
}

// A dry run's long summary is scrubbed before it is cut to the card's
// length, which could leave half a key nothing recognizes; and a direct
// call's error hint is scrubbed like its message.
func TestLongCardSummariesAndHintsAreScrubbed(t *testing.T) {
	long := strings.Repeat("padding ", 35) + leakedKey // the cut at 300 bytes leaves 20 of the key
	prop := tools.Must(tools.WithPropose(tools.Must(tools.New(tools.Spec{Name: "rotate", Description: "Rotates a key.",
		Category: "weather", Effect: tools.Mutate},
		func(context.Context, tools.Call, struct{}) (tools.Result, error) {
			r := tools.Fail(tools.CodeConflict, "rotation refused")
			r.Error.Hint = "retry with apiKey=" + leakedKey
			return r, nil
		})), func(context.Context, tools.Call, struct{}) (tools.Result, error) {
		return tools.OK(long, nil), nil
	}))
	p := fake.New(fake.Turn{fake.CallTool("r1", "rotate", `{}`)})
	h := newHarness(t, p, func(c *assistant.Config) { c.Tools, _ = tools.NewSet(prop) })
	reply, streamed, err := h.collect(t, alice, assistant.Request{Message: "rotate"})
	if err != nil {
		t.Fatal(err)
	}
	ps, _ := h.store.ListProposals(context.Background(), reply.ThreadID)
	head := leakedKey[:16]
	for _, s := range []string{fmt.Sprint(find(streamed, blocks.Confirm)), fmt.Sprint(ps)} {
		if strings.Contains(s, head) {
			t.Errorf("the start of a key reached the card or the proposal: %s", s)
		}
	}
	r, err := h.eng.ExecuteTool(context.Background(), alice, assistant.ExecuteRequest{Tool: "rotate"})
	if err != nil || r.Error == nil {
		t.Fatalf("ExecuteTool: %+v, %v", r, err)
	}
	checkNoSecret(t, "a direct call's hint", r.Error.Hint)
}
