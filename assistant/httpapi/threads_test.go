package httpapi_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/assistant/httpapi"
	"github.com/parleyhq/parley/providers/fake"
)

// PATCH renames a thread and answers with it; DELETE archives it, and with
// ?hard=true deletes it for good. Another user gets 404 for both.
func TestRenameAndDeleteThreadOverHTTP(t *testing.T) {
	model := fake.New()
	model.SetDefault(fake.Turn{fake.Text("ok")})
	h := newHarness(t, model)
	bs, _ := h.stream("alice", httpapi.StreamRequest{Message: "plan my trip"})
	id := threadIDOf(t, bs)

	wantError(t, h.do("PATCH", "/api/chat/threads/"+id, "bob", `{"title":"mine"}`), http.StatusNotFound, assistant.CodeNotFound)
	wantError(t, h.do("PATCH", "/api/chat/threads/"+id, "alice", `{}`), http.StatusBadRequest, assistant.CodeInvalidRequest)
	wantError(t, h.do("PATCH", "/api/chat/threads/"+id, "alice", `{"title":"  "}`), http.StatusBadRequest, assistant.CodeInvalidRequest)
	var out struct {
		Thread struct {
			ID    string `json:"id"`
			Title string `json:"title"`
		} `json:"thread"`
	}
	decodeJSON(t, h.do("PATCH", "/api/chat/threads/"+id, "alice", `{"title":"Lisbon\nin May"}`), &out)
	if out.Thread.ID != id || out.Thread.Title != "Lisbon in May" {
		t.Errorf("PATCH answered %+v", out.Thread)
	}
	if got := h.getThread("alice", id); got.Thread.Title != "Lisbon in May" {
		t.Errorf("title after rename %q", got.Thread.Title)
	}

	wantError(t, h.do("DELETE", "/api/chat/threads/"+id+"?hard=maybe", "alice", ""), http.StatusBadRequest, assistant.CodeInvalidRequest)
	wantError(t, h.do("DELETE", "/api/chat/threads/"+id+"?hard=true", "bob", ""), http.StatusNotFound, assistant.CodeNotFound)
	if got := discard(h.do("DELETE", "/api/chat/threads/"+id, "alice", "")); got != http.StatusNoContent {
		t.Fatalf("archive: %d", got)
	}
	if ts := h.listThreads("alice", ""); len(ts) != 0 {
		t.Errorf("an archived thread is listed: %+v", ts)
	}
	if got := discard(h.do("DELETE", "/api/chat/threads/"+id+"?hard=true", "alice", "")); got != http.StatusNoContent {
		t.Fatalf("hard delete: %d", got)
	}
	wantError(t, h.do("GET", "/api/chat/threads/"+id, "alice", ""), http.StatusNotFound, assistant.CodeNotFound)
}

// newThread posts to /api/chat/threads with body (none if "") and returns
// the thread it answers with.
func (h *harness) newThread(user, body string) threadOut {
	h.t.Helper()
	var out struct {
		Thread threadOut `json:"thread"`
	}
	decodeJSON(h.t, h.do("POST", "/api/chat/threads", user, body), &out)
	if out.Thread.ID == "" {
		h.t.Fatal("POST /api/chat/threads answered a thread without an id")
	}
	return out.Thread
}

