package httpapi_test

// Regression tests from an independent review of the AI SDK route (POST
// /api/chat/ui, GET /api/chat/ui/{id}/stream). Each "Regression" test
// reproduced a bug the review found, described above it with the correct
// behaviour; each "Holds" test is an attack that held. The tests that drive the real
// AI SDK client (ai 7, @ai-sdk/react 4) use the packages the example
// server's check installs and skip without node.

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/assistant/httpapi"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/tools"
)

// ---------------------------------------------------------------------------
// Helpers

// approvalPart is a tool part as useChat sends it after
// addToolApprovalResponse.
func approvalPart(callID, token string, approved bool) map[string]any {
	return map[string]any{"type": "tool-add_item", "toolCallId": callID, "state": "approval-responded", "input": map[string]any{},
		"approval": map[string]any{"id": token, "approved": approved}}
}

// assistantMsg is a useChat assistant message.
func assistantMsg(id string, parts ...map[string]any) map[string]any {
	ps := []any{}
	for _, p := range parts {
		ps = append(ps, p)
	}
	return map[string]any{"id": id, "role": "assistant", "parts": ps}
}

var stepStart = map[string]any{"type": "step-start"}

// withClientTool adds browser_time, a client-side tool, beside weather and
// add_item.
func withClientTool() option {
	return withEngine(func(c *assistant.Config) {
		clock := tools.Must(tools.NewClient[struct{}](tools.Spec{Name: "browser_time", Category: "general", Description: "The browser's clock."}))
		all := []tools.BaseTool{clock}
		for _, n := range []string{"weather", "add_item"} {
			tl, _ := c.Tools.Lookup(n)
			all = append(all, tl)
		}
		set, err := tools.NewSet(all...)
		if err != nil {
			panic(err)
		}
		c.Tools = set
	})
}

// startUI posts to /api/chat/ui and returns once the first text delta has
// arrived; leave drops the connection (the turn goes on).
func (h *harness) startUI(user, body string) (leave func()) {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	resp := h.request(ctx, "POST", "/api/chat/ui", user, body)
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		h.t.Fatalf("status %d: %s", resp.StatusCode, raw)
	}
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			h.t.Fatalf("the stream ended before any text: %v", err)
		}
		if strings.Contains(line, `"text-delta"`) {
			break
		}
	}
	leave = func() { cancel(); resp.Body.Close() }
	h.t.Cleanup(leave)
	return leave
}

// eventually polls cond for up to 3 s.
func eventually(cond func() bool) bool {
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// clientWouldResend applies a response's chunks to the parts of the
// assistant message the client continued and reports whether useChat, with
// the sendAutomaticallyWhen the README recommends
// (lastAssistantMessageIsCompleteWithApprovalResponses ||
// lastAssistantMessageIsCompleteWithToolCalls, ai 7), would POST again at
// once. An error chunk stops it. It follows process-ui-message-stream.ts and
// the two predicates.
func clientWouldResend(sent []map[string]any, cs []uiChunk) bool {
	type part struct{ kind, state, id string }
	var parts []part
	for _, p := range sent {
		typ, _ := p["type"].(string)
		state, _ := p["state"].(string)
		id, _ := p["toolCallId"].(string)
		switch {
		case typ == "step-start":
			parts = append(parts, part{kind: "step"})
		case typ == "text":
			if state == "" {
				state = "done"
			}
			parts = append(parts, part{kind: "text", state: state})
		case strings.HasPrefix(typ, "tool-") || typ == "dynamic-tool":
			parts = append(parts, part{kind: "tool", state: state, id: id})
		}
	}
	setTool := func(id, state string) {
		for i := range parts {
			if parts[i].kind == "tool" && parts[i].id == id {
				parts[i].state = state
				return
			}
		}
		parts = append(parts, part{kind: "tool", state: state, id: id})
	}
	for _, c := range cs {
		switch c.str("type") {
		case "error":
			return false
		case "start-step":
			parts = append(parts, part{kind: "step"})
		case "text-start":
			parts = append(parts, part{kind: "text", state: "streaming", id: c.str("id")})
		case "text-end":
			for i := range parts {
				if parts[i].kind == "text" && parts[i].id == c.str("id") {
					parts[i].state = "done"
				}
			}
		case "tool-input-available":
			setTool(c.str("toolCallId"), "input-available")
		case "tool-approval-request":
			setTool(c.str("toolCallId"), "approval-requested")
		case "tool-output-available":
			setTool(c.str("toolCallId"), "output-available")
		case "tool-output-error":
			setTool(c.str("toolCallId"), "output-error")
		case "tool-output-denied":
			setTool(c.str("toolCallId"), "output-denied")
		}
	}
	last := 0
	for i, p := range parts {
		if p.kind == "step" {
			last = i + 1
		}
	}
	step := parts[last:]
	responded, allAnswered, allOutput, tools, lastTool := 0, true, true, 0, -1
	for i, p := range step {
		if p.kind != "tool" {
			continue
		}
		tools++
		lastTool = i
		switch p.state {
		case "approval-responded":
			responded++
			allOutput = false
		case "output-available", "output-error":
		case "output-denied":
			allOutput = false
		default:
			allAnswered, allOutput = false, false
		}
	}
	approvals := responded > 0 && allAnswered
	openText := false
	for _, p := range step[lastTool+1:] {
		if p.kind == "text" && p.state != "done" {
			openText = true
		}
	}
	toolCalls := tools > 0 && allOutput && !openText
	return approvals || toolCalls
}

// runSDK runs an ES module with the real AI SDK packages installed for the
// example server's check (examples/server/aisdk), with cfg as JSON in
// $CFG, and decodes the JSON it prints. It skips without node or the
// packages.
func runSDK(t *testing.T, script string, cfg map[string]any, out any) {
	t.Helper()
	dir, err := filepath.Abs("../../examples/server/aisdk")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "ai")); err != nil {
		t.Skip("the AI SDK packages are not installed (npm ci --prefix examples/server/aisdk)")
	}
	raw, _ := json.Marshal(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "--input-type=module", "-")
	cmd.Dir = dir // bare imports resolve against the working directory
	cmd.Stdin = strings.NewReader(script)
	cmd.Env = append(os.Environ(), "CFG="+string(raw))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	if err := json.Unmarshal(stdout, out); err != nil {
		t.Fatalf("node printed %q: %v", stdout, err)
	}
}

