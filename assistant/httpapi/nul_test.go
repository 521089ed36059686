package httpapi_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/parleyhq/parley/assistant/httpapi"
	"github.com/parleyhq/parley/providers/fake"
)

// A U+0000 in any request field is a 400 naming the field, before the
// Engine or a store sees it.
func TestNULInRequestFieldsIsRefusedByName(t *testing.T) {
	const nul = `a\u0000b`
	cases := []struct {
		method, path, body string
		field              string
	}{
		{"POST", "/api/chat/stream", `{"thread_id":"` + nul + `","message":"hi"}`, "thread_id"},
		{"POST", "/api/chat/stream", `{"message":"` + nul + `"}`, "message"},
		{"POST", "/api/chat/stream", `{"message":"hi","page":"` + nul + `"}`, "page"},
		{"POST", "/api/chat/stream", `{"message":"hi","page_context":"` + nul + `"}`, "page_context"},
		{"POST", "/api/chat/stream", `{"thread_id":"t","decision":{"token":"` + nul + `","apply":true}}`, "decision.token"},
		{"POST", "/api/chat/stream", `{"thread_id":"t","tool_results":[{"id":"ok","output":1},{"id":"` + nul + `","output":1}]}`, "tool_results[1].id"},
		{"POST", "/api/chat/stream", `{"thread_id":"t","tool_results":[{"id":"c1","output":{"list":["x","` + nul + `"]}}]}`, "tool_results[0].output"},
		{"POST", "/api/chat/stream", `{"thread_id":"t","tool_results":[{"id":"c1","output":{"` + nul + `":1}}]}`, "tool_results[0].output"},
		{"POST", "/api/chat/stream", `{"thread_id":"t","form":{"id":"` + nul + `","values":{}}}`, "form.id"},
		{"POST", "/api/chat/stream", `{"thread_id":"t","form":{"id":"f1","values":{"city":"` + nul + `"}}}`, "form.values.city"},
		{"POST", "/api/chat/stream", `{"thread_id":"t","form":{"id":"f1","values":{"` + nul + `":"Oslo"}}}`, "a key of form.values"},
		{"POST", "/api/chat/tools/add_item/execute", `{"args":{"name":"` + nul + `"}}`, "args"},
		{"POST", "/api/chat/tools/add_item/execute", `{"thread_id":"` + nul + `"}`, "thread_id"},
		{"POST", "/api/chat/tools/add_item/execute", `{"page":"` + nul + `"}`, "page"},
		{"POST", "/api/chat/tools/add%00item/execute", `{}`, "the tool name in the path"},
		{"GET", "/api/chat/threads/a%00b", "", "the thread id in the path"},
		{"DELETE", "/api/chat/threads/a%00b", "", "the thread id in the path"},
		{"POST", "/api/chat/threads/a%00b/cancel", "", "the thread id in the path"},
		{"GET", "/api/chat/quota/a%00b", "", "the user id in the path"},
		{"PUT", "/api/chat/quota/a%00b", `{"daily":1}`, "the user id in the path"},
		{"GET", "/api/chat/tools?page=a%00b", "", "page"},
		{"POST", "/api/chat/stream", `{"thread_id":"t","replaces":"` + nul + `","message":"hi"}`, "replaces"},
		{"POST", "/api/chat/prompts", `{"name":"` + nul + `","text":"t"}`, "name"},
		{"POST", "/api/chat/prompts", `{"name":"n","text":"` + nul + `"}`, "text"},
		{"POST", "/api/chat/prompts/a%00b/activate", "", "the prompt id in the path"},
		{"DELETE", "/api/chat/prompts/a%00b", "", "the prompt id in the path"},
	}
	var runs atomic.Int64
	h := newHarness(t, fake.New(fake.Turn{fake.Text("never")}), counted(&runs))
	for _, c := range cases {
		t.Run(c.method+" "+c.path+" "+c.field, func(t *testing.T) {
			wantInvalid(t, h.do(c.method, c.path, "sam", c.body), c.field+" contains a NUL character")
		})
	}
	if runs.Load() != 0 {
		t.Errorf("the tool ran %d times", runs.Load())
	}
	h.assertNothingPersisted()
}

// An escaped backslash before "u0000" is text, not a NUL.
func TestEscapedBackslashIsNotANUL(t *testing.T) {
	h := newHarness(t, fake.New(fake.Turn{fake.Text("ok")}))
	h.stream("alice", httpapi.StreamRequest{Message: `a\u0000b`})
	if resp := h.do("POST", "/api/chat/tools/weather/execute", "alice", `{"args":{"city":"a\\u0000b"}}`); discard(resp) != http.StatusOK {
		t.Errorf("execute with an escaped backslash: %d, want 200", resp.StatusCode)
	}
}
