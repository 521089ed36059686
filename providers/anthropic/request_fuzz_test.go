package anthropic

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/parleyhq/parley/providers"
)

// fuzzConversation builds a conversation from script, one message per
// byte: the low two bits pick the role, bit 2 blanks the content, bit 3
// gives an assistant message tool calls, the high bits pick a call id
// (one of them invalid for the API, one empty).
func fuzzConversation(script []byte, text string, args []byte) (msgs []providers.Message, wantErr bool) {
	ids := [...]string{"call_1", "toolu_2", "bad id:3", ""}
	for _, b := range script {
		content := text
		if b&4 != 0 {
			content = strings.Repeat(" ", int(b>>5))
		}
		id := ids[b>>4&3]
		switch b & 3 {
		case 0:
			msgs = append(msgs, providers.Message{Role: providers.User, Content: content})
		case 1:
			m := providers.Message{Role: providers.Assistant, Content: content}
			if b&8 != 0 {
				m.ToolCalls = []providers.ToolCall{{ID: id, Name: "f", Args: args}, {ID: id + "x", Name: "g"}}
			}
			msgs = append(msgs, m)
		case 2:
			msgs = append(msgs, providers.Message{Role: providers.Tool, ToolCallID: id, Content: content})
			wantErr = wantErr || id == ""
		case 3:
			msgs = append(msgs, providers.Message{Role: providers.System, Content: content})
		}
	}
	return msgs, wantErr
}

// wireBody is the part of the request body the invariants read.
type wireBody struct {
	System []struct {
		Text         string          `json:"text"`
		CacheControl json.RawMessage `json:"cache_control"`
	} `json:"system"`
	Messages []struct {
		Role    string `json:"role"`
		Content []struct {
			Type    string          `json:"type"`
			Text    string          `json:"text"`
			ID      string          `json:"id"`
			Input   json.RawMessage `json:"input"`
			UseID   string          `json:"tool_use_id"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"content"`
	} `json:"messages"`
	Thinking    json.RawMessage `json:"thinking"`
	Temperature *float64        `json:"temperature"`
}

// FuzzRequest converts arbitrary conversations, whatever history holds,
// and checks the body is one the Messages API accepts in shape: roles
// alternate, no message and no text block is empty or blank, every
// tool_use input is a JSON object and every id fits the API's pattern,
// tool results open their user message, the system blocks rejoin into
// the prompt with one breakpoint, and thinking is off in a tool loop.
func FuzzRequest(f *testing.F) {
	f.Add("You are terse.\n\nNow: noon", 16, []byte{0, 1 | 8, 2, 2 | 16, 0, 1}, "hi", []byte(`{"a":1}`), true)
	f.Add("", 0, []byte{3, 0, 0, 1, 1 | 4, 2 | 32}, " ", []byte(`[1`), false)
	f.Add("é", 1, []byte{1 | 8, 2, 0, 2}, "x\n", []byte(``), true)
	f.Fuzz(func(t *testing.T, system string, stable int, script []byte, text string, args []byte, thinking bool) {
		if len(script) > 64 {
			script = script[:64]
		}
		msgs, wantErr := fuzzConversation(script, text, args)
		cfg := Config{Model: "m"}
		if thinking {
			cfg.ThinkingBudget = 2048
		}
		temp := 0.5
		req := &providers.Request{System: system, SystemStable: stable, Messages: msgs, Temperature: &temp,
			Tools: []providers.ToolDef{{Name: "f", Parameters: json.RawMessage(`{"type":"object"}`)}}}
		params, err := New(cfg).params(req)
		if (err != nil) != wantErr {
			t.Fatalf("err = %v, want an error: %v", err, wantErr)
		}
		if err != nil {
			return
		}
		raw, err := json.Marshal(params)
		if err != nil {
			t.Fatalf("body does not marshal: %v", err)
		}
		var body wireBody
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Fatalf("body is not JSON: %v\n%s", err, raw)
		}

		var joined strings.Builder
		breakpoints := 0
		for _, s := range body.System {
			if blank(s.Text) {
				t.Errorf("blank system block in %s", raw)
			}
			if len(s.CacheControl) > 0 {
				breakpoints++
			}
			joined.WriteString(s.Text)
		}
		if !blank(system) && utf8.ValidString(system) && !strings.HasPrefix(joined.String(), system) {
			t.Errorf("system blocks %q do not start with the prompt %q", joined.String(), system)
		}
		if !blank(system) && (breakpoints != 1 || len(body.System[0].CacheControl) == 0) {
			t.Errorf("%d system breakpoints, want one on the first block: %s", breakpoints, raw)
		}

		lastAssistantCalls := false
		for i, m := range body.Messages {
			if len(m.Content) == 0 {
				t.Fatalf("message %d is empty: %s", i, raw)
			}
			if i > 0 && body.Messages[i-1].Role == m.Role {
				t.Fatalf("messages %d and %d are both %s: %s", i-1, i, m.Role, raw)
			}
			seenText := false
			if m.Role == "assistant" {
				lastAssistantCalls = false
			}
			for _, c := range m.Content {
				switch c.Type {
				case "text":
					seenText = true
					if blank(c.Text) {
						t.Errorf("blank text block in message %d: %s", i, raw)
					}
				case "tool_use":
					lastAssistantCalls = true
					var obj map[string]any
					if err := json.Unmarshal(c.Input, &obj); err != nil || obj == nil {
						t.Errorf("tool_use input %s is not an object", c.Input)
					}
					if toolID(c.ID) != c.ID {
						t.Errorf("tool_use id %q outside the API's pattern", c.ID)
					}
				case "tool_result":
					if m.Role != "user" || seenText {
						t.Errorf("tool_result out of place in message %d: %s", i, raw)
					}
					if toolID(c.UseID) != c.UseID {
						t.Errorf("tool_result id %q outside the API's pattern", c.UseID)
					}
					for _, x := range c.Content {
						if blank(x.Text) {
							t.Errorf("blank tool_result text: %s", raw)
						}
					}
				default:
					t.Errorf("block of type %q", c.Type)
				}
			}
		}
		if n := len(body.Messages); n > 0 && body.Messages[n-1].Role == "assistant" {
			c := body.Messages[n-1].Content
			if last := c[len(c)-1]; last.Type == "text" && strings.TrimRight(last.Text, " \t\n\r\f\v") != last.Text {
				t.Errorf("final assistant text ends in white space: %q", last.Text)
			}
		}
		if thinking && lastAssistantCalls != (len(body.Thinking) == 0) {
			t.Errorf("thinking %s with the last assistant message making calls: %v", body.Thinking, lastAssistantCalls)
		}
		if len(body.Thinking) > 0 && body.Temperature != nil {
			t.Errorf("temperature sent with thinking")
		}
	})
}
