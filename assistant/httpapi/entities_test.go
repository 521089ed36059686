package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/assistant/httpapi"
	"github.com/parleyhq/parley/providers/fake"
)

// Entities on the stream body reach the Engine: an allowed one is in the
// model's system prompt, another user's is not; a bad list is a 400.
func TestStreamEntitiesReachOnlyWhatTheAuthorizerAllows(t *testing.T) {
	model := fake.New(fake.Turn{fake.Text("ok")})
	h := newHarness(t, model, withEngine(func(c *assistant.Config) {
		c.Authorizer = assistant.RoleAuthorizer{
			Tools: map[string][]string{"user": {"category:general"}},
			Entities: func(_ context.Context, u parley.User, ref assistant.EntityRef) bool {
				return ref.Type == "order" && strings.HasPrefix(ref.ID, u.ID+"-")
			},
		}
		c.ResolveEntity = func(_ context.Context, _ parley.User, ref assistant.EntityRef) (assistant.Entity, error) {
			return assistant.Entity{Title: "Order " + ref.ID, Text: "Total 42 EUR."}, nil
		}
	}))
	bs, _ := h.stream("alice", httpapi.StreamRequest{Message: "where is it?",
		Entities: []assistant.EntityRef{{Type: "order", ID: "alice-7"}, {Type: "order", ID: "bob-9"}}})
	if markdownOf(bs) != "ok" {
		t.Fatalf("streamed %+v", bs)
	}
	sys := model.Requests()[0].System
	if !strings.Contains(sys, "Order alice-7") || strings.Contains(sys, "Order bob-9") {
		t.Errorf("system prompt:\n%s", sys)
	}
	wantError(t, h.do("POST", "/api/chat/stream", "alice", `{"message":"hi","entities":[{"type":"order"}]}`),
		http.StatusBadRequest, assistant.CodeInvalidRequest)
	wantError(t, h.do("POST", "/api/chat/stream", "alice", `{"message":"hi","entities":[{"type":"order","id":"x","extra":1}]}`),
		http.StatusBadRequest, assistant.CodeInvalidRequest)
}
