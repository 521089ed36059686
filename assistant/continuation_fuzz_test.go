package assistant

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/parleyhq/parley/providers"
)

// FuzzFormAnswers feeds arbitrary forms (as the model might write them) and
// answers (as a client might post them) through the form checks: no panic,
// and accepted answers render one line per question, labelled by the form.
func FuzzFormAnswers(f *testing.F) {
	f.Add(`{"title":"T","questions":[{"id":"a","label":"A?","type":"select","options":["x","y"],"required":true}]}`, `{"a":"x"}`)
	f.Add(`{"questions":[{"id":"n","label":"N","type":"number"},{"id":"d","label":"D","type":"date"}]}`, `{"n":1e309,"d":"2026-02-30"}`)
	f.Add(`{"questions":[{"id":"m","label":"M","type":"multiselect","options":["a"]}]}`, `{"m":["a","a"]}`)
	f.Add(`{"questions":[{"id":"b","label":"B","type":"boolean"}]}`, `{"b":null}`)
	f.Add(`{"questions":[]}`, `null`)
	f.Fuzz(func(t *testing.T, form, answers string) {
		fm, refused := askUserForm(json.RawMessage(form))
		if refused != nil {
			if refused.OK || refused.Error == nil {
				t.Fatalf("refusal without an error: %+v", refused)
			}
			return
		}
		var values map[string]json.RawMessage
		if json.Unmarshal([]byte(answers), &values) != nil {
			return
		}
		text, err := renderAnswers(fm, values)
		if err != nil {
			return
		}
		if got := strings.Count(text, "\n- "); got < len(fm.Questions) {
			t.Fatalf("%d answer lines for %d questions:\n%s", got, len(fm.Questions), text)
		}
		for _, q := range fm.Questions {
			if !strings.Contains(text, "\n- "+q.Label+": ") {
				t.Fatalf("no line for %q in\n%s", q.Label, text)
			}
			if q.Required && strings.Contains(text, "\n- "+q.Label+": (no answer)") {
				t.Fatalf("required %q accepted without an answer", q.ID)
			}
		}
	})
}

// FuzzPersistable: whatever messages a turn produced, what is stored for
// replay has no call without its result and no result without its call.
func FuzzPersistable(f *testing.F) {
	f.Add([]byte{0, 1, 2, 1, 3, 0}, []byte{1})
	f.Add([]byte{2, 2, 1, 1, 0, 3, 3}, []byte{0, 2})
	f.Fuzz(func(t *testing.T, script, bad []byte) {
		// Each byte is one message: 0 text, 1 a call of id, 2 two calls, 3 a result.
		var msgs []providers.Message
		invalid := map[string]bool{}
		for _, b := range bad {
			invalid[string(rune('a'+b%8))] = true
		}
		for i, b := range script {
			id := string(rune('a' + (int(b)+i)%8))
			switch b % 4 {
			case 0:
				msgs = append(msgs, providers.Message{Role: providers.Assistant, Content: "text"})
			case 1:
				msgs = append(msgs, providers.Message{Role: providers.Assistant, ToolCalls: []providers.ToolCall{{ID: id, Name: "t"}}})
			case 2:
				msgs = append(msgs, providers.Message{Role: providers.Assistant, ToolCalls: []providers.ToolCall{{ID: id, Name: "t"}, {ID: id + "2", Name: "t"}}})
			case 3:
				msgs = append(msgs, providers.Message{Role: providers.Tool, ToolCallID: id})
			}
		}
		out := dedupeCallIDs(persistable(msgs, invalid))
		// What providers accept: every call answered exactly once by the run
		// of tool messages right after its assistant message, and no other
		// tool messages.
		var open map[string]bool
		everUsed := map[string]bool{}
		check := func() {
			for id := range open {
				t.Fatalf("call %q kept without its result in %+v", id, out)
			}
		}
		for _, m := range out {
			switch m.Role {
			case providers.Tool:
				if !open[m.ToolCallID] {
					t.Fatalf("result %q does not answer the preceding calls in %+v", m.ToolCallID, out)
				}
				delete(open, m.ToolCallID)
				continue
			case providers.Assistant:
				if len(m.ToolCalls) == 0 && m.Content == "" {
					t.Fatal("empty assistant message kept")
				}
			}
			check()
			open = map[string]bool{}
			for _, c := range m.ToolCalls {
				if open[c.ID] || everUsed[c.ID] {
					t.Fatalf("call id %q used twice in %+v", c.ID, out)
				}
				open[c.ID], everUsed[c.ID] = true, true
			}
		}
		check()
	})
}

// FuzzJSONDepth checks the byte scan against a decoder's view of nesting.
func FuzzJSONDepth(f *testing.F) {
	f.Add(`{"a":[1,{"b":"[[["}]}`)
	f.Add(`"\"[{"`)
	f.Add(`[[[[]]]]`)
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) {
			return
		}
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return
		}
		var depth func(v any) int
		depth = func(v any) int {
			d := 0
			switch x := v.(type) {
			case []any:
				for _, e := range x {
					d = max(d, depth(e))
				}
				return d + 1
			case map[string]any:
				for _, e := range x {
					d = max(d, depth(e))
				}
				return d + 1
			}
			return 0
		}
		if got, want := jsonDepth([]byte(s)), depth(v); got != want {
			t.Fatalf("jsonDepth(%s) = %d, want %d", s, got, want)
		}
	})
}