// sdkPrelude builds a Chat from cfg: chatId, base, user, messages.
const sdkPrelude = `
import { Chat } from '@ai-sdk/react';
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses, lastAssistantMessageIsCompleteWithToolCalls } from 'ai';
const cfg = JSON.parse(process.env.CFG);
let posts = 0;
const chat = new Chat({
  id: cfg.chatId,
  messages: cfg.messages,
  transport: new DefaultChatTransport({
    api: cfg.base + '/api/chat/ui', headers: { 'X-User': cfg.user },
    fetch: async (url, init) => { if ((init?.method ?? 'GET') === 'POST') posts++; return fetch(url, init); },
  }),
  sendAutomaticallyWhen: ({ messages }) =>
    lastAssistantMessageIsCompleteWithApprovalResponses({ messages }) || lastAssistantMessageIsCompleteWithToolCalls({ messages }),
});
const report = () => { console.log(JSON.stringify({ posts, status: chat.status, error: chat.error?.message, messages: chat.messages })); process.exit(0); };
`

type sdkOutcome struct {
	Posts    int              `json:"posts"`
	Status   string           `json:"status"`
	Error    string           `json:"error"`
	Messages []map[string]any `json:"messages"`
}

// approvalTurn runs a first turn on chat that ends on a confirm card for
// call-1 and returns the answer's message id and the card's token.
func approvalTurn(t *testing.T, h *harness, user, chat string) (msgID, token string) {
	t.Helper()
	cs := readUI(t, h.do("POST", "/api/chat/ui", user, uiBody(t, chat, "submit-message", "", userMsg("u1", "add an item"))))
	req := ofType(cs, "tool-approval-request")
	if len(req) != 1 {
		t.Fatalf("no approval request: %v", cs)
	}
	return cs[0].str("messageId"), req[0].str("approvalId")
}

// ---------------------------------------------------------------------------
// Findings

