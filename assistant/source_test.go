package assistant_test

import (
	"encoding/json"
	"testing"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store"
)

// A user message says how it was made, so a client that reloads the
// thread can show it as it showed live: typed, a decision's note, form
// answers, or client results.
func TestUserMessagesRecordTheirSource(t *testing.T) {
	p := fake.New()
	h := newHarness(t, p)
	p.Append(fake.Turn{fake.Text("I will add it."), fake.CallTool("c1", "add_note", `{}`)})
	r, streamed, err := h.collect(t, alice, assistant.Request{Message: "add a note"})
	if err != nil {
		t.Fatal(err)
	}
	card := find(streamed, blocks.Confirm)[0]
	p.Append(fake.Turn{fake.Text("Added.")})
	if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: r.ThreadID, Decision: &assistant.Decision{Token: card.ID, Apply: true}}); err != nil {
		t.Fatal(err)
	}
	p.Append(fake.Turn{fake.CallTool("f1", assistant.AskUserName, `{"questions":[{"id":"name","label":"Name?","type":"text"}]}`)})
	if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: r.ThreadID, Message: "ask me"}); err != nil {
		t.Fatal(err)
	}
	p.Append(fake.Turn{fake.Text("Thanks.")})
	if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: r.ThreadID, Form: &assistant.FormAnswer{ID: "f1", Values: map[string]json.RawMessage{"name": json.RawMessage(`"Ada"`)}}}); err != nil {
		t.Fatal(err)
	}
	var got []store.MessageSource
	for _, m := range h.messages(t, r.ThreadID) {
		if m.Role == store.RoleUser {
			got = append(got, m.Source)
		}
	}
	want := []store.MessageSource{store.SourceTyped, store.SourceDecision, store.SourceTyped, store.SourceForm}
	if len(got) != len(want) {
		t.Fatalf("sources %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("user message %d: source %q, want %q", i+1, got[i], want[i])
		}
	}
}
