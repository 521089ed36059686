package assistant_test

import (
	"context"
	"iter"
	"strings"
	"testing"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/store"
)

// endless is a provider that never stops writing: text, reasoning, or one
// tool call after another, until its consumer stops reading.
type endless struct{ calls, reasoning bool }

func (p endless) Stream(ctx context.Context, _ *providers.Request) iter.Seq2[providers.Event, error] {
	return func(yield func(providers.Event, error) bool) {
		for i := 0; ctx.Err() == nil; i++ {
			ev := providers.Event{Kind: providers.TextDelta, Text: "all work and no play makes a long reply. "}
			if p.reasoning {
				ev = providers.Event{Kind: providers.ReasoningDelta, Text: "let me think about this some more. "}
			}
			if p.calls {
				ev = providers.Event{Kind: providers.ToolCallEvent, ToolCall: providers.ToolCall{
					ID: "c" + strings.Repeat("x", i%7), Name: "get_weather", Args: []byte(`{"city":"` + strings.Repeat("a", 512) + `"}`)}}
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// A provider that streams without end is cut at the turn's output cap: the
// turn ends with finish length, the partial reply is kept and stored, and
// the user is told it was cut off.
func TestEndlessModelOutputIsCutAtTheTurnCap(t *testing.T) {
	const capBytes = 64 << 10
	for name, p := range map[string]endless{"text": {}, "tool calls": {calls: true}, "reasoning": {reasoning: true}} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, p, func(c *assistant.Config) { c.MaxTurnOutputBytes = capBytes })
			reply, bs, err := h.collect(t, alice, assistant.Request{Message: "write forever"})
			if err != nil {
				t.Fatal(err)
			}
			if reply.Finish != assistant.FinishLength {
				t.Errorf("finish = %q, want %q", reply.Finish, assistant.FinishLength)
			}
			if len(reply.Text) > capBytes {
				t.Errorf("streamed %d bytes of text, cap %d", len(reply.Text), capBytes)
			}
			if name == "text" && len(reply.Text) < capBytes/2 {
				t.Errorf("streamed only %d bytes before the %d-byte cap", len(reply.Text), capBytes)
			}
			if w := find(bs, blocks.Warning); len(w) == 0 || !strings.Contains(w[len(w)-1].Content, "cut off") {
				t.Errorf("no cut-off warning in %d blocks", len(bs))
			}
			m := h.waitStatus(t, reply.MessageID)
			if m.Status != store.StatusComplete {
				t.Errorf("stored status %q, want complete", m.Status)
			}
			stored := 0
			for _, b := range find(m.Blocks, blocks.Markdown) {
				stored += len(b.Content)
			}
			if stored != len(reply.Text) {
				t.Errorf("stored %d bytes of text, streamed %d", stored, len(reply.Text))
			}
			if len(m.ModelMessages) > 2*capBytes {
				t.Errorf("stored %d bytes of model messages for a %d-byte cap", len(m.ModelMessages), capBytes)
			}
			if h.runs["get_weather"].Load() != 0 {
				t.Errorf("a tool ran from a cut-off answer")
			}
		})
	}
}

// The token cap applies too, at four bytes a token while the call streams.
func TestTurnOutputTokenCap(t *testing.T) {
	h := newHarness(t, endless{}, func(c *assistant.Config) { c.MaxTurnOutputTokens = 1000 })
	reply, _, err := h.collect(t, alice, assistant.Request{Message: "write forever"})
	if err != nil {
		t.Fatal(err)
	}
	if reply.Finish != assistant.FinishLength || len(reply.Text) > 4100 {
		t.Errorf("finish %q after %d bytes, want length at about 4000 bytes", reply.Finish, len(reply.Text))
	}
}

// BenchmarkEndlessModel is one turn against a model that never stops, cut
// at the default cap: B/op is what such a turn costs, and stays flat.
func BenchmarkEndlessModel(b *testing.B) {
	h := newHarness(b, endless{})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := assistant.Collect(h.eng.Stream(context.Background(), alice, assistant.Request{Message: "go"})); err != nil {
			b.Fatal(err)
		}
	}
}
