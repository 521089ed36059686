package httpapi_test

import (
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
