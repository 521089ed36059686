package uistream_test

import (
	"bufio"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/blocks/uistream"
)

// sdkParts adds a UI message stream's chunks up to the parts they build,
// onto parts: what the AI SDK's client keeps of a streamed message (step
// markers and transient data left out). A continuation's stream goes on
// from the parts the message has.
func sdkParts(t *testing.T, parts []map[string]any, stream string) []map[string]any {
	t.Helper()
	byID := map[string]map[string]any{} // open text and reasoning parts, and tool parts by call id
	for _, p := range parts {
		if id, ok := p["toolCallId"].(string); ok {
			byID[id] = p
		}
	}
	sc := bufio.NewScanner(strings.NewReader(stream))
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c map[string]any
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatal(err)
		}
		typ, _ := c["type"].(string)
		id, _ := c["id"].(string)
		call, _ := c["toolCallId"].(string)
		switch {
		case typ == "text-start" || typ == "reasoning-start":
			p := map[string]any{"type": strings.TrimSuffix(typ, "-start"), "text": "", "state": "streaming"}
			byID[id] = p
			parts = append(parts, p)
		case typ == "text-delta" || typ == "reasoning-delta":
			byID[id]["text"] = byID[id]["text"].(string) + c["delta"].(string)
		case typ == "text-end" || typ == "reasoning-end":
			byID[id]["state"] = "done"
		case typ == "tool-input-available":
			p := map[string]any{"type": "tool-" + c["toolName"].(string), "toolCallId": call, "state": "input-available", "input": c["input"]}
			byID[call] = p
			parts = append(parts, p)
		case typ == "tool-approval-request":
			byID[call]["state"], byID[call]["approval"] = "approval-requested", map[string]any{"id": c["approvalId"]}
		case strings.HasPrefix(typ, "tool-output-"):
			p := byID[call]
			p["state"] = strings.TrimPrefix(typ, "tool-")
			for _, k := range []string{"output", "errorText"} {
				if v, ok := c[k]; ok {
					p[k] = v
				}
			}
		case strings.HasPrefix(typ, "data-") && c["transient"] != true:
			parts = append(parts, map[string]any{"type": typ, "data": c["data"]})
		}
	}
	return parts
}

// asJSON is v as encoding/json gives it back.
func asJSON(t *testing.T, v any) []map[string]any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// stored is what the store keeps of a streamed answer.
func stored(in []blocks.Block) []blocks.Block {
	var l blocks.List
	for _, b := range in {
		l.Add(b)
	}
	return l.Blocks()
}

func TestHistoryPartsAreWhatTheStreamBuilt(t *testing.T) {
	for _, name := range []string{"answer", "tool-round", "approval-request", "client-tool-and-form"} {
		t.Run(name, func(t *testing.T) {
			i := 0
			for scenarios[i].name != name {
				i++
			}
			sc := scenarios[i]
			h := uistream.History{Cards: map[string]uistream.Card{"tok1": {State: uistream.CardPending}, "tok2": {State: uistream.CardPending}}}
			got := asJSON(t, h.Parts(stored(sc.in)))
			want := sdkParts(t, nil, encode(t, sc.opts, sc.in))
			if !reflect.DeepEqual(got, want) {
				t.Errorf("reloaded parts differ from the streamed ones\n got %v\nwant %v", got, want)
			}
		})
	}
}

