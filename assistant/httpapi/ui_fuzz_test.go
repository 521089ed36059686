package httpapi

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/store"
)

// FuzzDecodeUIBody: any body decodes or is refused with an error, never a
// panic; a body it takes is valid JSON, and it keeps the last message and
// counts them all.
func FuzzDecodeUIBody(f *testing.F) {
	f.Add(`{"id":"c","messages":[{"id":"u","role":"user","parts":[{"type":"text","text":"hi"}]}],"trigger":"submit-message"}`)
	f.Add(`{"id":"c","messages":[{},{"role":"assistant","parts":[{"type":"tool-x","toolCallId":"1","state":"approval-responded","approval":{"id":"t","approved":true}}]}],"trigger":"submit-message","messageId":"m"}`)
	f.Add(`{"messages":[[]],"id":1}`)
	f.Add(`{"id":"c","messages":[`)
	f.Fuzz(func(t *testing.T, body string) {
		var req uiRequest
		if err := decodeUIBody(json.NewDecoder(strings.NewReader(body)), func() {}, &req); err != nil {
			return
		}
		if !json.Valid([]byte(body)) {
			t.Fatalf("took a body that is not JSON: %q", body)
		}
		var all struct {
			Messages []uiMessage `json:"messages"`
		}
		if err := json.Unmarshal([]byte(body), &all); err != nil ||
			strings.Count(strings.ToLower(body), `"messages"`) != strings.Count(body, `"messages"`) {
			// A duplicate key of another type, or a key in other case that
			// encoding/json matches and the route does not: they differ.
			return
		}
		if n := len(all.Messages); n > 0 && (req.Count < n || !reflect.DeepEqual(req.Last, all.Messages[n-1])) {
			t.Fatalf("kept %+v of %d messages; want the last of %d, %+v", req.Last, req.Count, n, all.Messages[n-1])
		}
	})
}

// FuzzUIMessagesOf: any stored blocks convert to JSON-encodable messages.
func FuzzUIMessagesOf(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7}, "text", "id")
	f.Fuzz(func(t *testing.T, ops []byte, text, id string) {
		kinds := []blocks.Kind{blocks.Markdown, blocks.Code, blocks.Mermaid, blocks.ToolCall, blocks.ToolResult,
			blocks.Confirm, blocks.Component, blocks.Warning, blocks.Form, blocks.Load}
		var msgs []store.Message
		var bs []blocks.Block
		for i, op := range ops {
			if op%7 == 0 {
				msgs = append(msgs, store.Message{ID: id, Role: store.RoleUser, Content: text, Source: store.MessageSource([]string{"", "decision"}[i%2])})
				if len(bs) > 0 {
					msgs = append(msgs, store.Message{ID: id + "a", Role: store.RoleAssistant, Blocks: bs})
					bs = nil
				}
				continue
			}
			bs = append(bs, blocks.Block{Kind: kinds[int(op)%len(kinds)], Content: text, Tag: text, ID: id + string(rune('a'+i%3)),
				Name: "t" + string(rune('a'+int(op)%2)), OK: op%2 == 0, ErrorCode: []string{"", "DECLINED"}[int(op)%2], Data: json.RawMessage(text),
				CallID: []string{"", id + "c"}[i%2], ClientSide: op%5 == 0})
		}
		msgs = append(msgs, store.Message{ID: id + "z", Role: store.RoleAssistant, Blocks: bs})
		ps := []store.Proposal{{Token: id + "a", Status: store.ProposalPending, CallID: id + "b"}, {Token: id + "b", Status: store.ProposalApplied}}
		if _, err := json.Marshal(uiMessagesOf(msgs, ps)); err != nil {
			t.Fatal(err)
		}
	})
}
