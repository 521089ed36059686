package uistream_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/blocks/uistream"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func meta(thread, msg, user, title string) blocks.Block {
	return blocks.Block{Kind: blocks.Meta, Meta: &blocks.MetaInfo{ThreadID: thread, MessageID: msg, UserMessageID: user, Title: title}}
}

func end(finish string, in, out int64) blocks.Block {
	return blocks.Block{Kind: blocks.Meta, Meta: &blocks.MetaInfo{ThreadID: "th1", MessageID: "m2", InputTokens: in, OutputTokens: out, Finish: finish}}
}

var scenarios = []struct {
	name string
	opts uistream.Options
	in   []blocks.Block
}{
	{"answer", uistream.Options{}, []blocks.Block{
		meta("th1", "m2", "m1", "Notes"),
		{Kind: blocks.Reasoning, Content: "The user wants "},
		{Kind: blocks.Reasoning, Content: "their notes."},
		{Kind: blocks.Markdown, Content: "You have **2 notes**:\n"},
		{Kind: blocks.Markdown, Content: "- milk"},
		{Kind: blocks.Load, Tag: "code"},
		{Kind: blocks.Code, Tag: "go", Content: "fmt.Println(\"```\")"},
		{Kind: blocks.Markdown, Content: "Done."},
		end("stop", 120, 30),
	}},
	{"tool-round", uistream.Options{}, []blocks.Block{
		meta("th1", "m2", "m1", ""),
		{Kind: blocks.Markdown, Content: "Let me look."},
		{Kind: blocks.ToolCall, ID: "c1", Name: "list_notes", Data: json.RawMessage(`{"limit":5}`)},
		{Kind: blocks.ToolCall, ID: "c2", Name: "get_time"},
		{Kind: blocks.ToolResult, ID: "c1", Name: "list_notes", OK: true, Content: "2 notes"},
		{Kind: blocks.ToolResult, ID: "c2", Name: "get_time", Content: "The tool failed.", ErrorCode: "INTERNAL"},
		{Kind: blocks.Markdown, Content: "You have 2 notes."},
		{Kind: blocks.Warning, Content: "The answer reached its length limit."},
		end("length", 300, 90),
	}},
	{"approval-request", uistream.Options{}, []blocks.Block{
		meta("th1", "m2", "m1", ""),
		{Kind: blocks.Markdown, Content: "I will add it."},
		{Kind: blocks.ToolCall, ID: "c1", Name: "add_note", Data: json.RawMessage(`{"text":"milk"}`)},
		{Kind: blocks.ToolCall, ID: "c2", Name: "add_note", Data: json.RawMessage(`{"text":"eggs"}`)},
		{Kind: blocks.Confirm, ID: "tok1", Name: "add_note", Content: "Add a note: milk", CallID: "c1", Effect: "mutate"},
		{Kind: blocks.Confirm, ID: "tok2", Name: "add_note", Content: "Add a note: eggs", CallID: "c2", Effect: "mutate"},
		end("approval", 200, 40),
	}},
	{"decision-continues", uistream.Options{MessageID: "client-msg-7"}, []blocks.Block{
		meta("th1", "m4", "m3", ""),
		{Kind: blocks.ToolResult, ID: "c1", Name: "add_note", OK: true, Content: "added"},
		{Kind: blocks.Markdown, Content: "Added."},
		end("stop", 250, 5),
		meta("th1", "m6", "m5", ""),
		{Kind: blocks.ToolResult, ID: "c2", Name: "add_note", ErrorCode: "DECLINED", Content: "The user declined this action."},
		{Kind: blocks.Markdown, Content: "Not added."},
		end("stop", 260, 4),
	}},
	{"client-tool-and-form", uistream.Options{}, []blocks.Block{
		meta("th1", "m2", "m1", ""),
		{Kind: blocks.ToolCall, ID: "c1", Name: "browser_time", ClientSide: true},
		{Kind: blocks.ToolCall, ID: "c2", Name: "ask_user", Data: json.RawMessage(`{"questions":[{"id":"t","label":"Text?","type":"text"}]}`)},
		{Kind: blocks.Form, ID: "c2", Data: json.RawMessage(`{"questions":[{"id":"t","label":"Text?","type":"text"}]}`)},
		{Kind: blocks.Component, Tag: "chart", Data: json.RawMessage(`{"points":[1,2]}`)},
		end("client_tool", 90, 12),
	}},
	{"client-answered", uistream.Options{MessageID: "client-msg-9", Answered: []string{"c1"}}, []blocks.Block{
		meta("th1", "m4", "m3", ""),
		{Kind: blocks.ToolResult, ID: "c1", Name: "browser_time", OK: true, Content: "Result from the user's application."},
		{Kind: blocks.Markdown, Content: "It is 10:00 in your browser."},
		end("stop", 80, 9),
	}},
	{"error", uistream.Options{}, []blocks.Block{
		meta("th1", "m2", "m1", ""),
		{Kind: blocks.Markdown, Content: "Partial"},
		{Kind: blocks.Error, ErrorCode: "model_unavailable", Content: "The assistant is unavailable right now."},
		{Kind: blocks.Markdown, Content: "never sent"},
	}},
	{"waiting-for-the-model", uistream.Options{}, []blocks.Block{
		meta("th1", "m2", "m1", ""),
		{Kind: blocks.Meta, Meta: &blocks.MetaInfo{ThreadID: "th1", MessageID: "m2", Waiting: "The model is busy. Trying again in 2s."}},
		{Kind: blocks.Markdown, Content: "Here now."},
		end("stop", 10, 2),
	}},
	{"guard-warning", uistream.Options{}, []blocks.Block{
		meta("th1", "m2", "m1", ""),
		{Kind: blocks.Warning, Content: "Deine Nachricht enthält eine E-Mail-Adresse.", Data: json.RawMessage(`{"action":"warn","found":["email"]}`)},
		{Kind: blocks.Markdown, Content: "Gern."},
		end("stop", 10, 2),
	}},
	{"refused-before-start", uistream.Options{}, []blocks.Block{
		{Kind: blocks.Error, ErrorCode: "quota_exceeded", Content: "You have used today's allowance."},
	}},
}