func TestHistoryShowsHowEachCardWasDecided(t *testing.T) {
	answer := []blocks.Block{
		{Kind: blocks.ToolCall, ID: "c1", Name: "add_note"},
		{Kind: blocks.ToolCall, ID: "c2", Name: "add_note"},
		{Kind: blocks.ToolCall, ID: "c3", Name: "add_note"},
		{Kind: blocks.Confirm, ID: "tok1", Name: "add_note"},
		{Kind: blocks.Confirm, ID: "tok2", Name: "add_note"},
		{Kind: blocks.Confirm, ID: "tok3", Name: "add_note"},
	}
	// tok1 applied and answered by a later turn, tok2 declined with no
	// result yet, tok3 unknown (expired and gone).
	h := uistream.History{Cards: map[string]uistream.Card{"tok1": {State: uistream.CardApplied}, "tok2": {State: uistream.CardClosed}}}
	parts := h.Parts(answer)
	if more := h.Parts([]blocks.Block{{Kind: blocks.ToolResult, ID: "c1", Name: "add_note", OK: true, Content: "added"}}); len(more) != 0 {
		t.Errorf("a result of an earlier answer's call made parts of its own: %v", more)
	}
	got := asJSON(t, parts)
	want := []map[string]any{
		{"type": "tool-add_note", "toolCallId": "c1", "input": nil, "state": "output-available", "output": map[string]any{"summary": "added"},
			"approval": map[string]any{"id": "tok1", "approved": true}},
		{"type": "tool-add_note", "toolCallId": "c2", "input": nil, "state": "output-denied", "approval": map[string]any{"id": "tok2", "approved": false}},
		{"type": "tool-add_note", "toolCallId": "c3", "input": nil, "state": "output-denied", "approval": map[string]any{"id": "tok3", "approved": false}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parts\n got %v\nwant %v", got, want)
	}
}

func TestHistoryZeroValueIsReady(t *testing.T) {
	var h uistream.History
	got := asJSON(t, h.Parts([]blocks.Block{{Kind: blocks.Markdown, Content: "hi "}, {Kind: blocks.Code, Content: "x"}, {Kind: blocks.Load, Tag: "code"}}))
	if want := []map[string]any{{"type": "text", "text": "hi \n```\nx\n```\n", "state": "done"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("parts %v, want %v", got, want)
	}
	if parts := h.Parts([]blocks.Block{{Kind: blocks.Meta, Meta: &blocks.MetaInfo{}}, {Kind: blocks.Form, ID: "f"}}); len(parts) != 0 {
		t.Errorf("an answer that shows nothing has parts %v", parts)
	}
}

// FuzzHistory: any stored blocks convert to JSON-encodable parts, each
// with a type, and every tool part has a call id and a state.
func FuzzHistory(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, "text ```x", "id")
	f.Add([]byte{6, 6, 8, 8, 7, 12, 6, 8}, "DECLINED", "c")
	f.Fuzz(func(t *testing.T, ops []byte, text, id string) {
		kinds := []blocks.Kind{blocks.Markdown, blocks.Reasoning, blocks.Code, blocks.Mermaid, blocks.Load, blocks.Form,
			blocks.ToolCall, blocks.ToolResult, blocks.Confirm, blocks.Component, blocks.Warning, blocks.Meta}
		h := uistream.History{Cards: map[string]uistream.Card{id + "a": {State: uistream.CardPending}, id + "b": {State: uistream.CardApplied, CallID: id + "c"}}}
		var bs []blocks.Block
		for i, op := range ops {
			if op == 12 { // the next answer
				asJSON(t, h.Parts(bs))
				bs = nil
				continue
			}
			bs = append(bs, blocks.Block{Kind: kinds[int(op)%len(kinds)], Content: text, Tag: text, ID: id + string(rune('a'+i%3)),
				Name: "t" + string(rune('a'+int(op)%2)), OK: op%2 == 0, ErrorCode: []string{"", blocks.CodeDeclined}[int(op)%2],
				Data: json.RawMessage(text)})
		}
		for _, p := range asJSON(t, h.Parts(bs)) {
			typ, _ := p["type"].(string)
			if typ == "" {
				t.Fatalf("a part with no type: %v", p)
			}
			if strings.HasPrefix(typ, "tool-") && (p["toolCallId"] == nil || p["state"] == nil) {
				t.Fatalf("a tool part with no call id or state: %v", p)
			}
		}
	})
}

func TestHistoryPutsACardOnTheCallItDecides(t *testing.T) {
	answer := []blocks.Block{
		{Kind: blocks.ToolCall, ID: "c1", Name: "add_note"},
		{Kind: blocks.ToolCall, ID: "c2", Name: "add_note"},
		{Kind: blocks.ToolCall, ID: "c3", Name: "add_note"},
		{Kind: blocks.ToolResult, ID: "c1", Name: "add_note", Content: "refused"},
		{Kind: blocks.Confirm, ID: "tok3", Name: "add_note", CallID: "c3"},
		// Stored before cards carried their call: the store knows it.
		{Kind: blocks.Confirm, ID: "tok2", Name: "add_note"},
	}
	h := uistream.History{Cards: map[string]uistream.Card{
		"tok2": {State: uistream.CardPending, CallID: "c2"}, "tok3": {State: uistream.CardApplied}}}
	approvals := map[string]any{}
	for _, p := range asJSON(t, h.Parts(answer)) {
		approvals[p["toolCallId"].(string)] = p["approval"]
	}
	want := map[string]any{"c1": nil, "c2": map[string]any{"id": "tok2"}, "c3": map[string]any{"id": "tok3", "approved": true}}
	if !reflect.DeepEqual(approvals, want) {
		t.Errorf("approvals by call %v, want %v", approvals, want)
	}

	// Stored without a call id anywhere: the oldest call of its tool still
	// waiting, not one already answered.
	h = uistream.History{}
	parts := asJSON(t, h.Parts([]blocks.Block{answer[0], answer[1], answer[3], {Kind: blocks.Confirm, ID: "tok", Name: "add_note"}}))
	if parts[0]["approval"] != nil || parts[1]["approval"] == nil {
		t.Errorf("a card with no call id went to %v, want the unanswered call c2", parts)
	}
}

// A declined call's result keeps the reason the user gave (Data
// {"reason"}): after a reload the approval carries it, as useChat's
// addToolApprovalResponse({id, approved: false, reason}) left it.
func TestHistoryKeepsADeclinesReason(t *testing.T) {
	h := uistream.History{Cards: map[string]uistream.Card{"tok1": {State: uistream.CardClosed}, "tok2": {State: uistream.CardClosed}}}
	parts := h.Parts([]blocks.Block{
		{Kind: blocks.ToolCall, ID: "c1", Name: "add_note"},
		{Kind: blocks.ToolCall, ID: "c2", Name: "add_note"},
		{Kind: blocks.Confirm, ID: "tok1", Name: "add_note", CallID: "c1"},
		{Kind: blocks.Confirm, ID: "tok2", Name: "add_note", CallID: "c2"},
	})
	h.Parts([]blocks.Block{{Kind: blocks.ToolResult, ID: "c1", Name: "add_note", ErrorCode: blocks.CodeDeclined,
		Content: "The user declined this action.", Data: json.RawMessage(`{"reason":"not that list"}`)}})
	h.Parts([]blocks.Block{{Kind: blocks.ToolResult, ID: "c2", Name: "add_note", ErrorCode: blocks.CodeDeclined,
		Content: "The user declined this action."}})
	got := asJSON(t, parts)
	want := []map[string]any{
		{"type": "tool-add_note", "toolCallId": "c1", "input": nil, "state": "output-denied",
			"approval": map[string]any{"id": "tok1", "approved": false, "reason": "not that list"}},
		{"type": "tool-add_note", "toolCallId": "c2", "input": nil, "state": "output-denied",
			"approval": map[string]any{"id": "tok2", "approved": false}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parts\n got %v\nwant %v", got, want)
	}
}
