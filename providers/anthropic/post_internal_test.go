package anthropic

import (
	"context"
	"reflect"
	"testing"

	ant "github.com/anthropics/anthropic-sdk-go"

	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/providertest"
)

// The Provider sends, through Client.Post, the request
// MessageService.NewStreaming sent for the same parameters: method, path,
// headers and body.
func TestTheRequestIsNewStreamingsRequest(t *testing.T) {
	ts := providertest.NewRecorder(t, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\"}}\n\n"+
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\n")
	p := New(Config{
		BaseURL: ts.URL, APIKey: "sk-ant-test", Model: "claude-sonnet-4-5", HTTPClient: ts.Client(),
		MaxRetries: 2, Headers: map[string]string{"anthropic-beta": "a-flag", "X-Route": "r"}, ThinkingBudget: 2048,
	})
	req := &providers.Request{Messages: []providers.Message{{Role: providers.User, Content: "hi"}}}
	params, err := p.params(req)
	if err != nil {
		t.Fatal(err)
	}
	ts.SameRequest(t, func() error {
		svc := ant.NewMessageService(p.opts...)
		sdk := svc.NewStreaming(context.Background(), params)
		defer sdk.Close()
		for sdk.Next() {
		}
		return sdk.Err()
	}, p, req)
}

// A Provider holds the client's options, not an anthropic-sdk-go Client:
// see providertest.HoldsNoSDKStruct.
func TestProviderHoldsNoSDKStruct(t *testing.T) {
	providertest.HoldsNoSDKStruct(t, reflect.TypeFor[Provider](), "github.com/anthropics/anthropic-sdk-go")
}