// BUG (most severe): a continuation that carries nothing out is answered
// with a bare start/finish ("an empty continuation", uiPlan drops approval
// parts whose token is not pending and outputs for calls not waiting without
// a word). The client's message is then unchanged, so the
// sendAutomaticallyWhen the README recommends is still true after the stream
// finishes and useChat POSTs the same body again, forever, as fast as the
// server answers (the real client made ~900 POSTs in 1.5 s against an
// expired card). Cases: a card that expired, one decided in another tab, a
// token of another of the user's threads, client outputs posted twice.
// Correct: never answer a continuation with nothing: re-state the outcome so
// the client's last step moves on (tool-output-available / -denied for a
// decided card followed by the stored reply in a new step), or refuse with a
// status or an error chunk ("That approval has expired", 409 for another
// thread's token), which stops the automatic send. Fix in Handler.uiPlan
// (pass non-pending tokens to the Engine, or resolve them from the
// proposal's status) and Handler.serveUI (no bare empty stream).
func TestReviewUIContinuationThatCarriesNothingOutStopsTheClient(t *testing.T) {
	post := func(t *testing.T, h *harness, chat, msgID string, parts ...map[string]any) {
		t.Helper()
		resp := h.do("POST", "/api/chat/ui", "alice", uiBody(t, chat, "submit-message", msgID, userMsg("u1", "add an item"), assistantMsg(msgID, parts...)))
		if resp.StatusCode != http.StatusOK {
			discard(resp) // a refusal: useChat shows it and stops
			return
		}
		if cs := readUI(t, resp); clientWouldResend(parts, cs) {
			t.Errorf("useChat would POST this continuation again at once, and again: the answer %v leaves its last step as it was", cs)
		}
	}
	approval := func() *fake.Provider {
		m := fake.New(fake.Turn{fake.Text("I will add it."), fake.CallTool("call-1", "add_item", `{}`)})
		m.SetDefault(fake.Turn{fake.Text("Done.")})
		return m
	}
	t.Run("a card decided in another tab", func(t *testing.T) {
		h := newHarness(t, approval())
		msgID, token := approvalTurn(t, h, "alice", "c")
		if code, body := h.post("alice", decisionBody("c", token, true)); code != http.StatusOK {
			t.Fatalf("decision over NDJSON: %d %s", code, body)
		}
		post(t, h, "c", msgID, stepStart, approvalPart("call-1", token, true))
	})
	t.Run("the same continuation posted twice", func(t *testing.T) {
		h := newHarness(t, approval())
		msgID, token := approvalTurn(t, h, "alice", "c")
		readUI(t, h.do("POST", "/api/chat/ui", "alice", uiBody(t, "c", "submit-message", msgID, userMsg("u1", "add an item"),
			assistantMsg(msgID, stepStart, approvalPart("call-1", token, true)))))
		post(t, h, "c", msgID, stepStart, approvalPart("call-1", token, true))
	})
	t.Run("an expired card", func(t *testing.T) {
		var skew atomic.Int64
		h := newHarness(t, approval(), withEngine(func(c *assistant.Config) {
			c.Now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
		}))
		msgID, token := approvalTurn(t, h, "alice", "c")
		skew.Store(int64(48 * time.Hour))
		post(t, h, "c", msgID, stepStart, approvalPart("call-1", token, true))
	})
	t.Run("a card of another of the user's threads", func(t *testing.T) {
		model := approval()
		model.Append(fake.Turn{fake.CallTool("call-9", "add_item", `{}`)})
		h := newHarness(t, model)
		msgID, _ := approvalTurn(t, h, "alice", "c")
		_, other := approvalTurn(t, h, "alice", "c2")
		post(t, h, "c", msgID, stepStart, approvalPart("call-1", other, true))
	})
	t.Run("client outputs posted twice", func(t *testing.T) {
		model := fake.New(fake.Turn{fake.CallTool("call-2", "browser_time", `{}`)})
		model.SetDefault(fake.Turn{fake.Text("It is ten.")})
		h := newHarness(t, model, withClientTool())
		cs := readUI(t, h.do("POST", "/api/chat/ui", "alice", uiBody(t, "c", "submit-message", "", userMsg("u1", "what time is it"))))
		msgID := cs[0].str("messageId")
		out := map[string]any{"type": "tool-browser_time", "toolCallId": "call-2", "state": "output-available", "input": map[string]any{}, "output": map[string]any{"iso": "10:00"}}
		readUI(t, h.do("POST", "/api/chat/ui", "alice", uiBody(t, "c", "submit-message", msgID, userMsg("u1", "what time is it"), assistantMsg(msgID, stepStart, out))))
		post(t, h, "c", msgID, stepStart, out)
	})
	t.Run("the real client approving an expired card", func(t *testing.T) {
		var skew atomic.Int64
		h := newHarness(t, approval(), withEngine(func(c *assistant.Config) {
			c.Now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
		}))
		msgID, token := approvalTurn(t, h, "alice", "c")
		skew.Store(int64(48 * time.Hour))
		requested := map[string]any{"type": "tool-add_item", "toolCallId": "call-1", "state": "approval-requested", "input": map[string]any{},
			"approval": map[string]any{"id": token}}
		var got sdkOutcome
		runSDK(t, sdkPrelude+`
await chat.addToolApprovalResponse({ id: cfg.token, approved: true });
await new Promise(r => setTimeout(r, 1500));
await chat.stop();
report();
`, map[string]any{"chatId": "c", "base": h.srv.URL, "user": "alice", "token": token,
			"messages": []any{userMsg("u1", "add an item"), assistantMsg(msgID, stepStart, requested)}}, &got)
		if got.Posts > 2 {
			t.Errorf("the real useChat client POSTed %d times in 1.5 s after one approval (status %q)", got.Posts, got.Status)
		}
	})
}

