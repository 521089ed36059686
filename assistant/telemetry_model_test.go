package assistant_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/internal/openaimock"
	"github.com/parleyhq/parley/providers/openai"
	"github.com/parleyhq/parley/store/memstore"
	"github.com/parleyhq/parley/tools"
)

// The chat span names the model the server says answered
// (gen_ai.response.model) beside the one asked for, through the real
// openai-go client.
func TestChatSpanNamesTheModelThatAnswered(t *testing.T) {
	llm := httptest.NewServer(openaimock.New(openaimock.Response{Model: "gpt-4o-mini-2024-07-18", Text: []string{"Hello."}}))
	defer llm.Close()
	reg, err := tools.NewSet()
	if err != nil {
		t.Fatal(err)
	}
	cfg := assistant.Config{
		Provider:   openai.New(openai.Config{BaseURL: llm.URL + "/v1", APIKey: "sk-test", Model: "gpt-4o-mini"}),
		Authorizer: assistant.RoleAuthorizer{},
		Store:      memstore.New(),
		Tools:      reg,
	}
	o := observe(&cfg)
	eng, err := assistant.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := assistant.Collect(eng.Stream(context.Background(), alice, assistant.Request{Message: "hi"})); err != nil {
		t.Fatal(err)
	}
	var chats int
	for _, s := range o.spans.Ended() {
		if s.Name() != "chat" && s.Name() != "chat gpt-4o-mini" {
			continue
		}
		chats++
		wantAttr(t, s, "gen_ai.response.model", "gpt-4o-mini-2024-07-18")
	}
	if chats == 0 {
		t.Fatalf("no chat span; spans: %v", o.names())
	}
}