func encode(t testing.TB, opts uistream.Options, in []blocks.Block) string {
	var buf bytes.Buffer
	enc := uistream.NewEncoder(&buf, opts)
	for _, b := range in {
		if err := enc.Block(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestGolden(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			got := encode(t, sc.opts, sc.in)
			check(t, got)
			path := filepath.Join("testdata", sc.name+".sse")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if got != string(want) {
				t.Errorf("encoding differs from %s:\n%s", path, got)
			}
		})
	}
}

// coreFields are the fields each chunk type may carry besides "type": the
// core of protocol v1 that every client accepts (strict ones reject any
// other key).
var coreFields = map[string]string{
	"start": "messageId messageMetadata", "start-step": "", "finish-step": "",
	"text-start": "id", "text-delta": "id delta", "text-end": "id",
	"reasoning-start": "id", "reasoning-delta": "id delta", "reasoning-end": "id",
	"tool-input-available": "toolCallId toolName input", "tool-output-available": "toolCallId output",
	"tool-output-error": "toolCallId errorText", "tool-output-denied": "toolCallId",
	"tool-approval-request": "approvalId toolCallId", "message-metadata": "messageMetadata",
	"finish": "finishReason messageMetadata", "error": "errorText", "data-": "data transient",
}

// check verifies the rules a client enforces on a UI message stream:
// SSE framing, one start first, text deltas only inside their part, tool
// chunks only for announced calls, nothing after an error but [DONE], and
// optional fields never null.
func check(t testing.TB, stream string) {
	t.Helper()
	var types []string
	open := map[string]bool{}
	calls := map[string]bool{}
	ended := false
	sc := bufio.NewScanner(strings.NewReader(stream))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("not an SSE data line: %q", line)
		}
		if data == "[DONE]" {
			ended = true
			continue
		}
		if ended {
			t.Fatalf("a chunk after [DONE]: %s", data)
		}
		var c map[string]any
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk is not JSON: %s", data)
		}
		typ, _ := c["type"].(string)
		for k, v := range c {
			if v == nil && k != "input" && k != "output" && k != "data" {
				t.Fatalf("optional field %q is null in %s", k, data)
			}
		}
		allowed, ok := coreFields[typ]
		if strings.HasPrefix(typ, "data-") {
			allowed, ok = coreFields["data-"], true
		}
		if !ok {
			t.Fatalf("chunk type %q is not one every client accepts: %s", typ, data)
		}
		for k := range c {
			if k != "type" && !strings.Contains(" "+allowed+" ", " "+k+" ") {
				t.Fatalf("%s has field %q, not a core field of the protocol: %s", typ, k, data)
			}
		}
		if r, ok := c["finishReason"]; ok && !strings.Contains(" stop length content-filter tool-calls error other ", " "+r.(string)+" ") {
			t.Fatalf("finishReason %v is not one the protocol defines", r)
		}
		if len(types) > 0 && types[len(types)-1] == "error" {
			t.Fatalf("a chunk after error: %s", data)
		}
		switch {
		case len(types) == 0 && typ != "start" && typ != "error":
			t.Fatalf("the stream starts with %q", typ)
		case typ == "start" && len(types) > 0:
			t.Fatalf("a second start: %s", data)
		case typ == "text-start", typ == "reasoning-start":
			open[c["id"].(string)] = true
		case (typ == "text-delta" || typ == "reasoning-delta") && !open[c["id"].(string)]:
			t.Fatalf("delta outside its part: %s", data)
		case typ == "text-end", typ == "reasoning-end":
			if !open[c["id"].(string)] {
				t.Fatalf("text-end of no open part: %s", data)
			}
			delete(open, c["id"].(string))
		case typ == "tool-input-available":
			calls[c["toolCallId"].(string)] = true
			if _, ok := c["input"]; !ok {
				t.Fatalf("no input key: %s", data)
			}
		case typ == "tool-approval-request":
			if !calls[c["toolCallId"].(string)] || c["approvalId"] == "" {
				t.Fatalf("approval for an unannounced call: %s", data)
			}
		case strings.HasPrefix(typ, "data-"):
			if _, ok := c["data"]; !ok {
				t.Fatalf("no data key: %s", data)
			}
		}
		types = append(types, typ)
	}
	if !ended {
		t.Fatal("no [DONE]")
	}
	if len(open) > 0 && (len(types) == 0 || types[len(types)-1] != "error") {
		t.Fatalf("text parts left open: %v", open)
	}
}

