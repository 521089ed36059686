package assistant_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/tools"
)

// manyTools is a registry like the example's: a dozen tools with real
// descriptions and schemas.
func manyTools(t *testing.T) tools.Registry {
	t.Helper()
	var ts []tools.BaseTool
	for i := range 12 {
		ts = append(ts, tools.Must(tools.New(tools.Spec{
			Name:        fmt.Sprintf("tool_%d", i),
			Description: "Reads or changes the user's records of kind " + fmt.Sprint(i) + ": give the id, a query and a page; returns up to twenty records with their fields.",
			Category:    "weather",
		}, func(context.Context, tools.Call, struct {
			ID    string `json:"id"`
			Query string `json:"query"`
			Page  int    `json:"page"`
		}) (tools.Result, error) {
			return tools.OK("ok", nil), nil
		})))
	}
	set, err := tools.NewSet(ts...)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// At a 2048-token window (Ollama's classic default) with a dozen tools, the
// tools go into the compact catalog and the history keeps room: later
// requests carry earlier turns or their summary, not only the system prompt
// and the message (issue 25.5: the history budget was 44 tokens).
func TestSmallWindowWithToolsStillReplaysHistory(t *testing.T) {
	p := fake.New()
	p.SetDefault(fake.Turn{fake.Text("Noted: the thing you said."), fake.Usage(300, 10)})
	h := newHarness(t, p, func(c *assistant.Config) {
		c.ContextWindow = 2048
		c.Tools = manyTools(t)
	})
	var threadID string
	for i := range 6 {
		reply, bs, err := h.collect(t, alice, assistant.Request{ThreadID: threadID, Message: fmt.Sprintf("remember: fact %d is blue", i)})
		if err != nil {
			t.Fatal(err)
		}
		threadID = reply.ThreadID
		if w := find(bs, blocks.Warning); len(w) != 0 {
			t.Errorf("turn %d warned %q: the history should fit", i, w[0].Content)
		}
	}
	var last providers.Request
	for _, r := range p.Requests() {
		if !isSummaryCall(&r) {
			last = r
		}
	}
	lazy := false
	for _, d := range last.Tools {
		lazy = lazy || d.Name == assistant.SearchToolsName
	}
	if names := toolNames(last); len(names) > 2 || !lazy {
		t.Errorf("tools sent at a 2048-token window: %v (search_tools: %v), want the compact catalog", names, lazy)
	}
	if len(last.Messages) < 3 && !strings.Contains(last.System, "fact") {
		t.Errorf("the sixth request carries %d messages and no summary: the history was dropped", len(last.Messages))
	}
}

// When not even a summary of the thread fits beside the system prompt,
// the user is told that the assistant sees only the latest message.
func TestHistoryThatCannotFitIsSaid(t *testing.T) {
	p := fake.New()
	p.SetDefault(fake.Turn{fake.Text("Noted."), fake.Usage(300, 10)})
	h := newHarness(t, p, func(c *assistant.Config) { c.ContextWindow = 1024; c.Tools = manyTools(t) })
	first, _, err := h.collect(t, alice, assistant.Request{Message: strings.Repeat("long words ", 300)})
	if err != nil {
		t.Fatal(err)
	}
	_, bs, err := h.collect(t, alice, assistant.Request{ThreadID: first.ThreadID, Message: "and now?"})
	if err != nil {
		t.Fatal(err)
	}
	w := find(bs, blocks.Warning)
	if len(w) != 1 || !strings.Contains(w[0].Content, "sees only your latest message") {
		t.Errorf("warnings %+v, want one saying the earlier messages do not fit", w)
	}
}
