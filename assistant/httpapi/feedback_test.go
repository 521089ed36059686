package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/assistant/httpapi"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers/fake"
)

// PUT rates an answer and the thread view lists the rating; DELETE
// withdraws it; another user's thread is 404.
func TestFeedbackOverHTTP(t *testing.T) {
	model := fake.New()
	model.SetDefault(fake.Turn{fake.Text("ok")})
	h := newHarness(t, model)
	bs, _ := h.stream("alice", httpapi.StreamRequest{Message: "hi"})
	thread := threadIDOf(t, bs)
	var msg string
	for _, b := range bs {
		if b.Kind == blocks.Meta && b.Meta.MessageID != "" {
			msg = b.Meta.MessageID
		}
	}
	path := "/api/chat/threads/" + thread + "/messages/" + msg + "/feedback"
	wantError(t, h.do("PUT", path, "bob", `{"rating":"up"}`), http.StatusNotFound, assistant.CodeNotFound)
	wantError(t, h.do("PUT", path, "alice", `{"rating":"sideways"}`), http.StatusBadRequest, assistant.CodeInvalidRequest)
	wantError(t, h.do("PUT", path, "alice", `{"rating":"up","stars":5}`), http.StatusBadRequest, assistant.CodeInvalidRequest)
	var out struct {
		Feedback struct {
			MessageID string `json:"message_id"`
			Rating    string `json:"rating"`
			Category  string `json:"category"`
		} `json:"feedback"`
	}
	decodeJSON(t, h.do("PUT", path, "alice", `{"rating":"down","category":"unhelpful","comment":"too short"}`), &out)
	if out.Feedback.MessageID != msg || out.Feedback.Rating != "down" || out.Feedback.Category != "unhelpful" {
		t.Errorf("PUT answered %+v", out.Feedback)
	}
	var view struct {
		Feedback []struct {
			MessageID string `json:"message_id"`
			UserID    string `json:"user_id"`
			Rating    string `json:"rating"`
		} `json:"feedback"`
	}
	decodeJSON(t, h.do("GET", "/api/chat/threads/"+thread, "alice", ""), &view)
	if len(view.Feedback) != 1 || view.Feedback[0].MessageID != msg || view.Feedback[0].UserID != "alice" || view.Feedback[0].Rating != "down" {
		t.Errorf("thread view feedback %+v", view.Feedback)
	}
	if got := discard(h.do("DELETE", path, "alice", "")); got != http.StatusNoContent {
		t.Fatalf("DELETE: %d", got)
	}
	wantError(t, h.do("DELETE", path, "alice", ""), http.StatusNotFound, assistant.CodeNotFound)
	nul := wantError(t, h.do("PUT", "/api/chat/threads/"+thread+"/messages/a%00b/feedback", "alice", `{"rating":"up"}`),
		http.StatusBadRequest, assistant.CodeInvalidRequest)
	if !strings.Contains(nul, "the message id in the path contains a NUL character") {
		t.Errorf("a NUL in the message id: %q", nul)
	}
}