// POST /api/chat/threads hands back the user's empty untitled draft while
// there is one, a new thread once the draft has a message, and never
// another user's draft.
func TestNewThreadReusesTheEmptyDraft(t *testing.T) {
	model := fake.New()
	model.SetDefault(fake.Turn{fake.Text("ok")})
	h := newHarness(t, model)
	draft := h.newThread("alice", "")
	if draft.Title != "" || draft.ArchivedAt != nil || draft.CreatedAt.IsZero() {
		t.Errorf("new thread %+v, want an untitled, active one", draft)
	}
	if again := h.newThread("alice", `{}`); again.ID != draft.ID {
		t.Errorf("a second new chat made thread %q, want the empty draft %q back", again.ID, draft.ID)
	}
	if bobs := h.newThread("bob", ""); bobs.ID == draft.ID {
		t.Error("bob was handed alice's draft")
	}
	if got := h.getThread("alice", draft.ID); len(got.Messages) != 0 {
		t.Errorf("the draft has %d messages, want none", len(got.Messages))
	}
	if ts := h.listThreads("alice", ""); len(ts) != 1 || ts[0].ID != draft.ID {
		t.Errorf("alice's threads %+v, want the one draft", ts)
	}

	bs, _ := h.stream("alice", httpapi.StreamRequest{ThreadID: draft.ID, Message: "plan my trip"})
	if threadIDOf(t, bs) != draft.ID {
		t.Fatalf("the first message went to thread %q, want the draft %q", threadIDOf(t, bs), draft.ID)
	}
	if got := h.getThread("alice", draft.ID).Thread.Title; got == "" {
		t.Error("the draft is still untitled after its first message")
	}
	next := h.newThread("alice", "")
	if next.ID == draft.ID {
		t.Error("a thread with a message was handed back as a draft")
	}
	if ts := h.listThreads("alice", ""); len(ts) != 2 {
		t.Errorf("alice has %d threads, want 2", len(ts))
	}
}

// POST /api/chat/threads takes no body or an empty object; anything else
// is refused, and a user who may not use the assistant gets 403, with no
// thread made.
func TestNewThreadRefusals(t *testing.T) {
	h := newHarness(t, fake.New(), withEngine(func(cfg *assistant.Config) {
		cfg.Authorizer = assistant.RoleAuthorizer{Enabled: []string{"user"}}
	}))
	wantInvalid(t, h.do("POST", "/api/chat/threads", "alice", `{"title":"x"}`), `unknown field "title"`)
	wantInvalid(t, h.do("POST", "/api/chat/threads", "alice", `[]`), "the body must be a JSON object, not an array")
	wantInvalid(t, h.do("POST", "/api/chat/threads", "alice", `{} {}`), "trailing data after the JSON body")
	wantError(t, h.send("POST", "/api/chat/threads", `{}`, map[string]string{"X-User": "alice", "Content-Type": "text/plain"}),
		http.StatusUnsupportedMediaType, "unsupported_media_type")
	wantError(t, h.do("POST", "/api/chat/threads", "eve", ""), http.StatusForbidden, assistant.CodeForbidden)
	h.assertNothingPersisted()
	// White space is no body, however it is sent.
	if got := discard(h.send("POST", "/api/chat/threads", " \n", map[string]string{"X-User": "alice", "Content-Type": "application/json"})); got != http.StatusOK {
		t.Errorf("a body of white space: %d, want 200", got)
	}
}

// The thread JSON says how far a summary reaches, so a client can mark the
// summarized messages, but never carries the summary itself.
func TestThreadShowsHowFarItIsSummarizedButNotTheSummary(t *testing.T) {
	model := fake.New()
	model.SetDefault(fake.Turn{fake.Text("ok")})
	h := newHarness(t, model)
	bs, _ := h.stream("alice", httpapi.StreamRequest{Message: "first question"})
	id := threadIDOf(t, bs)
	h.stream("alice", httpapi.StreamRequest{ThreadID: id, Message: "second question"})
	type summarized struct {
		Thread map[string]any `json:"thread"`
	}
	var before summarized
	decodeJSON(t, h.do("GET", "/api/chat/threads/"+id, "alice", ""), &before)
	if _, ok := before.Thread["summarized_through"]; ok {
		t.Errorf("an unsummarized thread shows summarized_through: %v", before.Thread)
	}
	const secret = "SUMMARY-TEXT-NOT-FOR-THE-WIRE"
	if err := h.store.SetSummary(context.Background(), id, secret, 2, 0); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/api/chat/threads/" + id, "/api/chat/threads"} {
		resp := h.do("GET", path, "alice", "")
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || bytes.Contains(raw, []byte(secret)) || bytes.Contains(raw, []byte(`"summary"`)) {
			t.Errorf("GET %s: %d %s, want 200 without the summary", path, resp.StatusCode, raw)
		}
	}
	var after summarized
	decodeJSON(t, h.do("GET", "/api/chat/threads/"+id, "alice", ""), &after)
	if got := after.Thread["summarized_through"]; got != float64(2) {
		t.Errorf("summarized_through %v, want 2", got)
	}
}
