package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/assistant/httpapi"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/tools"
)

// counted replaces add_item with a Mutate tool that counts its runs.
func counted(runs *atomic.Int64) option {
	return withEngine(func(c *assistant.Config) {
		add := tools.Must(tools.New(tools.Spec{Name: "add_item", Category: "general", Effect: tools.Mutate, Description: "Add an item."},
			func(_ context.Context, _ tools.Call, in struct {
				Name string `json:"name"`
			}) (tools.Result, error) {
				runs.Add(1)
				return tools.OK("added "+in.Name, nil), nil
			}))
		weather, _ := c.Tools.Lookup("weather")
		set, err := tools.NewSet(add, weather)
		if err != nil {
			panic(err)
		}
		c.Tools = set
	})
}

// post sends a raw stream request and returns the status and body.
func (h *harness) post(user, body string) (int, string) {
	h.t.Helper()
	resp := h.do("POST", "/api/chat/stream", user, body)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

func decisionBody(thread, token string, apply bool) string {
	b, _ := json.Marshal(map[string]any{"thread_id": thread, "decision": map[string]any{"token": token, "apply": apply}})
	return string(b)
}

func TestDecisionOverHTTP(t *testing.T) {
	var runs atomic.Int64
	model := fake.New(fake.Turn{fake.CallTool("c1", "add_item", `{"name":"milk"}`)})
	model.SetDefault(fake.Turn{fake.Text("Added.")})
	h := newHarness(t, model, counted(&runs))
	bs, raw := h.stream("alice", httpapi.StreamRequest{Message: "add milk"})
	thread := threadIDOf(t, bs)
	if !strings.Contains(raw, `"k":"confirm"`) {
		t.Fatalf("no confirm line in %s", raw)
	}
	card := ofKind(bs, blocks.Confirm)[0]
	if got := h.getThread("alice", thread); len(got.Proposals) != 1 || got.Proposals[0].Status != "pending" || got.Proposals[0].Token != card.ID {
		t.Errorf("thread proposals %+v, want the card pending", got.Proposals)
	}

	// A missing "apply" is refused, never read as a decline.
	if code, body := h.post("alice", `{"thread_id":"`+thread+`","decision":{"token":"`+card.ID+`"}}`); code != http.StatusBadRequest {
		t.Errorf("decision without apply: %d %s", code, body)
	}
	// Another user's token is not found; the thread is not even theirs.
	if code, body := h.post("bob", decisionBody(thread, card.ID, true)); code != http.StatusNotFound || !strings.Contains(body, `"not_found"`) {
		t.Errorf("bob's forged decision: %d %s", code, body)
	}
	bs, _ = h.stream("alice", httpapi.StreamRequest{ThreadID: thread, Decision: &httpapi.DecisionBody{Token: card.ID, Apply: ptr(true)}})
	if r := ofKind(bs, blocks.ToolResult); len(r) != 1 || !r[0].OK || r[0].Content != "added milk" || runs.Load() != 1 {
		t.Fatalf("apply: results %+v, runs %d", r, runs.Load())
	}
	code, body := h.post("alice", decisionBody(thread, card.ID, true))
	if code != http.StatusConflict || !strings.Contains(body, `"conflict"`) || !strings.Contains(body, "already applied") {
		t.Errorf("replayed decision: %d %s, want 409 conflict", code, body)
	}
	if runs.Load() != 1 {
		t.Errorf("the tool ran %d times", runs.Load())
	}
	if got := h.getThread("alice", thread); got.Proposals[0].Status != "applied" {
		t.Errorf("status %q after apply", got.Proposals[0].Status)
	}
}

func TestConcurrentDecisionsOverHTTPRunOnce(t *testing.T) {
	var runs atomic.Int64
	model := fake.New(fake.Turn{fake.CallTool("c1", "add_item", `{"name":"milk"}`)})
	model.SetDefault(fake.Turn{fake.Text("Added.")})
	// No per-user cap on turns: all eight decisions must race for the token.
	h := newHarness(t, model, counted(&runs), withEngine(func(c *assistant.Config) { c.MaxTurnsPerUser = -1 }))
	bs, _ := h.stream("alice", httpapi.StreamRequest{Message: "add milk"})
	thread, token := threadIDOf(t, bs), ofKind(bs, blocks.Confirm)[0].ID
	var wg sync.WaitGroup
	codes := make([]int, 8)
	for i := range codes {
		wg.Go(func() { codes[i], _ = h.post("alice", decisionBody(thread, token, true)) })
	}
	wg.Wait()
	ok, conflicts := 0, 0
	for _, c := range codes {
		switch c {
		case http.StatusOK:
			ok++
		case http.StatusConflict:
			conflicts++
		}
	}
	if ok != 1 || conflicts != len(codes)-1 || runs.Load() != 1 {
		t.Errorf("statuses %v, runs %d: want one 200, the rest 409, one run", codes, runs.Load())
	}
}

func TestToolResultsAndFormOverHTTP(t *testing.T) {
	model := fake.New(fake.Turn{fake.CallTool("f1", assistant.AskUserName,
		`{"questions":[{"id":"city","label":"Which city?","type":"text","required":true}]}`)})
	model.SetDefault(fake.Turn{fake.Text("ok")})
	h := newHarness(t, model)
	bs, raw := h.stream("alice", httpapi.StreamRequest{Message: "weather?"})
	thread := threadIDOf(t, bs)
	if !strings.Contains(raw, `"k":"form","id":"f1"`) {
		t.Fatalf("no form line in %s", raw)
	}
	if got := h.getThread("alice", thread); got.Waiting.Form != "f1" || len(got.Waiting.ToolCalls) != 0 {
		t.Errorf("waiting %+v, want the form", got.Waiting)
	}
	if code, body := h.post("alice", `{"thread_id":"`+thread+`","form":{"id":"f1","values":{}}}`); code != http.StatusBadRequest || !strings.Contains(body, "Which city?") {
		t.Errorf("missing answer: %d %s", code, body)
	}
	h.stream("alice", httpapi.StreamRequest{ThreadID: thread, Form: &httpapi.FormAnswerBody{ID: "f1", Values: map[string]json.RawMessage{"city": json.RawMessage(`"Oslo"`)}}})
	reqs := model.Requests()
	msgs := reqs[len(reqs)-1].Messages
	if got := msgs[len(msgs)-1].Content; got != "My answers:\n- Which city?: Oslo" {
		t.Errorf("model got %q", got)
	}
	if got := h.getThread("alice", thread); got.Waiting.Form != "" {
		t.Errorf("waiting %+v after the answers", got.Waiting)
	}
	if code, body := h.post("alice", `{"thread_id":"`+thread+`","tool_results":[{"id":"x","output":1}]}`); code != http.StatusConflict {
		t.Errorf("tool results answering nothing: %d %s", code, body)
	}
	if code, body := h.post("alice", `{"thread_id":"`+thread+`","tool_results":[{"id":"x","output":1}],"form":{"id":"f1"}}`); code != http.StatusBadRequest {
		t.Errorf("two continuations: %d %s", code, body)
	}
}

func ptr[T any](v T) *T { return &v }

func TestToolListMarksClientSideTools(t *testing.T) {
	h := newHarness(t, fake.New(), withEngine(func(c *assistant.Config) {
		loc := tools.Must(tools.NewClient[struct{}](tools.Spec{Name: "browser_time", Category: "general", Description: "The browser's clock."}))
		weather, _ := c.Tools.Lookup("weather")
		set, err := tools.NewSet(loc, weather)
		if err != nil {
			panic(err)
		}
		c.Tools = set
	}))
	got := h.listTools("alice", "")
	if !got["browser_time"].ClientSide || got["weather"].ClientSide {
		t.Errorf("tools %+v: want only browser_time marked client-side", got)
	}
}

// Every error code maps to the status the README documents; a user over
// the per-user cap on turns in flight gets 429, like a quota refusal.
func TestStatusOfEveryCode(t *testing.T) {
	for code, want := range map[assistant.ErrorCode]int{
		assistant.CodeInvalidRequest: 400, assistant.CodeTooLarge: 413, assistant.CodeUnauthenticated: 401,
		assistant.CodeForbidden: 403, assistant.CodeNotFound: 404, assistant.CodeConflict: 409,
		assistant.CodeQuotaExceeded: 429, assistant.CodeSpendCapExceeded: 429, assistant.CodeTooManyTurns: 429,
		assistant.CodeModelBusy: 503, assistant.CodeModelTimeout: 504, assistant.CodeModelUnavailable: 502,
		assistant.CodeCancelled: 409, assistant.CodeUnsupported: 501, assistant.CodeInternal: 500,
	} {
		if got := httpapi.StatusOf(code); got != want {
			t.Errorf("StatusOf(%s) = %d, want %d", code, got, want)
		}
	}
}