func FuzzEncoder(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, "text ```x", "id")
	f.Add([]byte{9, 4, 4, 6, 5, 1, 9}, "", "c1")
	f.Fuzz(func(t *testing.T, ops []byte, text, id string) {
		kinds := []blocks.Kind{blocks.Meta, blocks.Markdown, blocks.Reasoning, blocks.Code, blocks.Mermaid, blocks.Load, blocks.ToolCall,
			blocks.ToolResult, blocks.Confirm, blocks.Form, blocks.Component, blocks.Warning, blocks.Error}
		var in []blocks.Block
		for i, op := range ops {
			k := kinds[int(op)%len(kinds)]
			b := blocks.Block{Kind: k, Content: text, ID: id + string(rune('a'+i%3)), Name: "tool" + string(rune('a'+int(op)%2)), Tag: text, OK: op%2 == 0}
			switch k {
			case blocks.Meta:
				b.Meta = &blocks.MetaInfo{MessageID: id}
				switch op % 3 {
				case 0:
					b.Meta.Finish = text
				case 1:
					b.Meta.Waiting = text
				}
			case blocks.ToolCall, blocks.Component:
				b.Data = json.RawMessage(text)
				b.ClientSide = op%5 == 0
			case blocks.Confirm:
				if op%3 != 0 { // else a card without its call, as stored before cards carried it
					b.CallID = id + string(rune('a'+int(op)%4))
				}
			}
			in = append(in, b)
		}
		check(t, encode(t, uistream.Options{MessageID: id}, in))
	})
}

func TestFinishReasonMapsTheFinishesOfATurn(t *testing.T) {
	for finish, want := range map[string]string{
		"": "", blocks.FinishStop: "stop", blocks.FinishEmpty: "stop", blocks.FinishLength: "length",
		blocks.FinishToolCalls: "tool-calls", blocks.FinishApproval: "tool-calls", blocks.FinishClientTool: "tool-calls",
		blocks.FinishAskUser: "tool-calls", blocks.FinishTerminalTool: "tool-calls", blocks.FinishBlocked: "content-filter",
		blocks.FinishOffTopic: "content-filter", blocks.FinishQuota: "other", "error": "error", "a provider's own": "other",
	} {
		if got := uistream.FinishReason(finish); got != want {
			t.Errorf("FinishReason(%q) = %q, want %q", finish, got, want)
		}
	}
}

func TestConfirmCardGoesToTheCallItCarries(t *testing.T) {
	in := []blocks.Block{
		meta("th1", "m2", "m1", ""),
		{Kind: blocks.ToolCall, ID: "c1", Name: "add_note"},
		{Kind: blocks.ToolCall, ID: "c2", Name: "add_note"},
		{Kind: blocks.ToolCall, ID: "c3", Name: "rename"},
		{Kind: blocks.ToolCall, ID: "c4", Name: "rename"},
		// Cards in another order than their calls.
		{Kind: blocks.Confirm, ID: "tok2", Name: "add_note", CallID: "c2"},
		{Kind: blocks.Confirm, ID: "tok1", Name: "add_note", CallID: "c1"},
		// A card for a call this stream never announced.
		{Kind: blocks.Confirm, ID: "tok9", Name: "add_note", CallID: "c9"},
		// A card without a call id: the oldest unanswered call of its tool.
		{Kind: blocks.ToolResult, ID: "c3", Name: "rename", Content: "refused"},
		{Kind: blocks.Confirm, ID: "tok4", Name: "rename"},
		end("approval", 1, 1),
	}
	stream := encode(t, uistream.Options{}, in)
	check(t, stream)
	got := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(stream))
	for sc.Scan() {
		var c map[string]any
		if json.Unmarshal([]byte(strings.TrimPrefix(sc.Text(), "data: ")), &c) == nil && c["type"] == "tool-approval-request" {
			got[c["approvalId"].(string)] = c["toolCallId"].(string)
		}
	}
	if want := map[string]string{"tok1": "c1", "tok2": "c2", "tok4": "c4"}; !reflect.DeepEqual(got, want) {
		t.Errorf("approval requests (card -> call) %v, want %v", got, want)
	}
}