// Regression (review of the useChat route): the resume registry is keyed by
// the chat id alone and every POST registers before the Engine has accepted
// anything: uiLiveStreams.start replaces the running stream's entry and
// uiLiveStreams.end then deletes it. So another user's POST on the same chat
// id (refused with 409), or the owner's own refused POST (a message too
// long), makes GET /api/chat/ui/{id}/stream answer 204 while the first
// stream is still running: the owner's reload loses the answer in flight.
// Correct: a POST that never starts a stream must not touch the running
// entry (register in serveUI's begin, not before the first block) and
// entries of different owners must not replace each other (key by owner and
// chat id).
//
// Since chat ids are scoped per user, another user's POST on the same chat
// id is not refused: it is that user's own chat, and streams.
func TestReviewUIResumeSurvivesOtherPOSTsOnTheSameChatID(t *testing.T) {
	for _, tc := range []struct {
		name, user, text string
		status           int
	}{
		{"another user's POST, on a chat of their own", "bob", "mine now", http.StatusOK},
		{"the owner's refused POST", "alice", strings.Repeat("x", assistant.DefaultMaxMessageBytes+1), http.StatusRequestEntityTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			open := make(chan struct{})
			model := fake.New(fake.Turn{fake.Text("First. "), gate(open), fake.Text("second")})
			model.SetDefault(fake.Turn{fake.Text("bob's answer")})
			h := newHarness(t, model)
			h.startUI("alice", uiBody(t, "live", "submit-message", "", userMsg("u1", "hi")))
			resp := h.do("POST", "/api/chat/ui", tc.user, uiBody(t, "live", "submit-message", "", userMsg("x1", tc.text)))
			if code := discard(resp); code != tc.status {
				t.Fatalf("the second POST: %d, want %d", code, tc.status)
			}
			r := h.do("GET", "/api/chat/ui/live/stream", "alice", "") // headers come while the turn waits
			close(open)
			if r.StatusCode != http.StatusOK {
				discard(r)
				t.Fatalf("resume of alice's running stream after %s: %d, want 200 and the replay", tc.name, r.StatusCode)
			}
			if cs := readUI(t, r); uiText(cs) != "First. second" {
				t.Errorf("replay %v", cs)
			}
		})
	}
}

// Regression (review of the useChat route): a continuation's stream is
// registered for resume, but its replay starts with start{messageId: the
// continued message} and then answers calls the replay never announced
// (tool-output-available for call-1). useChat's default transport
// (resumeStreamIsReplay) resets the message on the replay's first start, so
// the real client fails with "No tool invocation found for tool call ID" and
// the message loses every part it had (its text, its tool call and
// approval). Correct: a replay must be self-contained: prefix it with the
// continued message as stored (its tool calls and cards), or do not offer
// continuations for resume (204). Fix in Handler.serveUI / uiLiveStreams.
func TestReviewUIResumeOfAContinuationIsSelfContained(t *testing.T) {
	setup := func(t *testing.T) (h *harness, open chan struct{}, msgID string, sent map[string]any) {
		open = make(chan struct{})
		model := fake.New(fake.Turn{fake.Text("I will add it."), fake.CallTool("call-1", "add_item", `{}`)},
			fake.Turn{fake.Text("Done "), gate(open), fake.Text("now.")})
		h = newHarness(t, model)
		msgID, token := approvalTurn(t, h, "alice", "c")
		sent = assistantMsg(msgID, stepStart, map[string]any{"type": "text", "text": "I will add it.", "state": "done"}, approvalPart("call-1", token, true))
		h.startUI("alice", uiBody(t, "c", "submit-message", msgID, userMsg("u1", "add an item"), sent))
		return h, open, msgID, sent
	}
	t.Run("on the wire", func(t *testing.T) {
		// A continuation is not offered for resume: its replay would lack
		// the parts it continues.
		h, open, _, _ := setup(t)
		defer close(open)
		if r := h.do("GET", "/api/chat/ui/c/stream", "alice", ""); r.StatusCode != http.StatusNoContent {
			t.Errorf("resume of a running continuation: %d, want 204", r.StatusCode)
		}
	})
	t.Run("with the real client", func(t *testing.T) {
		h, open, _, sent := setup(t)
		go func() { time.Sleep(700 * time.Millisecond); close(open) }()
		var got sdkOutcome
		runSDK(t, sdkPrelude+`
await chat.resumeStream();
report();
`, map[string]any{"chatId": "c", "base": h.srv.URL, "user": "alice", "messages": []any{userMsg("u1", "add an item"), sent}}, &got)
		if got.Status == "error" {
			t.Errorf("resuming a continuation put useChat in error: %q", got.Error)
		}
		if n := len(got.Messages); n != 2 || len(got.Messages[1]["parts"].([]any)) < 3 {
			t.Errorf("after the resume the answer lost its parts: %v", got.Messages)
		}
	})
}

