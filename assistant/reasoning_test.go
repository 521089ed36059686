package assistant_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers/fake"
)

// The model's visible reasoning streams and is stored as reasoning blocks,
// apart from the answer, and is never replayed to the model.
func TestReasoningIsShownAndStoredButNotReplayed(t *testing.T) {
	p := fake.New(
		fake.Turn{fake.Reasoning("The user ", "wants a greeting."), fake.Text("Hello!")},
		fake.Turn{fake.Text("Again.")},
	)
	h := newHarness(t, p)
	r, streamed, err := h.collect(t, alice, assistant.Request{Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	var reasoning strings.Builder
	for _, b := range find(streamed, blocks.Reasoning) {
		reasoning.WriteString(b.Content)
	}
	if reasoning.String() != "The user wants a greeting." || r.Text != "Hello!" {
		t.Fatalf("reasoning %q, answer %q", reasoning.String(), r.Text)
	}
	msgs := h.messages(t, r.ThreadID)
	stored := msgs[1].Blocks
	if len(stored) != 2 || stored[0].Kind != blocks.Reasoning || stored[0].Content != "The user wants a greeting." || stored[1].Content != "Hello!" {
		t.Errorf("stored blocks %+v", stored)
	}
	if strings.Contains(string(msgs[1].ModelMessages), "greeting") {
		t.Errorf("reasoning is in the model messages for replay: %s", msgs[1].ModelMessages)
	}
	if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: r.ThreadID, Message: "again"}); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(p.Requests()[1].Messages)
	if strings.Contains(string(raw), "greeting") {
		t.Errorf("the reasoning was replayed to the model: %s", raw)
	}
}

// Reasoning written inline by a model (<think>…</think>) and tool-call
// markup leaked into its text never reach the answer, the store's copy of
// it or the replay: the reasoning becomes reasoning blocks, the markup is
// dropped, whatever the deltas' split.
func TestInlineReasoningAndLeakedMarkupAreCleaned(t *testing.T) {
	p := fake.New(fake.Turn{fake.Text("<thi", "nk>Plan: greet.</th", "ink>Hello", " <tool_call>{\"name\":\"x\"}</tool_call>there.")})
	h := newHarness(t, p)
	r, streamed, err := h.collect(t, alice, assistant.Request{Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	var reasoning strings.Builder
	for _, b := range find(streamed, blocks.Reasoning) {
		reasoning.WriteString(b.Content)
	}
	if r.Text != "Hello there." || reasoning.String() != "Plan: greet." {
		t.Fatalf("answer %q, reasoning %q", r.Text, reasoning.String())
	}
	stored := h.messages(t, r.ThreadID)[1]
	if strings.Contains(string(stored.ModelMessages), "think") || strings.Contains(string(stored.ModelMessages), "tool_call") {
		t.Errorf("artifacts stored for replay: %s", stored.ModelMessages)
	}
}

// DeepSeek's leaked markup (A9) reaches neither the user, nor the store,
// nor the replay, on every path a model's text takes: the turn's answer
// and the thread's title.
func TestDeepSeekArtifactsAreCleaned(t *testing.T) {
	leaks := []string{"DSML", "end▁of▁thinking", "end▁of▁sentence", "tool▁calls▁begin", "delete_note"}
	p := fake.New(
		fake.Turn{fake.Text("I looked.<|end▁of▁thinking|>", " Here:<|DSML|function_calls><|DSML|invoke name=\"delete_note\">",
			"</|DSML|invoke></|DSML|function_calls> two notes.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>delete_note",
			"<｜tool▁call▁end｜><｜tool▁calls▁end｜>")},
		fake.Turn{fake.Text("Notes<|end▁of▁thinking|> list<｜end▁of▁sentence｜>")},
	)
	h := newHarness(t, p, func(c *assistant.Config) { c.GenerateTitles = true })
	r, streamed, err := h.collect(t, alice, assistant.Request{Message: "what notes do I have?"})
	if err != nil {
		t.Fatal(err)
	}
	waitTurns(t, h)
	if r.Text != "I looked. Here: two notes." {
		t.Errorf("answer %q", r.Text)
	}
	th, err := h.store.GetThread(t.Context(), r.ThreadID)
	if err != nil {
		t.Fatal(err)
	}
	var seen strings.Builder
	enc := json.NewEncoder(&seen)
	enc.SetEscapeHTML(false) // < and > as they are, so a marker is found
	_ = enc.Encode(streamed)
	for _, m := range h.messages(t, r.ThreadID) {
		_ = enc.Encode(m.Blocks)
		var msgs any
		_ = json.Unmarshal(m.ModelMessages, &msgs)
		_ = enc.Encode(msgs)
	}
	seen.WriteString(th.Title)
	for _, l := range leaks {
		if strings.Contains(seen.String(), l) {
			t.Errorf("%q reached the user, the store or the title", l)
		}
	}
	if th.Title != "Notes list" {
		t.Errorf("title %q, want the model's, cleaned", th.Title)
	}
}
