package openai_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/parleyhq/parley/internal/openaimock"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/openai"
	"github.com/parleyhq/parley/providers/providertest"
)

func TestConformance(t *testing.T) {
	providertest.Run(t, providertest.HarnessFunc(func(t *testing.T, s providertest.Scenario) providertest.Model {
		mock := openaimock.New()
		mock.SetFallback(mockResponse(s))
		ts := mock.Start(t)
		p := openai.New(openai.Config{BaseURL: ts.URL + "/v1", APIKey: "sk-test", Model: "default-model", HTTPClient: ts.Client()})
		return providertest.Model{
			Provider: p,
			Received: func() []providers.Request {
				var out []providers.Request
				for _, r := range mock.Requests() {
					out = append(out, neutralRequest(t, r))
				}
				return out
			},
		}
	}))
}

// mockResponse renders a Scenario as the mock server's Response.
func mockResponse(s providertest.Scenario) openaimock.Response {
	r := openaimock.Response{
		Reasoning:    s.Reasoning,
		Text:         s.Text,
		FinishReason: string(s.Finish),
		Usage: openaimock.Usage{
			PromptTokens:     s.Usage.InputTokens,
			CompletionTokens: s.Usage.OutputTokens,
			CachedTokens:     s.Usage.CachedInputTokens,
		},
		FaultAfter: len(s.Reasoning) + s.FaultAfter,
	}
	for _, c := range s.ToolCalls {
		r.ToolCalls = append(r.ToolCalls, openaimock.ToolCall{ID: c.ID, Name: c.Name, Args: c.Args})
	}
	switch s.Fault {
	case providertest.FaultStatus:
		r.Status = s.Status
		if s.RetryAfter > 0 {
			r.Header = http.Header{"Retry-After": {strconv.Itoa(int(s.RetryAfter.Seconds()))}}
		}
	case providertest.FaultDrop:
		r.Fault = openaimock.Drop
	case providertest.FaultMalformed:
		r.Fault = openaimock.Malformed
	case providertest.FaultStall:
		r.Fault = openaimock.Stall
	}
	return r
}

// neutralRequest translates what the mock received back into a
// providers.Request, so the suite can compare it with what was sent.
func neutralRequest(t *testing.T, r openaimock.Request) providers.Request {
	t.Helper()
	if r.DecodeErr != nil {
		t.Fatalf("mock could not decode the request: %v\n%s", r.DecodeErr, r.Raw)
	}
	b := r.Body
	if !b.Stream || b.StreamOptions == nil || !b.StreamOptions.IncludeUsage {
		t.Errorf("request did not ask for a stream with usage: %s", r.Raw)
	}
	out := providers.Request{Model: b.Model, Temperature: b.Temperature}
	if b.MaxCompletionTokens != nil {
		out.MaxTokens = int(*b.MaxCompletionTokens)
	}
	for i, m := range b.Messages {
		if i == 0 && m.Role == "system" {
			out.System = m.Text()
			continue
		}
		nm := providers.Message{Role: providers.Role(m.Role), Content: m.Text(), ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			nm.ToolCalls = append(nm.ToolCalls, providers.ToolCall{ID: c.ID, Name: c.Function.Name, Args: json.RawMessage(c.Function.Arguments)})
		}
		out.Messages = append(out.Messages, nm)
	}
	for _, tool := range b.Tools {
		if tool.Type != "function" {
			t.Errorf("tool type %q, want function", tool.Type)
		}
		out.Tools = append(out.Tools, providers.ToolDef{Name: tool.Function.Name, Description: tool.Function.Description, Parameters: tool.Function.Parameters})
	}
	return out
}