// Regression (review of the useChat route): a step with both a card and a
// client-side call (the model called add_item and browser_time together) is
// continued with the approval part and the client's output in one POST.
// uiPlan queues the decision first and the tool results last, but the
// decision's turn makes a new last turn, so the Engine then refuses the
// results ("Those tool results do not answer a pending tool call."): the
// client gets an error chunk, the model never sees the browser's output, and
// the call is left answered nowhere. Correct: answer the calls the last turn
// waits on (ToolResults, Form) before the decisions, which stay decidable.
// Fix the order in Handler.uiPlan.
func TestReviewUIClientOutputAndApprovalInOneStepAreBothCarriedOut(t *testing.T) {
	model := fake.New(fake.Turn{fake.CallTool("call-1", "add_item", `{}`), fake.CallTool("call-2", "browser_time", `{}`)})
	model.SetDefault(fake.Turn{fake.Text("ok")})
	h := newHarness(t, model, withClientTool())
	cs := readUI(t, h.do("POST", "/api/chat/ui", "alice", uiBody(t, "c", "submit-message", "", userMsg("u1", "add and tell the time"))))
	msgID := cs[0].str("messageId")
	req := ofType(cs, "tool-approval-request")
	if len(req) != 1 || len(ofType(cs, "tool-input-available")) != 2 {
		t.Fatalf("want a card and a client call: %v", cs)
	}
	out := map[string]any{"type": "tool-browser_time", "toolCallId": "call-2", "state": "output-available", "input": map[string]any{},
		"output": map[string]any{"iso": "BROWSER-CLOCK-10:00"}}
	cs = readUI(t, h.do("POST", "/api/chat/ui", "alice", uiBody(t, "c", "submit-message", msgID, userMsg("u1", "add and tell the time"),
		assistantMsg(msgID, stepStart, approvalPart("call-1", req[0].str("approvalId"), true), out))))
	if e := ofType(cs, "error"); len(e) != 0 {
		t.Errorf("the continuation failed: %v", e)
	}
	seen := false
	for _, r := range model.Requests() {
		for _, m := range r.Messages {
			seen = seen || strings.Contains(m.Content, "BROWSER-CLOCK-10:00")
		}
	}
	if !seen {
		t.Error("the model never received the browser's output")
	}
	if th := h.getThread("alice", "c"); len(th.Proposals) != 1 || th.Proposals[0].Status != "applied" {
		t.Errorf("proposals %+v", th.Proposals)
	}
}

// Regression (review of the useChat route): serveUI promises the stream "is
// read to its end even if the client leaves", but it runs each decision of a
// continuation with the request's context. When the client leaves during the
// first decision's turn (a closed tab, a reload), the second h.eng.Stream
// starts with a cancelled context, Engine.begin fails, and the second card
// is never decided although the user approved it; the resume copy ends with
// an error. The first turn (already begun) does run to its end, so the
// outcome depends on timing. Correct: once the response has begun, run the
// remaining requests detached (context.WithoutCancel(r.Context())), like the
// turn itself. Fix in Handler.serveUI.
func TestReviewUIEveryDecisionRunsAfterTheClientLeaves(t *testing.T) {
	open := make(chan struct{})
	model := fake.New(fake.Turn{fake.CallTool("call-1", "add_item", `{}`), fake.CallTool("call-2", "add_item", `{}`)},
		fake.Turn{fake.Text("First one done "), gate(open), fake.Text("now.")})
	model.SetDefault(fake.Turn{fake.Text("ok")})
	h := newHarness(t, model)
	cs := readUI(t, h.do("POST", "/api/chat/ui", "alice", uiBody(t, "c", "submit-message", "", userMsg("u1", "add two"))))
	msgID := cs[0].str("messageId")
	reqs := ofType(cs, "tool-approval-request")
	if len(reqs) != 2 {
		t.Fatalf("want two cards: %v", cs)
	}
	leave := h.startUI("alice", uiBody(t, "c", "submit-message", msgID, userMsg("u1", "add two"), assistantMsg(msgID, stepStart,
		approvalPart(reqs[0].str("toolCallId"), reqs[0].str("approvalId"), true),
		approvalPart(reqs[1].str("toolCallId"), reqs[1].str("approvalId"), true))))
	leave()
	time.Sleep(50 * time.Millisecond)
	close(open)
	decided := func() bool {
		th := h.getThread("alice", "c")
		for _, p := range th.Proposals {
			if p.Status == "pending" {
				return false
			}
		}
		return len(th.Proposals) == 2
	}
	if !eventually(decided) {
		t.Errorf("the second approval was never carried out after the client left: %+v", h.getThread("alice", "c").Proposals)
	}
}

