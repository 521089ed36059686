package providertest

import (
	"testing"

	"github.com/parleyhq/parley/providers"
)

// WantSplitCharactersJoined fails t unless events, a driver's stream of a
// server response that splits characters across two events as raw bytes,
// hold the text "price: €5" (€ split) and one tool call whose arguments
// are {"p":"é"} (é split): a decoder must keep the bytes for the stream
// to join, not make each half U+FFFD.
func WantSplitCharactersJoined(t testing.TB, events []providers.Event) {
	t.Helper()
	var text string
	var calls []providers.ToolCall
	for _, ev := range events {
		switch ev.Kind {
		case providers.TextDelta:
			text += ev.Text
		case providers.ToolCallEvent:
			calls = append(calls, ev.ToolCall)
		}
	}
	if text != "price: €5" {
		t.Errorf("text %q, want %q", text, "price: €5")
	}
	if len(calls) != 1 || string(calls[0].Args) != `{"p":"é"}` {
		t.Errorf("tool calls %+v, want one with {\"p\":\"é\"}", calls)
	}
}
