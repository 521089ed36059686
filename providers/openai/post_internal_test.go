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
	sent := ts.SameRequest(t, func() error {
		svc := oai.NewChatCompletionService(p.opts...)
		sdk := svc.NewStreaming(context.Background(), params)
		defer sdk.Close()
		for sdk.Next() {
		}
		return sdk.Err()
	}, p, req)
	if sent.Header.Get("Authorization") != "Bearer sk-test" || sent.Query != "api-version=2025-01-01" {
		t.Errorf("the Provider sent %+v", sent)
	}
}

// A Provider holds the client's options, not an openai-go Client: see
// providertest.HoldsNoSDKStruct.
func TestProviderHoldsNoSDKStruct(t *testing.T) {
	providertest.HoldsNoSDKStruct(t, reflect.TypeFor[Provider](), "github.com/openai/openai-go/v3")
}