// Regression (review of the useChat route): an edit from useChat is
// sendMessage({text, messageId}) with the id of the user message as the
// client knows it, which the client made itself (generateId); the server
// never tells it the stored id (only in metadata, which the client does not
// apply to its user message). uiPlan passes that id as Request.Replaces, so
// every edit in a live session is 404 "That message does not exist."
// (TestUIRegenerateAndEdit only passes because it sends the stored id.)
// Correct: resolve a messageId the thread does not know by position: the
// edited message is the last of `messages`, and its index among the body's
// user messages picks the current stored user message (count user messages
// in decodeMessages). Fix in Handler.uiPlan.
func TestReviewUIEditWithTheClientsOwnMessageID(t *testing.T) {
	model := fake.New()
	model.SetDefault(fake.Turn{fake.Func(func(_ context.Context, req *providers.Request) fake.Turn {
		return fake.Turn{fake.Text("re: " + req.Messages[len(req.Messages)-1].Content)}
	})})
	h := newHarness(t, model)
	readUI(t, h.do("POST", "/api/chat/ui", "alice", uiBody(t, "c", "submit-message", "", userMsg("client-u1", "one"))))
	resp := h.do("POST", "/api/chat/ui", "alice", uiBody(t, "c", "submit-message", "client-u1", userMsg("client-u1", "ONE")))
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("useChat's edit of its own message: %d %q", resp.StatusCode, body)
	}
	if got := uiText(readUI(t, resp)); got != "re: ONE" {
		t.Errorf("edited answer %q", got)
	}
}

// Regression (review of the useChat route): regenerate({messageId}) of an
// answer that is not the last one sends the messages before it and trigger
// regenerate-message with that answer's id (the server's own stored id: it
// came in start.messageId). uiPlan ignores messageId and regenerates the
// thread's last user message, so the client shows, under its first question,
// the answer to a later one, and the stored thread no longer matches what
// the user sees. Correct: when messageId names a stored assistant message,
// replace the user message before it (Request.Replaces with its stored
// text); refuse an id it does not know rather than regenerate something
// else. Fix in Handler.uiPlan.
func TestReviewUIRegenerateOfAnEarlierAnswer(t *testing.T) {
	model := fake.New()
	model.SetDefault(fake.Turn{fake.Func(func(_ context.Context, req *providers.Request) fake.Turn {
		return fake.Turn{fake.Text("re: " + req.Messages[len(req.Messages)-1].Content)}
	})})
	h := newHarness(t, model)
	cs := readUI(t, h.do("POST", "/api/chat/ui", "alice", uiBody(t, "c", "submit-message", "", userMsg("u1", "one"))))
	a1 := cs[0].str("messageId")
	readUI(t, h.do("POST", "/api/chat/ui", "alice", uiBody(t, "c", "submit-message", "",
		userMsg("u1", "one"), assistantMsg(a1, map[string]any{"type": "text", "text": "re: one", "state": "done"}), userMsg("u2", "two"))))
	// What useChat sends for regenerate({messageId: a1}).
	cs = readUI(t, h.do("POST", "/api/chat/ui", "alice", uiBody(t, "c", "regenerate-message", a1, userMsg("u1", "one"))))
	if got := uiText(cs); got != "re: one" {
		t.Errorf("regenerating the first answer produced %q", got)
	}
}

