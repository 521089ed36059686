package openai

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	oai "github.com/openai/openai-go/v3"

	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/providertest"
)

// The Provider sends, through Client.Post, the request
// ChatCompletionService.NewStreaming sent for the same parameters: method,
// path, query, headers and body.
func TestTheRequestIsNewStreamingsRequest(t *testing.T) {
	ts := providertest.NewRecorder(t, `data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	p := New(Config{
		BaseURL: ts.URL + "/v1", APIKey: "sk-test", Model: "gpt-test", HTTPClient: ts.Client(), MaxRetries: 2,
		Headers:   map[string]string{"HTTP-Referer": "https://example.com", "X-Route": "r"},
		Query:     map[string]string{"api-version": "2025-01-01"},
		ExtraBody: map[string]any{"chat_template_kwargs": map[string]any{"enable_thinking": false}},
	})
	temp := 0.2
	req := &providers.Request{
		System:      "Be brief.",
		Messages:    []providers.Message{{Role: providers.User, Content: "hi"}},
		Tools:       []providers.ToolDef{{Name: "read", Description: "Reads.", Parameters: json.RawMessage(`{"type":"object"}`)}},
		MaxTokens:   100,
		Temperature: &temp,
	}
	params, err := p.params(req)
	if err != nil {
		t.Fatal(err)
	}
	svc := oai.NewChatCompletionService(p.client.Options...)
	sdk := svc.NewStreaming(context.Background(), params)
	for sdk.Next() {
	}
	if err := sdk.Err(); err != nil {
		t.Fatal(err)
	}
	_ = sdk.Close()
	for _, err := range p.Stream(context.Background(), req) {
		if err != nil {
			t.Fatal(err)
		}
	}
	got := ts.Requests()
	if len(got) != 2 {
		t.Fatalf("got %d requests", len(got))
	}
	if !reflect.DeepEqual(got[0], got[1]) {
		t.Errorf("NewStreaming sent\n%+v\nthe Provider sent\n%+v", got[0], got[1])
	}
	if got[1].Header.Get("Authorization") != "Bearer sk-test" || got[1].Query != "api-version=2025-01-01" {
		t.Errorf("the Provider sent %+v", got[1])
	}
}
