package uistream

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/parleyhq/parley/blocks"
)

// What a block becomes in a UI message. The Encoder streams it as chunks,
// and History builds the parts those chunks add up to; both take it from
// here, so that a reloaded thread shows what streamed.

// toolOutcome is how a tool_result block shows on its call's tool part:
// the part's state, and the field that state sets (key "" for none) with
// its value. The chunk that streams it is of type "tool-" + state.
func toolOutcome(b blocks.Block) (state, key string, value any) {
	switch {
	case b.OK:
		return "output-available", "output", map[string]string{"summary": b.Content}
	case b.ErrorCode == blocks.CodeDeclined:
		return "output-denied", "", nil
	default:
		return "output-error", "errorText", b.Content
	}
}

// declineReason is the reason a declined call's tool_result block keeps
// in Data ({"reason"}), "" for none: the approval's reason on its part.
func declineReason(b blocks.Block) string {
	if b.ErrorCode != blocks.CodeDeclined || len(b.Data) == 0 {
		return ""
	}
	var d struct {
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal(b.Data, &d)
	return d.Reason
}

// dataPart is the data part a component or warning block shows as: its
// type and its data. ok is false for other blocks, and for a component
// with no name.
func dataPart(b blocks.Block) (typ string, data any, ok bool) {
	switch {
	case b.Kind == blocks.Component && b.Tag != "":
		return "data-" + b.Tag, jsonValue(b.Data), true
	case b.Kind == blocks.Warning:
		if len(b.Data) > 0 { // what the notice says, for a client that words it itself
			return "data-warning", map[string]any{"text": b.Content, "notice": jsonValue(b.Data)}, true
		}
		return "data-warning", map[string]string{"text": b.Content}, true
	}
	return "", nil, false
}

// cardCalls are the calls of a stream or a thread that may still get a
// confirm card, in call order, each with what a card changes (T). A
// client-side call never gets one, and a call with a result no longer can.
type cardCalls[T any] []cardCall[T]

type cardCall[T any] struct {
	id, tool string
	v        T
}

func (cs *cardCalls[T]) add(id, tool string, v T) { *cs = append(*cs, cardCall[T]{id, tool, v}) }

// answered forgets the call id, which got its result.
func (cs *cardCalls[T]) answered(id string) {
	*cs = slices.DeleteFunc(*cs, func(c cardCall[T]) bool { return c.id == id })
}

// take removes and returns the call a confirm card decides: the call
// callID, or, for a card with no call id (stored before cards carried
// it), the oldest waiting call of its tool. ok is false when no such call
// waits.
func (cs *cardCalls[T]) take(callID, tool string) (c cardCall[T], ok bool) {
	i := slices.IndexFunc(*cs, func(c cardCall[T]) bool {
		if callID != "" {
			return c.id == callID
		}
		return c.tool == tool
	})
	if i < 0 {
		return c, false
	}
	c = (*cs)[i]
	*cs = slices.Delete(*cs, i, i+1)
	return c, true
}

// codeText is what a code or mermaid block adds to a text part: the
// fenced block, on a line of its own when the text so far ends mid-line.
func codeText(b blocks.Block, midLine bool) string {
	if midLine {
		return "\n" + Fenced(b)
	}
	return Fenced(b)
}

// jsonValue is raw JSON as a value that encodes as itself, null when empty
// or invalid.
func jsonValue(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || !json.Valid(raw) {
		return json.RawMessage("null")
	}
	return raw
}

// Fenced writes a code or mermaid block as markdown: a fence longer than
// any run of backticks in it, the language, the code, a closing fence and
// a newline. A text part carries code this way.
func Fenced(b blocks.Block) string {
	lang := b.Tag
	if b.Kind == blocks.Mermaid {
		lang = "mermaid"
	}
	fence := "```"
	for strings.Contains(b.Content, fence) {
		fence += "`"
	}
	var s strings.Builder
	s.WriteString(fence + oneLine(lang) + "\n" + b.Content)
	if !strings.HasSuffix(b.Content, "\n") {
		s.WriteString("\n")
	}
	s.WriteString(fence + "\n")
	return s.String()
}

// oneLine keeps a fence's language tag on its line.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '`' {
			return -1
		}
		return r
	}, s)
}