// Regression (review of the useChat route): the README says a refusal before
// the stream, "a conversation that does not exist" named among them, is a
// status with the message as text (useChat shows the body as its error). A
// continuation on a chat id the user cannot see is refused in Handler.uiPlan
// through h.fail, which answers JSON, so useChat shows
// `{"error":{"code":"not_found",...}}`; the same refusal from the Engine (a
// staff user, or an edit) is text. Correct: write uiPlan's refusal like
// serveUI's (text/plain, the safe message).
func TestReviewUIContinuationRefusalIsText(t *testing.T) {
	h := newHarness(t, fake.New())
	resp := h.do("POST", "/api/chat/ui", "alice", uiBody(t, "no-such-chat", "submit-message", "m1", userMsg("u1", "add"),
		assistantMsg("m1", stepStart, approvalPart("call-1", "tok", true))))
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") || strings.Contains(string(body), "{") {
		t.Errorf("%d %q %q, want 404 with the message as text", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
}

// Regression (review of the useChat route): a body over the route's limit
// (16 x MaxBodyBytes) is refused with Handler.tooLarge, whose message names
// MaxBodyBytes: "larger than 524288 bytes" for a limit of 8388608, while
// bodies of 8 MB are accepted. A developer told 512 KiB cuts the history
// needlessly. Correct: name the limit that applied (pass it to tooLarge).
func TestReviewUITooLargeNamesTheLimitThatApplies(t *testing.T) {
	h := newHarness(t, fake.New())
	msg := wantUIRefusal(t, h.do("POST", "/api/chat/ui", "alice", uiBody(t, "c", "submit-message", "", userMsg("u1", strings.Repeat("x", 9<<20)))),
		http.StatusRequestEntityTooLarge, "bytes")
	if want := "8388608"; !strings.Contains(msg, want) {
		t.Errorf("413 message %q does not name the limit, %s bytes", msg, want)
	}
}

// Regression (review of the useChat route): uiPlan reads the thread and its
// proposals with Engine.Thread and Engine.Proposals before the Engine
// refuses the write, and both audit a staff user's read of another user's
// thread. A staff user's continuation on Alice's chat is refused (404,
// nothing shown), yet the audit log records two thread.read_by_other events,
// for the transcript and for its cards: an audit that says staff read a
// conversation they never saw. Correct: a refused continuation leaves no
// read in the audit; check ownership first (e.g. only plan continuations on
// threads u owns, as the write will require) or read without the audited
// accessors.
func TestReviewUIRefusedStaffContinuationIsNotAuditedAsARead(t *testing.T) {
	model := fake.New(fake.Turn{fake.CallTool("call-1", "add_item", `{}`)})
	h := newHarness(t, model)
	msgID, token := approvalTurn(t, h, "alice", "c")
	resp := h.do("POST", "/api/chat/ui", "sam", uiBody(t, "c", "submit-message", msgID, userMsg("u1", "add an item"),
		assistantMsg(msgID, stepStart, approvalPart("call-1", token, true))))
	if code := discard(resp); code != http.StatusNotFound {
		t.Fatalf("staff continuation on alice's chat: %d", code)
	}
	evs, err := h.store.ListAudit(context.Background(), store.AuditFilter{Kind: assistant.AuditThreadRead})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 0 {
		t.Errorf("a refused continuation was audited as %d reads of alice's thread by staff", len(evs))
	}
	if th := h.getThread("alice", "c"); th.Proposals[0].Status != "pending" {
		t.Errorf("alice's card is %s after staff's refused approval", th.Proposals[0].Status)
	}
}

// BUG (needs MaxTurnOutputBytes raised past the default): a resume reader
// attached before the stream passes maxReplayBytes (4 MiB; 1 MiB in these tests) is cut off when
// it does: uiLiveStream.append drops the copy and uiResume returns without a
// finish, an error chunk or [DONE]. useChat takes the half answer as
// complete (status ready, no error). Correct: keep feeding readers already
// attached (drop only the copy for new ones), or end their stream with an
// error chunk.
func TestReviewUIResumeReaderIsNotCutSilentlyAtTheReplayLimit(t *testing.T) {
	open := make(chan struct{})
	var chunks []string
	for range httpapi.ReplayLimit()/(100<<10) + 3 {
		chunks = append(chunks, strings.Repeat("y", 100<<10))
	}
	model := fake.New(fake.Turn{fake.Text("First. "), gate(open), fake.Text(chunks...)})
	h := newHarness(t, model, withEngine(func(c *assistant.Config) {
		c.MaxTurnOutputBytes, c.MaxTurnOutputTokens = 64<<20, 1<<30
	}))
	leave := h.startUI("alice", uiBody(t, "big", "submit-message", "", userMsg("u1", "hi")))
	leave()
	resp := h.do("GET", "/api/chat/ui/big/stream", "alice", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("resume: %d", discard(resp))
	}
	close(open)
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if s := string(raw); !strings.Contains(s, `"type":"finish"`) && !strings.Contains(s, `"type":"error"`) {
		t.Errorf("the resumed stream stopped after %d bytes with neither finish nor error: the client takes a cut answer as whole", len(raw))
	}
}

// Regression (review of the useChat route, minor): decodeUIBody and
// decodeMessages return the decoder's raw errors at the end of the body, so
// a truncated body is "The request is not valid: EOF." or "the body is
// empty" (it was not), and "id": 5 is "the body must be a JSON string"
// instead of naming id, unlike the JSON routes. Correct: io.EOF inside the
// object is "the JSON body ends early"; a type error names its key.
func TestReviewUIBodyErrorsNameTheFault(t *testing.T) {
	h := newHarness(t, fake.New())
	msg := `{"id":"m","role":"user","parts":[{"type":"text","text":"a"}]}`
	for body, want := range map[string]string{
		`{"id":"c","trigger":"submit-message","messages":[` + msg:       "ends early",
		`{"id":"c","trigger":"submit-message","messages":[` + msg + `]`: "ends early",
		`{"id":5,"trigger":"submit-message","messages":[` + msg + `]}`:  "id must be a string",
	} {
		wantUIRefusal(t, h.do("POST", "/api/chat/ui", "alice", body), http.StatusBadRequest, want)
	}
}

// ---------------------------------------------------------------------------
// What held (kept: each pins a property worth keeping)

// Another user's ids get them nothing: bob (no read right) and sam (staff)
// continuing alice's chat with her card's token neither decide it nor see
// anything; neither can resume her running stream, which resumes for its
// owner. (A chat id with a slash or URL metacharacters is refused: see
// TestUIChatIDsAreScopedPerUser.)
func TestReviewUIOtherUsersCannotDecideOrResume(t *testing.T) {
	open := make(chan struct{})
	model := fake.New(fake.Turn{fake.CallTool("call-1", "add_item", `{}`)}, fake.Turn{fake.Text("First. "), gate(open), fake.Text("second")})
	h := newHarness(t, model)
	msgID, token := approvalTurn(t, h, "alice", "c")
	for _, u := range []string{"bob", "sam"} {
		resp := h.do("POST", "/api/chat/ui", u, uiBody(t, "c", "submit-message", msgID, userMsg("u1", "add an item"),
			assistantMsg(msgID, stepStart, approvalPart("call-1", token, true))))
		if code := discard(resp); code != http.StatusNotFound {
			t.Errorf("%s continuing alice's chat: %d, want 404", u, code)
		}
	}
	if th := h.getThread("alice", "c"); th.Proposals[0].Status != "pending" {
		t.Errorf("alice's card is %s after other users' approvals", th.Proposals[0].Status)
	}
	id := "Chat_2-b"
	h.startUI("alice", uiBody(t, id, "submit-message", "", userMsg("u1", "hi")))
	path := "/api/chat/ui/" + id + "/stream"
	for _, u := range []string{"bob", "sam"} {
		if code := discard(h.do("GET", path, u, "")); code != http.StatusNoContent {
			t.Errorf("%s resuming alice's stream: %d, want 204", u, code)
		}
	}
	resumed := h.do("GET", path, "alice", "") // headers come while the turn waits
	close(open)
	if cs := readUI(t, resumed); uiText(cs) != "First. second" {
		t.Errorf("alice's resume of %q: %v", id, cs)
	}
}

// The body decoder: messages given twice (the later list wins), null and
// numbers, nesting past the decoder's limit, trailing data, "approved" as
// a string, NUL in text,
// and a near-limit body of small messages read quickly.
func TestReviewUIBodyDecoderEdgeCases(t *testing.T) {
	model := fake.New()
	model.SetDefault(fake.Turn{fake.Func(func(_ context.Context, req *providers.Request) fake.Turn {
		return fake.Turn{fake.Text("re: " + req.Messages[len(req.Messages)-1].Content)}
	})})
	h := newHarness(t, model)
	msg := func(text string) string {
		return `{"id":"m","role":"user","parts":[{"type":"text","text":"` + text + `"}]}`
	}
	cs := readUI(t, h.do("POST", "/api/chat/ui", "alice", `{"id":"c1","messages":[`+msg("first")+`],"messages":[`+msg("second")+`],"trigger":"submit-message"}`))
	if uiText(cs) != "re: second" {
		t.Errorf("messages twice: %q", uiText(cs))
	}
	deep := strings.Repeat(`[`, 20000) + strings.Repeat(`]`, 20000)
	for body, want := range map[string]string{
		`{"id":"c2","messages":[1],"trigger":"submit-message"}`:                              "messages",
		`{"id":"c3","messages":null,"trigger":"submit-message"}`:                             "messages must be an array",
		`{"id":"c4","messages":[` + msg("a") + `,null],"trigger":"submit-message"}`:          "the last message must be",
		`{"id":"c5","messages":[{"parts":[{"x":` + deep + `}]}],"trigger":"submit-message"}`: "messages",
		`{"id":"c6","messages":[` + msg("a") + `],"trigger":"submit-message"}}`:              "trailing data",
		`{"id":"c7","messages":[{"id":"a","role":"assistant","parts":[{"type":"tool-add_item","toolCallId":"x","state":"approval-responded","approval":{"id":"t","approved":"true"}}]}],"trigger":"submit-message"}`: "messages",
	} {
		wantUIRefusal(t, h.do("POST", "/api/chat/ui", "alice", body), http.StatusBadRequest, want)
	}
	resp := h.do("POST", "/api/chat/ui", "alice", `{"id":"c8","messages":[`+msg(`a\u0000b`)+`],"trigger":"submit-message"}`)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "NUL") {
		t.Errorf("NUL in text: %d %q", resp.StatusCode, body)
	}
	var sb strings.Builder
	sb.WriteString(`{"id":"c9","trigger":"submit-message","messages":[`)
	for sb.Len() < 8<<20-200 {
		sb.WriteString(`{"parts":[{"type":"text","text":"x"}]},`)
	}
	sb.WriteString(msg("last") + `]}`)
	// No wall-clock limit here (a loaded machine under -race is slow): a
	// decoder quadratic in the number of messages would not finish.
	if cs := readUI(t, h.do("POST", "/api/chat/ui", "alice", sb.String())); uiText(cs) != "re: last" {
		t.Errorf("8 MB of small messages: %q", uiText(cs))
	}
}
